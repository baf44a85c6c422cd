// The control plane's service layer: the API the gRPC server will expose one to one. Every call
// but init and sign-in takes the caller's session token; every call is authorised by one check
// (authorize in the .cpp) and every decision, allowed or denied, is appended to the audit log in
// the same database transaction as the change it allows. When the entry can not be written the
// change is rolled back and the caller gets the error (fail closed).
#pragma once

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/audit/bundle.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/store.h"
#include "sealtrain/base/result.h"
#include "sealtrain/core/database.h"
#include "sealtrain/core/datasets.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/secret_bytes.h"
#include "sealtrain/crypto/signing.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sealtrain::core {

struct ControlPlaneOptions {
    // libsodium's interactive level; never below crypto::kArgon2Floor.
    crypto::Argon2Params passwordHashing = crypto::kArgon2Floor;
    int maxFailedSignIns = 5;                // lockout starts at this many failures in a row
    std::chrono::seconds lockout{30};        // doubled for every failure past the limit
    std::chrono::seconds maxLockout{3600};   // the back-off's ceiling
    std::chrono::seconds sessionIdle{900};   // a session unused this long expires
    std::chrono::seconds sessionMax{43200};  // and every session expires this long after sign-in
    std::chrono::seconds maxBreakGlass{14400};
    std::string totpIssuer = "Sealtrain";
};

// Shown once to the person enrolling: the otpauth URI holds the TOTP secret.
struct Enrollment {
    std::string user;
    std::string otpauthUri;
};

struct RoleInfo {
    std::string name;
    bool builtin = false;
    std::vector<std::string> permissions;
};

struct SessionInfo {
    std::string id;  // "s<row>", as audit entries name it
    std::string user;
    std::int64_t created = 0;   // Unix seconds
    std::int64_t lastUsed = 0;  // Unix seconds
    bool revoked = false;
    bool expired = false;  // idle or past its absolute limit
};

struct UserInfo {
    std::string name;
    bool disabled = false;
    std::vector<std::string> grants;  // "role" or "role@project", "!" suffix for break-glass
};

class ControlPlane final {
public:
    // `database`, `store`, `signingKey`, `auditKey` (may be null) and `clock` must outlive the
    // control plane. `store` is normally a SqlAuditStore over `database`.
    [[nodiscard]] static Result<std::unique_ptr<ControlPlane>>
    open(Database& database, audit::AuditStore& store, const crypto::SigningKey& signingKey,
         const audit::AuditKey* auditKey, const audit::Clock& clock,
         ControlPlaneOptions options = {}, audit::LogOptions logOptions = {});

    ControlPlane(const ControlPlane&) = delete;
    ControlPlane& operator=(const ControlPlane&) = delete;
    ~ControlPlane();

    // Creates the default roles and the first admin; refused once any user exists.
    [[nodiscard]] Result<Enrollment> init(const std::string& adminName,
                                          const crypto::SecretBytes& password);

    // Password and TOTP code; returns a new session token (only its SHA-256 is stored).
    [[nodiscard]] Result<std::string> signIn(const std::string& name,
                                             const crypto::SecretBytes& password,
                                             const std::string& totpCode);
    [[nodiscard]] Result<void> signOut(const std::string& session);

    [[nodiscard]] Result<Enrollment> createUser(const std::string& session, const std::string& name,
                                                const crypto::SecretBytes& password);
    // Disabling revokes the user's sessions. The last admin can not be disabled.
    [[nodiscard]] Result<void> disableUser(const std::string& session, const std::string& name);
    [[nodiscard]] Result<void> enableUser(const std::string& session, const std::string& name);
    // New password and a new TOTP secret; clears the lockout and revokes sessions.
    [[nodiscard]] Result<Enrollment> resetUser(const std::string& session, const std::string& name,
                                               const crypto::SecretBytes& password);
    [[nodiscard]] Result<void> revokeSessions(const std::string& session, const std::string& name);
    // Every session, newest first (session.manage).
    [[nodiscard]] Result<std::vector<SessionInfo>> listSessions(const std::string& session);
    [[nodiscard]] Result<std::vector<UserInfo>> listUsers(const std::string& session);

    // A custom role; a role may not mix identity administration with data or job permissions.
    [[nodiscard]] Result<void> createRole(const std::string& session, const std::string& name,
                                          const std::vector<std::string>& permissions);
    [[nodiscard]] Result<void> deleteRole(const std::string& session, const std::string& name);
    // Every role with its permissions (role.manage).
    [[nodiscard]] Result<std::vector<RoleInfo>> listRoles(const std::string& session);

    // `project` empty: global.
    [[nodiscard]] Result<void> grantRole(const std::string& session, const std::string& user,
                                         const std::string& role, const std::string& project);
    [[nodiscard]] Result<void> revokeRole(const std::string& session, const std::string& user,
                                          const std::string& role, const std::string& project);
    // A time-limited grant for an emergency: needs a reason, expires by itself, and every audit
    // entry its holder makes while it lasts is flagged `break_glass`.
    [[nodiscard]] Result<void> grantBreakGlass(const std::string& session, const std::string& user,
                                               const std::string& role, const std::string& project,
                                               const std::string& reason,
                                               std::chrono::seconds duration);

    // Separation of duties: a submission (a job spec, a promotion) is approved by someone else,
    // and an approval counts only for the exact content (its SHA-256) that was approved.
    [[nodiscard]] Result<std::int64_t> submit(const std::string& session, const std::string& kind,
                                              const std::string& name, const std::string& project,
                                              const crypto::Sha256Digest& contentHash);
    // An edit changes the hash and so voids every earlier approval.
    [[nodiscard]] Result<void> editSubmission(const std::string& session, std::int64_t id,
                                              const crypto::Sha256Digest& contentHash);
    [[nodiscard]] Result<void> approve(const std::string& session, std::int64_t id,
                                       const crypto::Sha256Digest& contentHash);
    // True when someone other than the submitter approved the current content.
    [[nodiscard]] Result<bool> isApproved(const std::string& session, std::int64_t id);

    // Committed entries from `first` (audit.read); the read itself is audited.
    [[nodiscard]] Result<std::vector<audit::Entry>>
    readAudit(const std::string& session, std::uint64_t first, std::uint64_t count);

    // An export bundle (audit/bundle.h) of the entries `filter` selects, under a head signed for
    // it (audit.export); the export itself is audited first, so the bundle shows it.
    [[nodiscard]] Result<std::string> exportAudit(const std::string& session,
                                                  const audit::ExportFilter& filter);

    [[nodiscard]] const audit::AuditLog& auditLog() const noexcept { return *log_; }
    // For signing heads (LocalPlatform::finish); appending goes through the calls above.
    [[nodiscard]] audit::AuditLog& auditLog() noexcept { return *log_; }

    // --- Datasets (issue #6; core/control_plane_datasets.cpp, docs/operations/datasets.md) ---
    // A dataset reference is its id ("sha256:…"), NAME (the latest version) or NAME@VERSION.

    // dataset.import. Checks the permission first (a refusal is audited and touches no file),
    // imports into request.datasetsRoot (dataset/import.h: a failed import leaves nothing),
    // signs the manifest with `platformKey` (manifest.sig beside it) and registers the dataset
    // as the next version of its name, linked to the previous one, with a read grant for its
    // creator; the row and its audit entry commit together, and when they can not the folder is
    // removed. A failed import is audited too. AlreadyExists when the sources and settings are
    // those of the latest version.
    [[nodiscard]] Result<DatasetImported> importDataset(const std::string& session,
                                                        const DatasetImportRequest& request,
                                                        dataset::Tokenizer& tokenizer,
                                                        const crypto::Kek& kek,
                                                        const crypto::SigningKey& platformKey);
    // dataset.read. Stewards (dataset.import or dataset.grant) see every dataset; anyone else
    // only those they hold a read grant on. Newest first within a name.
    [[nodiscard]] Result<std::vector<DatasetInfo>> listDatasets(const std::string& session);
    [[nodiscard]] Result<DatasetInfo> showDataset(const std::string& session,
                                                  const std::string& reference);
    // dataset.grant: lets `user` read one dataset (one version); audited.
    [[nodiscard]] Result<void> grantDatasetRead(const std::string& session,
                                                const std::string& reference,
                                                const std::string& user);
    [[nodiscard]] Result<void> revokeDatasetRead(const std::string& session,
                                                 const std::string& reference,
                                                 const std::string& user);
    // The read-key release check: whoever hands the datasets KEK to a reader (the trainer
    // launcher, `dataset verify`) calls this first and hands it over only on success. Needs
    // dataset.read and a read grant on the dataset; audited either way, with `purpose`.
    [[nodiscard]] Result<DatasetInfo> authorizeDatasetRead(const std::string& session,
                                                           const std::string& reference,
                                                           const std::string& purpose);
    // --- end of datasets ----------------------------------------------------------------------

    struct Caller;
    struct Request;

private:
    ControlPlane(Database& database, const audit::AuditKey* auditKey, const audit::Clock& clock,
                 ControlPlaneOptions options, std::unique_ptr<audit::AuditLog> log);

    using Body = std::function<Result<void>(const Caller&, audit::EntryDraft&)>;
    [[nodiscard]] Result<void> perform(const std::string& session, const Request& request,
                                       const Body& body);
    [[nodiscard]] Result<Caller> authenticate(const std::string& session);
    [[nodiscard]] Result<void> authorize(const Caller& caller, std::string_view permission,
                                         const std::string& project);
    // Whether `caller` may import datasets or grant reads on them (a data steward).
    [[nodiscard]] bool isDatasetSteward(const Caller& caller);
    [[nodiscard]] Result<void> recordRefusal(const audit::Actor& actor, const Request& request,
                                             audit::Outcome outcome, const Error& error,
                                             bool breakGlass);
    [[nodiscard]] Result<void> appendEntry(Transaction& transaction,
                                           const audit::EntryDraft& draft);
    [[nodiscard]] Result<Enrollment> storeNewCredentials(std::int64_t userId,
                                                         const std::string& name,
                                                         const crypto::SecretBytes& password);
    [[nodiscard]] Result<void> requireAnotherAdmin(std::int64_t userId, const std::string& what);
    [[nodiscard]] Result<void> requireSeparateOperator(std::int64_t userId, const std::string& user,
                                                       const std::string& role);
    [[nodiscard]] std::int64_t now() const;

    Database& database_;
    const audit::AuditKey* auditKey_;
    const audit::Clock& clock_;
    ControlPlaneOptions options_;
    std::unique_ptr<audit::AuditLog> log_;
};

}  // namespace sealtrain::core
