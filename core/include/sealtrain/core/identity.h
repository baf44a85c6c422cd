// Identity: the people who use the control plane. The first admin (init), users with an
// Argon2id password and a TOTP second factor, sign-in with lockout and back-off, and sessions
// that expire when idle and at an absolute limit (docs/operations/access-control.md). Every
// call but init and signIn takes the caller's session and goes through the audited transaction.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/control_plane_options.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sealtrain::core {

class Access;
class AuditedTransactions;
class Database;

// Shown once to the person enrolling: the otpauth URI holds the TOTP secret.
struct Enrollment {
    std::string user;
    std::string otpauthUri;
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

// The id of the user `name`; NotFound, in one sentence, when there is none. For the services
// whose calls name a user (access, datasets).
[[nodiscard]] Result<std::int64_t> userIdByName(const Database& database, const std::string& name);

class Identity final {
public:
    // `gate`, `access` and `options` must outlive this object.
    Identity(AuditedTransactions& gate, const Access& access, const ControlPlaneOptions& options);

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

private:
    // A new password hash and TOTP secret for the user `userId`; clears the lockout.
    [[nodiscard]] Result<Enrollment> storeNewCredentials(std::int64_t userId,
                                                         const std::string& name,
                                                         const crypto::SecretBytes& password);

    AuditedTransactions& gate_;
    Database& database_;
    const Access& access_;
    const ControlPlaneOptions& options_;
};

}  // namespace sealtrain::core
