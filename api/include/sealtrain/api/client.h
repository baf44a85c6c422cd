// The client library of the control plane's gRPC contract (docs/api.md), which sealtrainctl,
// the GUI and the worker share. Every call returns a Result whose error is the server's one
// sentence, or one of our own for a transport failure. No gRPC type crosses this header.
#pragma once

#include "sealtrain/api/client_views.h"
#include "sealtrain/api/compliance_views.h"
#include "sealtrain/api/job_views.h"
#include "sealtrain/api/registry_views.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::v1 {
class GrantReply;
}  // namespace sealtrain::v1

namespace sealtrain::api {

// Where the control plane is and whom to trust there.
struct Endpoint {
    std::string address;                   // "unix:/path" or "host:port"
    std::string serverName = "localhost";  // a name the server's certificate must carry
    std::string caCertificatePem;          // the platform CA (pinned at connect)
    // Keepalive pings (docs/api.md, "Transport"), for a long-lived client such as
    // sealtrain-worker. Off for one-shot commands: the ping timer can outlive a process that
    // exits right after its call, before gRPC has freed the connection.
    bool keepalive = false;
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
    // One sentence each, for every user to see (four eyes not guaranteed).
    std::vector<std::string> warnings;
    std::int64_t idleExpiresUnix = 0;  // if unused from now on (may be up to a minute early)
    std::int64_t absoluteExpiresUnix = 0;
    std::int64_t idleTimeoutSeconds = 0;
    // Effective permissions by project ("" for global grants, which hold everywhere).
    std::map<std::string, std::vector<std::string>> permissions;
    bool breakGlass = false;

    // Whether a grant gives `permission` globally, or in `project` when one is named; empty
    // `project`: in any project. For showing screens; the server still decides every call.
    [[nodiscard]] bool holds(const std::string& permission, const std::string& project = {}) const;
};

struct UserSummary {
    std::string name;
    bool disabled = false;
    std::vector<std::string> grants;
};

struct SessionSummary {
    std::string id;  // "s<n>"
    std::string user;
    std::int64_t createdUnix = 0;
    std::int64_t lastUsedUnix = 0;
    bool revoked = false;
    bool expired = false;  // idle or past its absolute limit
};

struct RoleSummary {
    std::string name;
    bool builtin = false;
    std::vector<std::string> permissions;
};

// What a reset did: took effect (`resetCode`, the one-time code to hand over out of band), or
// waits for a second admin's approval (`pending`, no code).
struct ResetResult {
    std::string user;
    bool pending = false;
    std::string resetCode;
    std::int64_t codeExpires = 0;  // Unix seconds: the code stops working then
};

// A new account's one-time enrolment code ("rc_…") and when it stops working.
struct NewUserResult {
    std::string enrolmentCode;
    std::int64_t codeExpires = 0;
};

// What a change that may wait for a second admin did: `pending`, it waits for another admin's
// same call (docs/operations/access-control.md).
struct ChangeResult {
    bool pending = false;
};

struct DatasetSummary {
    std::string id;
    std::string name;
    std::int64_t version = 0;
    std::string classification;
    std::uint64_t records = 0;
    std::uint64_t tokens = 0;
};

struct DatasetCheckResult {
    DatasetSummary dataset;
    std::uint64_t shards = 0;
    std::uint64_t tokens = 0;  // decrypted and authenticated
    std::string signer;
};

struct SplitCounts {
    std::uint64_t records = 0;
    std::uint64_t tokens = 0;
    std::uint64_t shards = 0;
};

// What a dataset's signed manifest says, without the source names.
struct ManifestFacts {
    std::string tokenizer;
    std::string inputFormat;
    SplitCounts train;
    SplitCounts validation;
    std::map<std::string, std::uint64_t> counts;
    std::uint64_t sources = 0;
};

struct DatasetDetails {
    DatasetSummary dataset;
    std::string parent;
    std::string creator;
    std::string signer;
    std::int64_t createdUnix = 0;
    std::vector<std::string> readers;
    std::optional<ManifestFacts> manifest;  // nullopt when the server could not read it
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

// An audit export: the bundle, and what its reader must know of it (a single admin: "Four eyes is
// not guaranteed: …").
struct AuditExport {
    std::string bundle;
    std::optional<std::string> warning;
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

// One event of a job watch (Jobs.WatchJob): the job (first, and at each change), a metrics
// line, a log line, or a checkpoint recorded.
struct JobWatchEvent {
    enum class Kind { Job, Metrics, Log, Checkpoint };
    Kind kind = Kind::Job;
    JobSummary job;                // Kind::Job
    std::string line;              // Kind::Metrics (JSON) or Kind::Log (text)
    JobCheckpointView checkpoint;  // Kind::Checkpoint
};

// Lets another thread end a long call at once (a watch blocks reading while its job is quiet;
// the GUI ends it when another job is chosen or the window closes). cancel() may come before,
// during or after the call; the call then returns what it had.
namespace client_internal {
class CancelScope;
}

// One page of a list that grows without bound (sessions, jobs), newest first.
template <typename Item>
struct Page {
    std::vector<Item> items;
    std::int64_t nextBefore = 0;  // where the next page starts; 0: no more
};

// Every item of a paged list: `page(before)` from the newest until a page says there is no
// more; Internal when a page does not move on (a server's bug), rather than a loop.
template <typename Item, typename PageCall>
[[nodiscard]] Result<std::vector<Item>> allPages(const PageCall& page)
{
    std::vector<Item> all;
    std::int64_t before = 0;
    for (;;) {
        Result<Page<Item>> got = page(before);
        if (!got)
            return got.error();
        all.insert(all.end(), std::make_move_iterator(got->items.begin()),
                   std::make_move_iterator(got->items.end()));
        if (got->nextBefore == 0)
            return all;
        if (before != 0 && got->nextBefore >= before)
            return Error(ErrorCode::Internal,
                         "The control plane sent a page that does not move on; report this bug.");
        before = got->nextBefore;
    }
}

class CallCancel final {
public:
    void cancel();
    [[nodiscard]] bool cancelled() const;

private:
    friend class client_internal::CancelScope;
    // The running call's grpc::ClientContext (no gRPC type crosses this header).
    void attach(void* context);
    void detach();

    mutable std::mutex lock_;
    void* context_ = nullptr;
    bool cancelled_ = false;
};

struct EnrollTokenGrant {
    std::string token;  // shown once; hand it to the node's operator out of band
    std::int64_t expiresUnix = 0;
};

// An enrolled worker as the control plane reports it (docs/api.md, "Workers").
struct WorkerSummary {
    std::string name;
    std::string pool;
    std::string state;  // active, revoked
    std::string serial;
    std::int64_t enrolledUnix = 0;
    std::int64_t lastSeenUnix = 0;
    std::int64_t currentJob = 0;
    std::string inventoryJson;
    std::string signingPublicKeyPem;    // checkpoints it signed verify with it
    bool interconnectDeclared = false;  // an operator declared its interconnect encrypted
};

// What a worker sends to enroll: its CSR (P-256 TLS key), its Ed25519 public key (checkpoints)
// and its X25519 public key (job keys are sealed to it).
struct WorkerEnrollment {
    std::string token;
    std::string csrPem;
    std::string signingPublicKeyPem;
    std::vector<std::uint8_t> boxPublicKey;
    std::string inventoryJson;
};

struct WorkerEnrolled {
    std::string certificatePem;
    std::string worker;
    std::string pool;
};

struct HeartbeatAnswer {
    std::vector<std::int64_t> stopJobs;
    std::int64_t intervalMs = 0;
};

// A job handed to this worker (TakeJob): its keys are sealed to the worker's X25519 key.
struct JobAssignment {
    std::int64_t job = 0;
    std::int64_t attempt = 0;
    std::string runId;
    std::string datasetId;
    std::vector<std::string> trainerArguments;
    std::vector<std::uint8_t> sealedKeys;
    std::string manifestsPublicKeyPem;
    bool resume = false;
    std::int64_t gpus = 0;         // GPUs per node
    std::int64_t chargedGpus = 0;  // what the attempt's wall-clock hours are multiplied by
    std::string checkpointKek;
    std::int64_t nodes = 1;
    std::int64_t ranksPerNode = 1;
    bool startsFromModel = false;  // fetchInitModel, then --init-from (unless resuming)
};

struct MetricsReport {
    std::int64_t job = 0;
    std::int64_t attempt = 0;
    std::vector<std::string> metricsLines;
    std::vector<std::string> logLines;
    std::int64_t firstLogLine = 1;
    double gpuHours = 0.0;
};

struct GrantResult {
    bool pending = false;
};

struct UploadedCheckpoint {
    std::int64_t step = 0;
    std::string sealedSha256;
};

// A KEK version of the data directory's keyring (docs/formats/keyring.md).
struct KekSummary {
    std::string id;
    std::uint32_t version = 0;
    std::string state;    // active, decrypt-only, retired
    std::string created;  // RFC 3339 UTC
    std::string retired;  // RFC 3339 UTC, when retired
};

// What a re-wrap did: a line per object re-wrapped.
struct RewrapOutcome {
    std::uint32_t rewrapped = 0;
    std::vector<std::string> lines;
};

// The platform's public keys, one per purpose.
struct SigningKeys {
    std::string auditPem;
    std::string manifestsPem;
    std::string checkpointsPem;
    std::string registryPem;  // the model registry's statements
    // The artefact root's certificate (issue #48): model exports chain to it, and nothing else
    // does; what a reviewer pins for `model_signing verify certificate`.
    std::string artefactRootPem;
};

// A backup received (ControlClient::backup): the archive's facts as the control plane sent them.
struct BackupReceived {
    std::uint64_t head = 0;  // the audit entries it holds
    std::string sha256;      // of the archive, hex; checked against the bytes received
    std::uint64_t bytes = 0;
    std::uint64_t files = 0;
    std::uint64_t referenced = 0;  // files named by digest only
    std::uint64_t referencedBytes = 0;
};

// Holds gRPC's runtime for a client process's lifetime: one object in main, made before any
// channel and destroyed after the last. Its destructor tears the runtime down on this thread and
// waits (up to a few seconds) for any teardown gRPC had handed to one of its own threads, so that
// the process does not exit while a connection's TLS state is still being freed (LeakSanitizer
// saw `sealtrainctl connect` exit mid-teardown under load; docs/development.md).
class GrpcRuntime final {
public:
    GrpcRuntime();
    GrpcRuntime(const GrpcRuntime&) = delete;
    GrpcRuntime& operator=(const GrpcRuntime&) = delete;
    ~GrpcRuntime();
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
    // One page of the sessions, newest first (session.manage): `before` 0 for the newest, then
    // the previous page's nextBefore; `limit` 1 to 1000 (0: 200).
    [[nodiscard]] Result<Page<SessionSummary>> listSessionsPage(std::int64_t before,
                                                                std::uint32_t limit);
    // Every session, newest first, page by page (each page one audited call).
    [[nodiscard]] Result<std::vector<SessionSummary>> listSessions();
    // Ends every session of `user`; their client certificates are refused from then on.
    // Returns how many certificates that revoked.
    [[nodiscard]] Result<std::uint32_t> revokeSessions(const std::string& user);
    // Every user by name, page by page (each page one audited call; docs/api.md, "Small lists").
    [[nodiscard]] Result<std::vector<UserSummary>> listUsers();
    // The new user's one-time enrolment code ("rc_…"), to hand over once: with it they set their
    // own password and receive their TOTP secret (completeReset).
    [[nodiscard]] Result<NewUserResult> createUser(const std::string& name);
    // `pending`: the user is one of two admins, and the other admin must make the same call.
    [[nodiscard]] Result<ChangeResult> disableUser(const std::string& name);
    [[nodiscard]] Result<void> enableUser(const std::string& name);
    // Takes away the user's password and TOTP secret; the result holds the one-time reset code,
    // or says that the reset waits for a second admin (approveReset).
    [[nodiscard]] Result<ResetResult> resetUser(const std::string& name);
    [[nodiscard]] Result<ResetResult> approveReset(const std::string& name);
    // The caller's own new password; returns how many of their other sessions ended. A wrong
    // current password ends this session too (Unauthenticated): sign in again to retry.
    [[nodiscard]] Result<std::uint32_t> changePassword(const crypto::SecretBytes& current,
                                                       const crypto::SecretBytes& next);
    // The caller's own new TOTP secret, in two calls: the password and a code from the current
    // secret start it (a wrong one ends this session, Unauthenticated), then a code from the
    // new secret confirms it and ends the user's other sessions, returning how many.
    [[nodiscard]] Result<PendingTotpView> startTotpChange(const crypto::SecretBytes& password,
                                                          const std::string& currentCode);
    [[nodiscard]] Result<std::uint32_t> confirmTotpChange(const std::string& newCode);
    // Needs no session: the reset user sets their new password with the one-time code and gets
    // their new TOTP secret as an otpauth:// URI.
    [[nodiscard]] Result<std::string> completeReset(const std::string& user,
                                                    const std::string& resetCode,
                                                    const crypto::SecretBytes& password);
    // `project` empty: a global grant.
    // `pending`: the role carries a separated duty and waits for another admin's same call.
    [[nodiscard]] Result<GrantResult> grantRole(const std::string& user, const std::string& role,
                                                const std::string& project);
    // `pending`: taking admin from one of two admins waits for the other admin's same call.
    [[nodiscard]] Result<ChangeResult> revokeRole(const std::string& user, const std::string& role,
                                                  const std::string& project);
    // An emergency grant that expires after `duration`; every action under it is flagged.
    [[nodiscard]] Result<void> grantBreakGlass(const std::string& user, const std::string& role,
                                               const std::string& project,
                                               const std::string& reason,
                                               std::chrono::seconds duration);
    // Every role, page by page, built-in ones first.
    [[nodiscard]] Result<std::vector<RoleSummary>> listRoles();
    // `pending`: the role gives a separated duty and waits for another admin's same call.
    [[nodiscard]] Result<ChangeResult> createRole(const std::string& name,
                                                  const std::vector<std::string>& permissions);
    [[nodiscard]] Result<void> deleteRole(const std::string& name);
    // Every dataset the caller may read, page by page, by name and newest version first.
    [[nodiscard]] Result<std::vector<DatasetSummary>> listDatasets();
    // `reference`: the id, NAME (the latest version) or NAME@VERSION.
    [[nodiscard]] Result<DatasetDetails> showDataset(const std::string& reference);
    // The control plane's check of a dataset the caller may read: every shard decrypted there.
    [[nodiscard]] Result<DatasetCheckResult> verifyDataset(const std::string& reference);
    [[nodiscard]] Result<void> grantRead(const std::string& reference, const std::string& user);
    [[nodiscard]] Result<void> revokeRead(const std::string& reference, const std::string& user);
    // Streams `files` to the control plane, which screens, tokenizes, seals and signs them as a
    // new dataset (or the next version of one); the client never holds a key. `cancel` ends the
    // upload at once; the control plane then keeps nothing of it.
    [[nodiscard]] Result<ImportedDataset> importDataset(const ImportSettings& settings,
                                                        const std::vector<UploadFile>& files,
                                                        const UploadProgress& progress,
                                                        CallCancel* cancel = nullptr);
    // An audit bundle (docs/formats/audit.md) of the entries `selection` selects.
    [[nodiscard]] Result<std::string> exportAuditBundle(const AuditSelection& selection);
    // The same, with the control plane's warning about it.
    [[nodiscard]] Result<AuditExport> exportAudit(const AuditSelection& selection);
    [[nodiscard]] Result<SigningKeys> signingKeys();
    // audit.read and audit.export: the compliance report with its signed evidence bundle
    // (client_compliance.cpp; compliance.proto).
    [[nodiscard]] Result<ComplianceReportView>
    complianceReport(const CompliancePeriodRequest& period = {});
    // platform.backup: the control plane's encrypted, signed archive of itself, written to
    // `out` (atomically: nothing is left at `out` when the call fails; an existing file is
    // refused). `referenceOver`: 0 for the control plane's default. `progress` sees the bytes
    // received and the total (client_backup.cpp).
    [[nodiscard]] Result<BackupReceived>
    backup(const std::filesystem::path& out, std::uint64_t referenceOver,
           const std::function<void(std::uint64_t received, std::uint64_t total)>& progress = {});
    // One page of decoded audit entries (audit.read; client_views.cpp).
    [[nodiscard]] Result<AuditPageView> queryAudit(const AuditQueryOptions& options);
    // The control plane's verification of its live log (audit.read).
    [[nodiscard]] Result<LogVerificationView> verifyAuditLog();
    // The newest signed head as a signed note (audit.read; one row, unlike verifyAuditLog), for
    // the caller to check with signingKeys().auditPem; empty before the first head.
    [[nodiscard]] Result<std::string> newestAuditHead();
    // The control plane's version, the contract's, its session lifetimes and limits.
    [[nodiscard]] Result<ServerInfoView> serverInfo();
    // Every permission the control plane knows, with what it lets one do.
    [[nodiscard]] Result<std::vector<PermissionView>> listPermissions();
    // The resets waiting for a second admin, oldest first (user.manage).
    [[nodiscard]] Result<std::vector<PendingResetView>> listPendingResets();

    // The data directory's keyring, changed by the control plane while it serves (keyring.manage;
    // client_keyring.cpp). These calls may take minutes (a re-key, a re-wrap of every dataset).
    // Every KEK version, page by page, by id and version.
    [[nodiscard]] Result<std::vector<KekSummary>> listKeks();
    // The new active version; rotating `database` also re-keys the database.
    [[nodiscard]] Result<std::uint32_t> rotateKek(const std::string& id);
    [[nodiscard]] Result<RewrapOutcome> rewrapObjects(const std::string& id);
    [[nodiscard]] Result<void> retireKek(const std::string& id, std::uint32_t version);
    [[nodiscard]] Result<void> changePassphrase(const crypto::SecretBytes& current,
                                                const crypto::SecretBytes& next);
    // Jobs: each returns the job as it is after the call.
    [[nodiscard]] Result<JobSummary> submitJob(const std::string& specText);
    [[nodiscard]] Result<JobSummary> editJob(std::int64_t id, const std::string& specText);
    [[nodiscard]] Result<JobSummary> vetJob(std::int64_t id);
    [[nodiscard]] Result<JobSummary> approveJob(std::int64_t id, const std::string& specSha256);
    [[nodiscard]] Result<JobSummary> rejectJob(std::int64_t id, const std::string& reason);
    [[nodiscard]] Result<JobSummary> cancelJob(std::int64_t id, const std::string& reason);
    [[nodiscard]] Result<JobSummary> showJob(std::int64_t id);
    // One page of the jobs the caller may see, newest first (as listSessionsPage; a page may
    // hold fewer than `limit` and still have a next one).
    [[nodiscard]] Result<Page<JobSummary>> listJobsPage(std::int64_t before, std::uint32_t limit);
    // Every job the caller may see, newest first, page by page.
    [[nodiscard]] Result<std::vector<JobSummary>> listJobs();
    // Runs an approved job on the control plane (its submitter): metrics as Train's.
    [[nodiscard]] Result<TrainOutcome>
    runJob(std::int64_t id, const std::function<void(const std::string& line)>& onMetrics);
    // Has the control plane train on `dataset` with `trainerArguments` (hyper-parameters only);
    // each metrics line (JSON, no newline) goes to `onMetrics` as the trainer writes it.
    [[nodiscard]] Result<TrainOutcome>
    train(const std::string& dataset, const std::vector<std::string>& trainerArguments,
          const std::function<void(const std::string& line)>& onMetrics);
    // The job's metrics lines (`logs` false) or log lines, from `fromStep`.
    [[nodiscard]] Result<std::vector<std::string>> jobMetrics(std::int64_t id, bool logs,
                                                              std::int64_t fromStep);
    // Follows the job (audited once): each event to `onEvent`, which returns false to stop
    // watching. Returns the job as last seen: when it has ended and its last line was handed
    // over, or when `onEvent` stopped. A watch has no deadline of its own (a job may run for
    // days); it ends with the session.
    [[nodiscard]] Result<JobSummary>
    watchJob(std::int64_t id, const std::function<bool(const JobWatchEvent&)>& onEvent,
             CallCancel* cancel = nullptr);
    // The job policy and the caller's projects' budget use (client_views.cpp).
    [[nodiscard]] Result<PolicySummary> showPolicy();
    // The checkpoints recorded for job `id`, oldest first (client_views.cpp).
    [[nodiscard]] Result<std::vector<JobCheckpointView>> listCheckpoints(std::int64_t id);
    // Job `id`'s checkpoint at `step` (0: the newest), sealed, with its DSSE envelope, into
    // `folder` (which must exist and be empty); the two files' paths.
    [[nodiscard]] Result<std::vector<std::filesystem::path>>
    downloadCheckpoint(std::int64_t id, std::int64_t step, const std::filesystem::path& folder);
    // Runs (client_runs.cpp): one page of the runs the caller may see, newest first; all of
    // them; one run whole; a page of its history from after `afterStep` (1 to 20000 steps); the
    // whole history, page by page.
    [[nodiscard]] Result<Page<RunView>> listRunsPage(std::int64_t before, std::uint32_t limit);
    [[nodiscard]] Result<std::vector<RunView>> listRuns();
    [[nodiscard]] Result<RunView> showRun(std::int64_t id);
    [[nodiscard]] Result<std::pair<std::vector<RunPointView>, std::int64_t>>
    runMetricsPage(std::int64_t id, std::int64_t afterStep, std::uint32_t limit);
    [[nodiscard]] Result<std::vector<RunPointView>> runMetrics(std::int64_t id);
    // The model registry (registry.proto; docs/registry.md): register a job's recorded
    // checkpoint (`step` 0: its newest) as a model's next version; the models one may read; one
    // model whole; ask for, approve (naming the version's digest) or reject a promotion; a
    // version's lineage document (NAME, NAME@VERSION or NAME@ALIAS).
    [[nodiscard]] Result<ModelVersionView> registerModel(const std::string& name,
                                                         const std::string& description,
                                                         std::int64_t job, std::int64_t step);
    // A Hugging Face GPT-2 folder as the next version of a model, a base model to fine-tune
    // from (model.register in the project); `progress` hears of the bytes sent.
    [[nodiscard]] Result<ModelVersionView> importModel(const ModelImportRequest& request,
                                                       const UploadProgress& progress = {});
    [[nodiscard]] Result<std::vector<ModelSummaryView>> listModels();
    [[nodiscard]] Result<ModelView> showModel(const std::string& name);
    [[nodiscard]] Result<PromotionView> requestPromotion(const std::string& name,
                                                         std::int64_t version,
                                                         const std::string& alias,
                                                         const std::string& reason);
    [[nodiscard]] Result<PromotionView> approvePromotion(std::int64_t id,
                                                         const std::string& digest);
    [[nodiscard]] Result<PromotionView> rejectPromotion(std::int64_t id, const std::string& reason);
    [[nodiscard]] Result<std::string> modelLineage(const std::string& reference);
    // Exports: ask for one of NAME@VERSION; approve it (the version's digest) or reject it; and,
    // once approved, receive the folder into `folder` (made by the call; it must not exist): its
    // files are written into a temporary sibling that takes the name only when all arrived.
    // Returns the folder's digest.
    [[nodiscard]] Result<ModelExportView> requestExport(const std::string& reference,
                                                        const std::string& reason);
    [[nodiscard]] Result<ModelExportView> approveExport(std::int64_t id, const std::string& digest);
    [[nodiscard]] Result<ModelExportView> rejectExport(std::int64_t id, const std::string& reason);
    [[nodiscard]] Result<std::string> downloadExport(std::int64_t id,
                                                     const std::filesystem::path& folder);
    // Workers, for administrators: a one-time enrolment token, the list, revocation.
    [[nodiscard]] Result<EnrollTokenGrant> createEnrollToken(const std::string& worker,
                                                             const std::string& pool,
                                                             std::int64_t validSeconds);
    // Every worker, page by page, by name.
    [[nodiscard]] Result<std::vector<WorkerSummary>> listWorkers();
    // worker.enroll: declares the interconnect of the worker's nodes encrypted (or not).
    [[nodiscard]] Result<WorkerSummary> declareInterconnect(const std::string& worker,
                                                            bool encrypted);
    [[nodiscard]] Result<WorkerSummary> revokeWorker(const std::string& worker,
                                                     const std::string& reason);
    // The worker's own calls (sealtrain-worker): enrolment without a certificate, then every
    // other with the certificate it got.
    [[nodiscard]] Result<WorkerEnrolled> enrollWorker(const WorkerEnrollment& enrollment);
    // Whether the control plane refuses this client's certificate at the handshake (revoked,
    // or expired): a call without a certificate is answered, and the same call over this
    // client's channel, with its certificate, fails at the transport. False when that can not
    // be told (the control plane down or slow, the connection cut); a caller that acts on it
    // asks more than once.
    [[nodiscard]] bool certificateRefused();
    // `job` 0: no job; -1: taking one. A beat not answered within `timeout` fails (a worker
    // keeps it well under the control plane's --worker-timeout, so that it can try a new
    // connection before its job is given away).
    [[nodiscard]] Result<HeartbeatAnswer>
    heartbeat(const std::string& inventoryJson, std::int64_t job, std::int64_t attempt,
              std::chrono::milliseconds timeout = std::chrono::seconds(30));
    [[nodiscard]] Result<std::optional<JobAssignment>> takeJob();
    // The job's sealed dataset files, or its checkpoint to resume from, into `folder` (which must
    // exist and be empty); the files' paths.
    [[nodiscard]] Result<std::vector<std::filesystem::path>>
    fetchDataset(std::int64_t job, std::int64_t attempt, const std::filesystem::path& folder);
    [[nodiscard]] Result<std::vector<std::filesystem::path>>
    fetchCheckpoint(std::int64_t job, std::int64_t attempt, const std::filesystem::path& folder);
    // A fine-tuning job's sealed starting model, into `folder`.
    [[nodiscard]] Result<std::vector<std::filesystem::path>>
    fetchInitModel(std::int64_t job, std::int64_t attempt, const std::filesystem::path& folder);
    // Whether the job must stop.
    [[nodiscard]] Result<bool> reportMetrics(const MetricsReport& report);
    [[nodiscard]] Result<UploadedCheckpoint>
    uploadCheckpoint(std::int64_t job, std::int64_t attempt, const std::filesystem::path& sealed,
                     const std::filesystem::path& envelope);
    [[nodiscard]] Result<JobSummary> finishJob(std::int64_t job, std::int64_t attempt,
                                               bool succeeded, double gpuHours,
                                               const std::string& reason);

    // Text from a run's checkpoint (`step` 0: its newest). `cancel`, when given, abandons the
    // call from another thread (the control plane then stops the sampler).
    [[nodiscard]] Result<SampleOutcome> sample(const std::string& runId, std::uint64_t step,
                                               const std::vector<std::string>& samplerArguments,
                                               CallCancel* cancel = nullptr);
    // Text from a job's checkpoint, as a worker trained it (`step` 0: its newest).
    [[nodiscard]] Result<SampleOutcome> sampleJob(std::int64_t job, std::uint64_t step,
                                                  const std::vector<std::string>& samplerArguments,
                                                  CallCancel* cancel = nullptr);
    // Text from a registered model version (NAME, NAME@VERSION or NAME@ALIAS).
    [[nodiscard]] Result<SampleOutcome>
    sampleModel(const std::string& reference, const std::vector<std::string>& samplerArguments,
                CallCancel* cancel = nullptr);

private:
    struct State;
    explicit ControlClient(std::unique_ptr<State> state);
    [[nodiscard]] Result<void> changeGrant(const std::string& user, const std::string& role,
                                           const std::string& project, bool grant,
                                           sealtrain::v1::GrantReply& reply);
    [[nodiscard]] Result<ResetResult> changeReset(const std::string& name, bool approve);
    [[nodiscard]] Result<void> changeReadGrant(const std::string& reference,
                                               const std::string& user, bool grant);
    std::unique_ptr<State> state_;
};

}  // namespace sealtrain::api
