// The control plane's service layer: the API the gRPC server will expose one to one. Every call
// but init and sign-in takes the caller's session token; every call is authorised by one check
// (authorize in the .cpp) and every decision, allowed or denied, is appended to the audit log in
// the same database transaction as the change it allows. When the entry can not be written the
// change is rolled back and the caller gets the error (fail closed).
#pragma once

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/store.h"
#include "sealtrain/base/result.h"
#include "sealtrain/core/database.h"
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
    [[nodiscard]] Result<std::vector<UserInfo>> listUsers(const std::string& session);

    // A custom role; a role may not mix identity administration with data or job permissions.
    [[nodiscard]] Result<void> createRole(const std::string& session, const std::string& name,
                                          const std::vector<std::string>& permissions);
    [[nodiscard]] Result<void> deleteRole(const std::string& session, const std::string& name);

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

    [[nodiscard]] const audit::AuditLog& auditLog() const noexcept { return *log_; }

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
    [[nodiscard]] Result<void> recordRefusal(const audit::Actor& actor, const Request& request,
                                             audit::Outcome outcome, const Error& error,
                                             bool breakGlass);
    [[nodiscard]] Result<void> appendEntry(Transaction& transaction,
                                           const audit::EntryDraft& draft);
    [[nodiscard]] Result<Enrollment> storeNewCredentials(std::int64_t userId,
                                                         const std::string& name,
                                                         const crypto::SecretBytes& password);
    [[nodiscard]] Result<void> requireAnotherAdmin(std::int64_t userId, const std::string& what);
    [[nodiscard]] std::int64_t now() const;

    Database& database_;
    const audit::AuditKey* auditKey_;
    const audit::Clock& clock_;
    ControlPlaneOptions options_;
    std::unique_ptr<audit::AuditLog> log_;
};

}  // namespace sealtrain::core
