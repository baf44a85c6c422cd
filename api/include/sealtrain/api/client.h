// The client library of the control plane's gRPC contract (docs/api.md), which sealtrainctl,
// the GUI and the worker share. Every call returns a Result whose error is the server's one
// sentence, or one of our own for a transport failure. No gRPC type crosses this header.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::api {

// Where the control plane is and whom to trust there.
struct Endpoint {
    std::string address;                   // "unix:/path" or "host:port"
    std::string serverName = "localhost";  // a name the server's certificate must carry
    std::string caCertificatePem;          // the platform CA (pinned at connect)
};

// A signed-in client's credential: its own key and the certificate the control plane issued
// for it. The key never leaves the client.
struct ClientIdentity {
    crypto::SecretBytes privateKeyPem;
    std::string certificatePem;
};

struct SignedIn {
    ClientIdentity identity;
    std::string sessionId;
    std::int64_t expiresUnix = 0;
};

struct WhoAmI {
    std::string user;
    std::string sessionId;
    std::int64_t expiresUnix = 0;
};

struct UserSummary {
    std::string name;
    bool disabled = false;
    std::vector<std::string> grants;
};

struct DatasetSummary {
    std::string id;
    std::string name;
    std::int64_t version = 0;
    std::string classification;
    std::uint64_t records = 0;
    std::uint64_t tokens = 0;
};

// What an upload asks the control plane to do with the files (docs/api.md, ImportDataset).
struct ImportSettings {
    std::string name;
    std::string format = "text-files";
    std::string field;
    std::string classification = "internal";
    std::string policy = "skip";
    bool redactPii = false;
    std::uint64_t maxRecordBytes = 0;  // 0: the server's default
    std::uint32_t validationBasisPoints = 100;
    std::uint64_t tokensPerShard = 0;  // 0: the server's default
    std::string gpt2VocabJson;         // both empty: byte-level tokens
    std::string gpt2MergesTxt;
};

// One file to upload: read from `path`, named `name` in the manifest and report.
struct UploadFile {
    std::filesystem::path path;
    std::string name;
    std::uint64_t size = 0;
};

struct ImportedDataset {
    DatasetSummary dataset;
    std::string parent;
    std::string signer;
    std::string reportJson;
};

// Bytes sent so far of the total; called as the upload goes and once at its end.
using UploadProgress = std::function<void(std::uint64_t sent, std::uint64_t total)>;

// The audit entries an export selects (audit/bundle.h's ExportFilter, without the audit layer).
struct AuditSelection {
    std::optional<std::uint64_t> fromTimeNs;
    std::optional<std::uint64_t> toTimeNs;
    std::string actor;
    std::string action;
    std::string targetKind;
    std::string targetId;
};

struct TrainOutcome {
    std::string runId;
    int exitCode = 0;  // the trainer's
    std::uint64_t checkpoints = 0;
};

struct SampleOutcome {
    std::string text;
    std::uint64_t step = 0;
};

// The platform's public keys, one per purpose.
struct SigningKeys {
    std::string auditPem;
    std::string manifestsPem;
    std::string checkpointsPem;
};

// The platform CA's certificate from the server at `address`, fetched before anything is
// trusted and returned only when its fingerprint (crypto::certificateFingerprint) is
// `fingerprint`; Unauthenticated, in one sentence, otherwise.
[[nodiscard]] Result<std::string> fetchPinnedCaCertificate(const std::string& address,
                                                           const std::string& serverName,
                                                           const std::string& fingerprint);

class ControlClient final {
public:
    // A channel to `endpoint` that presents `identity` when given (every call after sign-in),
    // or no client certificate (sign-in). Nothing is sent until the first call.
    [[nodiscard]] static Result<std::unique_ptr<ControlClient>>
    connect(const Endpoint& endpoint, const ClientIdentity* identity);

    ControlClient(const ControlClient&) = delete;
    ControlClient& operator=(const ControlClient&) = delete;
    ~ControlClient();

    // Makes a new P-256 key, sends its CSR with the credentials, and returns the key with the
    // certificate the control plane issued for the new session.
    [[nodiscard]] Result<SignedIn> signIn(const std::string& user,
                                          const crypto::SecretBytes& password,
                                          const std::string& totpCode);
    [[nodiscard]] Result<WhoAmI> whoAmI();
    // Ends the session; its certificate is refused from then on.
    [[nodiscard]] Result<void> signOut();
    [[nodiscard]] Result<std::vector<UserSummary>> listUsers();
    // The new user's otpauth:// URI (their TOTP secret), to hand over once.
    [[nodiscard]] Result<std::string> createUser(const std::string& name,
                                                 const crypto::SecretBytes& password);
    [[nodiscard]] Result<void> disableUser(const std::string& name);
    [[nodiscard]] Result<void> enableUser(const std::string& name);
    // `project` empty: a global grant.
    [[nodiscard]] Result<void> grantRole(const std::string& user, const std::string& role,
                                         const std::string& project);
    [[nodiscard]] Result<void> revokeRole(const std::string& user, const std::string& role,
                                          const std::string& project);
    [[nodiscard]] Result<std::vector<DatasetSummary>> listDatasets();
    // Streams `files` to the control plane, which screens, tokenizes, seals and signs them as a
    // new dataset (or the next version of one); the client never holds a key.
    [[nodiscard]] Result<ImportedDataset> importDataset(const ImportSettings& settings,
                                                        const std::vector<UploadFile>& files,
                                                        const UploadProgress& progress);
    // An audit bundle (docs/formats/audit.md) of the entries `selection` selects.
    [[nodiscard]] Result<std::string> exportAuditBundle(const AuditSelection& selection);
    [[nodiscard]] Result<SigningKeys> signingKeys();
    // Has the control plane train on `dataset` with `trainerArguments` (hyper-parameters only);
    // each metrics line (JSON, no newline) goes to `onMetrics` as the trainer writes it.
    [[nodiscard]] Result<TrainOutcome>
    train(const std::string& dataset, const std::vector<std::string>& trainerArguments,
          const std::function<void(const std::string& line)>& onMetrics);
    // Text from a run's checkpoint (`step` 0: its newest).
    [[nodiscard]] Result<SampleOutcome> sample(const std::string& runId, std::uint64_t step,
                                               const std::vector<std::string>& samplerArguments);

private:
    struct State;
    explicit ControlClient(std::unique_ptr<State> state);
    [[nodiscard]] Result<void> changeGrant(const std::string& user, const std::string& role,
                                           const std::string& project, bool grant);
    std::unique_ptr<State> state_;
};

}  // namespace sealtrain::api
