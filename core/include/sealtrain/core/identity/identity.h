// Identity: the people who use the control plane. The first admin (init), users with an
// Argon2id password and a TOTP second factor, resets that the user completes (and that a second
// admin approves for an admin), sign-in with lockout and back-off, and sessions that expire when
// idle and at an absolute limit (docs/operations/access-control.md). Every call but init, signIn
// and completeReset takes the caller's session and goes through the audited transaction.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/access/access.h"
#include "sealtrain/core/access/users.h"
#include "sealtrain/core/control_plane_options.h"
#include "sealtrain/core/store/call_origin.h"
#include "sealtrain/core/store/list_page.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <cstdint>
#include <map>
#include <optional>
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

// A new user, who holds no credential yet: `enrolmentCode` is the one-time code ("rc_…") to hand
// to them out of band. With it they set their own password and receive their own TOTP secret
// (completeReset), so the admin who made the account never chooses or sees either.
struct NewUser {
    std::string user;
    std::string enrolmentCode;
    std::int64_t codeExpires = 0;  // Unix seconds; ControlPlaneOptions::enrolmentCodeLifetime
};

// What a reset did. It took effect: `resetCode` is the one-time code to hand to the user out of
// band, with which they set their own password and TOTP secret. Or, for a user who administers
// identities, it waits for a second admin's approval: `resetCode` is empty.
struct ResetOutcome {
    std::string user;
    std::string resetCode;
    std::int64_t codeExpires = 0;  // Unix seconds, with resetCode

    [[nodiscard]] bool pending() const noexcept { return resetCode.empty(); }
};

// A password hash and a TOTP secret made for a user before the transaction that stores them.
struct NewCredentials {
    std::string passwordHash;
    crypto::SecretBytes totpSecret;
};

struct SessionInfo {
    std::string id;  // "s<row>", as audit entries name it
    std::string user;
    std::int64_t created = 0;   // Unix seconds
    std::int64_t lastUsed = 0;  // Unix seconds
    bool revoked = false;
    bool expired = false;  // idle or past its absolute limit
};

// What a signed-in user may know of themselves (WhoAmI): enough for a client to decide which
// screens to show and when to ask for the password again. The server still decides every call.
struct SelfInfo {
    SessionInfo session;
    // When the session expires if unused from now on: its last recorded use plus the idle
    // limit (a use is recorded at most every sessionUseInterval, so this can be that much
    // early, never late), and its absolute limit, in Unix seconds.
    std::int64_t idleExpires = 0;
    std::int64_t absoluteExpires = 0;
    std::int64_t idleSeconds = 0;  // the idle limit itself
    // The caller's permissions through unexpired grants, by project ("" for global grants,
    // which hold in every project), each sorted.
    std::map<std::string, std::vector<std::string>> permissions;
    bool breakGlass = false;  // some of them come from a break-glass grant
};

// A reset that waits for a second admin (Identity::resetUser).
struct PendingReset {
    std::string user;
    std::string requestedBy;
    std::int64_t requested = 0;  // Unix seconds
};

struct UserInfo {
    std::string name;
    bool disabled = false;
    std::vector<std::string> grants;  // "role" or "role@project", "!" suffix for break-glass
};

// Users are listed by name (store/list_page.h).
[[nodiscard]] inline std::string pageKey(const UserInfo& user)
{
    return user.name;
}

// A sign-in between Identity::startSignIn and finishSignIn: the account as it was read, and
// what checking the password against it found.
class SignInAttempt final {
public:
    // One Argon2id computation, whatever the account: an unknown, disabled, locked or reset one
    // costs what a wrong password costs. Reads and writes no database, so it needs no lock.
    void checkPassword(const crypto::SecretBytes& password);

private:
    friend class Identity;
    std::string name_;
    std::string peer_;     // the lockout peer (store/call_origin.h)
    bool read_ = false;    // false when reading the account failed: finishSignIn does it all
    bool known_ = false;   // the name is a user's
    bool closed_ = false;  // disabled, locked or reset when read
    std::string passwordHash_;
    crypto::Argon2Params hashing_;  // for the computation that stands in for a missing hash
    bool checked_ = false;          // one Argon2id computation was spent
    bool matched_ = false;          // the password matches passwordHash_, when checked and open
};

// The caller's own account as a change of their own credentials reads it, before the check that
// runs outside any transaction (PasswordChange, TotpChange).
struct OwnAccount {
    std::string session;
    std::int64_t userId = 0;
    std::string name;
    std::string storedHash;
    bool read = false;  // the session and its account were read
};

// A signed-in user's change of their own password, between Identity::startPasswordChange and
// finishPasswordChange: whose it is and the hash read, and what checking found. Like sign-in, its
// two Argon2id computations (the current password's check, the new one's hash) run in check(),
// which reads and writes no database and holds no transaction.
class PasswordChange final {
public:
    // Checks `current` against the hash read, `next` against the password policy, and hashes
    // `next`. Reads and writes no database.
    void check(const crypto::SecretBytes& current, const crypto::SecretBytes& next);

private:
    friend class Identity;
    OwnAccount account_;
    crypto::Argon2Params hashing_;
    bool checked_ = false;        // check() ran
    bool matched_ = false;        // the current password matched the hash read
    std::optional<Error> unfit_;  // the new password's policy refusal
    std::string newHash_;
};

// A replacement of one's own TOTP secret waits this long for a code from the new secret, and
// is discarded at the kTotpConfirmAttempts-th wrong code (identity/totp_change.cpp).
inline constexpr std::int64_t kTotpChangeLifetimeSeconds = 600;
inline constexpr std::int64_t kTotpConfirmAttempts = 3;

// A signed-in user's replacement of their own TOTP secret, between Identity::startTotpChange and
// finishTotpStart: whose it is, the password hash read, and what checking the password found.
// The Argon2id computation runs in check(), which reads and writes no database.
class TotpChange final {
public:
    void check(const crypto::SecretBytes& password);

private:
    friend class Identity;
    OwnAccount account_;
    bool checked_ = false;  // check() ran
    bool matched_ = false;  // the password matched the hash read
};

// The new TOTP secret, shown once, that waits for a code from it (Identity::confirmTotpChange).
struct PendingTotp {
    Enrollment enrollment;     // its otpauth URI
    std::int64_t expires = 0;  // Unix seconds; unconfirmed by then, it is discarded
};

class Identity final {
public:
    // `gate`, `access` and `options` must outlive this object.
    Identity(AuditedTransactions& gate, Access& access, const ControlPlaneOptions& options);

    // Creates the default roles and the first admin; refused once any user exists.
    [[nodiscard]] Result<Enrollment> init(const std::string& adminName,
                                          const crypto::SecretBytes& password);

    // Password and TOTP code; returns a new session token (only its SHA-256 is stored).
    // startSignIn, SignInAttempt::checkPassword and finishSignIn in a row. Failures in a row
    // lock the account for `peer` only (lockoutPeer, store/call_origin.h): an attacker locks it out
    // from where the attacker is, never from where its user signs in.
    [[nodiscard]] Result<std::string> signIn(const std::string& name,
                                             const crypto::SecretBytes& password,
                                             const std::string& totpCode,
                                             const std::string& peer = std::string(kLocalPeer));
    // signIn in three steps, so that its Argon2id computation holds no transaction (a daemon
    // checks the password outside its group commit): read the account (reads only, no
    // transaction), check the password (no database), then finish: the audited transaction
    // that checks the account's state and the TOTP code, counts a failure or issues the session,
    // and appends the entry, as signIn does. A password checked against a hash that has since
    // changed (a reset) is checked again there.
    [[nodiscard]] SignInAttempt startSignIn(const std::string& name,
                                            const std::string& peer = std::string(kLocalPeer));
    [[nodiscard]] Result<std::string> finishSignIn(const SignInAttempt& attempt,
                                                   const crypto::SecretBytes& password,
                                                   const std::string& totpCode);
    [[nodiscard]] Result<void> signOut(const std::string& session);
    // The caller's own session: its id ("s<n>") and user, for any signed-in user. A success
    // appends nothing (it changes nothing), and within options.sessionUseInterval of the
    // session's last recorded use it writes nothing either; a refusal is audited like any other.
    [[nodiscard]] Result<SessionInfo> whoAmI(const std::string& session);
    // whoAmI with the session's limits and the caller's effective permissions (SelfInfo); reads
    // like whoAmI and appends nothing on success.
    [[nodiscard]] Result<SelfInfo> describeSelf(const std::string& session);

    // A new account with no password and no TOTP secret, and its one-time enrolment code.
    [[nodiscard]] Result<NewUser> createUser(const std::string& session, const std::string& name);
    // Disabling revokes the user's sessions. The last admin can not be disabled, and disabling
    // one of two admins waits for the other (Access::removeAdmin: `pending`).
    [[nodiscard]] Result<ChangeOutcome> disableUser(const std::string& session,
                                                    const std::string& name);
    [[nodiscard]] Result<void> enableUser(const std::string& session, const std::string& name);
    // Takes away the user's password and TOTP secret, ends their sessions and lockout, and
    // returns the one-time code with which they set new ones (completeReset); until then no
    // sign-in works. Whoever holds that code can become the user, so the reset waits for a
    // second admin (approveReset) whenever there is one: always for a user who administers
    // identities, and for anyone while two or more admins exist.
    [[nodiscard]] Result<ResetOutcome> resetUser(const std::string& session,
                                                 const std::string& name);
    // Makes the pending reset of `name` take effect. Refused for the admin who requested it and
    // for `name` themselves.
    [[nodiscard]] Result<ResetOutcome> approveReset(const std::string& session,
                                                    const std::string& name);
    // The new or reset user's first step in: with the one-time code they choose their password
    // and receive a new TOTP secret, then sign in with both. One sentence, the same for an unknown
    // user, a user with no open reset and a wrong code; only the holder of the right code learns
    // that it expired. Nobody is authenticated until the code matches: a refusal's actor is
    // "unknown", its target the account named, and refusals are counted per peer and window like
    // every anonymous refusal (issue #48).
    [[nodiscard]] Result<Enrollment> completeReset(const std::string& name,
                                                   const std::string& resetCode,
                                                   const crypto::SecretBytes& password);
    // The same in two steps, so that a server hashes the password (Argon2id, slow) outside its
    // commit group and in a password-check slot: whether `resetCode` is the open, unexpired code
    // of `name` (reads only, decides nothing), then the credentials made from the password
    // (checks its policy), then the redemption with them, which checks the code again.
    [[nodiscard]] bool resetCodeWorks(const std::string& name, const std::string& resetCode) const;
    [[nodiscard]] Result<NewCredentials> makeCredentials(const std::string& name,
                                                         const crypto::SecretBytes& password) const;
    [[nodiscard]] Result<Enrollment> completeReset(const std::string& name,
                                                   const std::string& resetCode,
                                                   const NewCredentials& credentials);
    [[nodiscard]] Result<void> revokeSessions(const std::string& session, const std::string& name);
    // One page of the sessions, newest first (session.manage; each page audited as
    // session.list with the page's start).
    [[nodiscard]] Result<Paged<SessionInfo>> listSessions(const std::string& session,
                                                          const ListPage& page = {});
    // One page of the users, by name (user.manage; each page audited as user.list with its
    // start, detail `after`).
    [[nodiscard]] Result<KeyedPaged<UserInfo>> listUsers(const std::string& session,
                                                         const KeyedPage& page = {});
    // The resets waiting for a second admin, oldest first (user.manage; audited as
    // user.list_resets): what another admin approves with approveReset.
    [[nodiscard]] Result<std::vector<PendingReset>> listPendingResets(const std::string& session);

    // A signed-in user's new password, in three steps (identity/password_change.cpp): read the
    // caller's account (no transaction), PasswordChange::check (no database), then finish: the
    // audited transaction (user.change_password) that stores the new hash and ends the user's other
    // sessions, returning how many. A wrong current password changes nothing and ends this
    // session too, audited as denied: each guess costs a sign-in, which has its own lockout.
    [[nodiscard]] PasswordChange startPasswordChange(const std::string& session);
    [[nodiscard]] Result<std::uint32_t> finishPasswordChange(const PasswordChange& change);

    // A signed-in user's new TOTP secret, in two calls (identity/totp_change.cpp). First, proof of
    // both factors: startTotpChange reads the account (no transaction), TotpChange::check checks
    // the password (no database), and finishTotpStart checks a code from the current secret (not
    // one used before) and keeps a new secret pending, audited as user.totp_start. A wrong
    // password or code changes nothing and ends this session, audited as denied, as a wrong
    // current password does. Then confirmTotpChange with a code from the new secret makes it the
    // user's and ends their other sessions (user.totp_confirm), returning how many; each wrong
    // code is audited as denied and the kTotpConfirmAttempts-th discards the pending secret.
    [[nodiscard]] TotpChange startTotpChange(const std::string& session);
    [[nodiscard]] Result<PendingTotp> finishTotpStart(const TotpChange& change,
                                                      const std::string& currentCode);
    [[nodiscard]] Result<std::uint32_t> confirmTotpChange(const std::string& session,
                                                          const std::string& newCode);

private:
    // The caller's account for a change of their own credentials, read without a transaction
    // and without an entry; unread (read false) when the session or the account does not read,
    // which the change's finishing transaction then refuses and audits, once (issue #54).
    [[nodiscard]] OwnAccount readOwnAccount(const std::string& session);
    // A new password hash and TOTP secret for the user `userId`; clears the lockout.
    [[nodiscard]] Result<Enrollment> storeNewCredentials(std::int64_t userId,
                                                         const std::string& name,
                                                         const crypto::SecretBytes& password);
    [[nodiscard]] Result<Enrollment> storeCredentials(std::int64_t userId, const std::string& name,
                                                      const NewCredentials& credentials);

    AuditedTransactions& gate_;
    Database& database_;
    Access& access_;
    const ControlPlaneOptions& options_;
};

}  // namespace sealtrain::core
