// Users, credentials, sign-in and sessions. Sign-in is one audited transaction made of named
// steps: look the account up, check that it may sign in now, check the password and the TOTP
// code, count a failure or clear the count, and issue the session.
#include "sealtrain/core/identity.h"

#include "audited_transaction.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/base/wipe.h"
#include "sealtrain/core/access.h"
#include "sealtrain/core/database.h"
#include "sealtrain/core/password.h"
#include "sealtrain/core/totp.h"
#include "sealtrain/crypto/random.h"

#include <algorithm>
#include <functional>
#include <optional>

namespace sealtrain::core {

namespace {

// A hash nobody's password matches, with the floor parameters, so that signing in as an unknown
// user costs one Argon2id verification like a wrong password does (no timing oracle for names).
constexpr std::string_view kDummyHashAtFloor =
    "$argon2id$v=19$m=65536,t=2,p=1$5FBQdkEOwNsnPz4tN+LC1Q$"
    "s+EQlsC5FUTJeWNgERPHcNA9xcwn9xge2W/S8geGkeg";

// What sign-in reads about an account.
struct Account {
    std::int64_t id = 0;
    std::string name;
    std::string passwordHash;
    crypto::SecretBytes totpSecret;
    std::uint64_t lastTotpStep = 0;
    bool disabled = false;
    std::int64_t failures = 0;
    std::int64_t lockedUntil = 0;
};

// One answer for every wrong credential, so that it does not tell which one was wrong.
Error wrongCredentials()
{
    return Error(ErrorCode::Unauthenticated,
                 "The user name, password or TOTP code is wrong; try again.");
}

// Marks the sign-in's entry denied with `reason`; the caller gets `error` once the entry (and
// the failure count, if any) is committed.
Error refuse(audit::EntryDraft& draft, std::string reason, Error error)
{
    draft.outcome = audit::Outcome::Denied;
    draft.reason = std::move(reason);
    return error;
}

Result<std::optional<Account>> findAccount(const Database& database, const std::string& name)
{
    Account account;
    std::vector<std::uint8_t> secret;
    auto found = database.queryOne(
        "SELECT id, password_hash, totp_secret, totp_last_step, disabled, failed_attempts, "
        "locked_until FROM users WHERE name = ?",
        {name}, [&](const Statement& row) {
            account.id = row.integer(0);
            account.passwordHash = row.text(1);
            secret = row.blob(2);
            account.lastTotpStep = static_cast<std::uint64_t>(row.integer(3));
            account.disabled = row.integer(4) != 0;
            account.failures = row.integer(5);
            account.lockedUntil = row.integer(6);
        });
    if (!found)
        return found.error();
    if (!*found)
        return std::optional<Account>();
    auto totpSecret = crypto::SecretBytes::fromBytes(secret);
    wipeMemory(secret);
    if (!totpSecret)
        return totpSecret.error();
    account.name = name;
    account.totpSecret = std::move(*totpSecret);
    return std::optional<Account>(std::move(account));
}

// An unknown name costs as much as a wrong password (the hash is thrown away), and is recorded
// only as a keyed hash: it may be a password typed into the wrong field.
Result<void> refuseUnknownUser(const AuditedTransactions& gate, const std::string& name,
                               const crypto::SecretBytes& password, audit::EntryDraft& draft)
{
    const auto& hashing = gate.options().passwordHashing;
    const bool atFloor = hashing.opsLimit == crypto::kArgon2Floor.opsLimit
                         && hashing.memLimitBytes == crypto::kArgon2Floor.memLimitBytes;
    if (atFloor) {
        (void)verifyPassword(std::string(kDummyHashAtFloor), password);
    } else if (auto dummy = hashPassword(password, hashing); !dummy) {
        return dummy.error();
    }
    draft.actor.id = "unknown";
    if (gate.auditKey() != nullptr)
        draft.sensitive.emplace_back("user_name", name);
    draft.target = {"user", "unknown"};
    return refuse(draft, "unknown user", wrongCredentials());
}

// Why `account` may not sign in at `now` whatever its credentials: disabled, or locked out.
std::optional<Error> closedAccount(const Account& account, std::int64_t now)
{
    if (account.disabled)
        return Error(ErrorCode::PermissionDenied,
                     "The account '" + account.name + "' is disabled; ask an admin.");
    if (account.lockedUntil > now)
        return Error(
            ErrorCode::PermissionDenied,
            "The account '" + account.name + "' is locked after repeated failed sign-ins for "
                + std::to_string(account.lockedUntil - now) + " more seconds; wait and retry.");
    return std::nullopt;
}

// The TOTP time step the code matches when the password is right too and the code was not used
// before; else why not (the audit entry's reason).
struct CredentialCheck {
    std::uint64_t step = 0;
    std::string failure;  // empty when both match
};

CredentialCheck checkCredentials(const Account& account, const crypto::SecretBytes& password,
                                 const std::string& totpCode, const audit::Clock& clock)
{
    const std::uint64_t step = matchTotp(account.totpSecret, totpStep(clock.now()), totpCode);
    const bool passwordOk = verifyPassword(account.passwordHash, password);
    if (!passwordOk)
        return {0, "wrong password"};
    if (step == 0)
        return {0, "wrong TOTP code"};
    if (step <= account.lastTotpStep)
        return {0, "TOTP code reused"};
    return {step, {}};
}

// Counts one more failure in a row; from maxFailedSignIns on, the account is locked for a time
// that doubles with every further failure, up to maxLockout.
Result<void> countFailure(const Database& database, const ControlPlaneOptions& options,
                          const Account& account, std::int64_t now, audit::EntryDraft& draft)
{
    const std::int64_t count = account.failures + 1;
    std::int64_t until = 0;
    if (count >= options.maxFailedSignIns) {
        const auto doublings = std::min<std::int64_t>(count - options.maxFailedSignIns, 20);
        const std::int64_t backoff = std::min<std::int64_t>(options.lockout.count() << doublings,
                                                            options.maxLockout.count());
        until = now + backoff;
    }
    SEALTRAIN_TRY(
        database.run("UPDATE users SET failed_attempts = ?, locked_until = ? WHERE id = ?",
                     {count, until, account.id}));
    draft.details.push_back(audit::textDetail("failed_attempts", std::to_string(count)));
    if (until != 0)
        draft.details.push_back(audit::textDetail("locked_until", std::to_string(until)));
    return success();
}

// Clears the failures and remembers the code's time step, so that the code can not be replayed.
Result<void> clearFailures(const Database& database, const Account& account, std::uint64_t step)
{
    return database.run("UPDATE users SET failed_attempts = 0, locked_until = 0, "
                        "totp_last_step = ? WHERE id = ?",
                        {static_cast<std::int64_t>(step), account.id});
}

// A new random token; the database keeps only its hash, the entry names the session's row.
Result<std::string> issueSession(const Database& database, std::int64_t userId, std::int64_t now,
                                 audit::EntryDraft& draft)
{
    std::string token = "st_" + toBase64Url(crypto::randomBytes(32));
    SEALTRAIN_TRY(database.run(
        "INSERT INTO sessions (token_hash, user_id, created, last_used) VALUES (?, ?, ?, ?)",
        {SqlValue::blob(sessionTokenHash(token)), userId, now, now}));
    draft.actor.session = "s" + std::to_string(database.lastInsertId());
    return token;
}

Result<void> insertUser(const Database& database, const std::string& name, std::int64_t now)
{
    return database.run("INSERT INTO users (name, password_hash, totp_secret, created) "
                        "VALUES (?, '', x'', ?)",
                        {name, now});
}

Result<void> insertDefaultRoles(const Database& database)
{
    for (const auto& role : defaultRoles()) {
        SEALTRAIN_TRY(
            database.run("INSERT OR IGNORE INTO roles (name, builtin) VALUES (?, 1)", {role.name}));
        for (const auto& permission : role.permissions)
            SEALTRAIN_TRY(database.run(
                "INSERT OR IGNORE INTO role_permissions (role, permission) VALUES (?, ?)",
                {role.name, permission}));
    }
    return success();
}

Result<void> revokeSessionsOf(const Database& database, std::int64_t userId)
{
    return database.run("UPDATE sessions SET revoked = 1 WHERE user_id = ?", {userId});
}

// perform for a call on the user `name` (the entry's target), which `change` gets by id.
Result<void> performOnUser(AuditedTransactions& gate, const std::string& session,
                           const std::string& action, std::string_view permission,
                           const std::string& name,
                           const std::function<Result<void>(std::int64_t userId)>& change)
{
    return gate.perform(session, {action, permission, {}, {"user", name}},
                        [&](const Caller&, audit::EntryDraft&) -> Result<void> {
                            auto id = userIdByName(gate.database(), name);
                            if (!id)
                                return id.error();
                            return change(*id);
                        });
}

}  // namespace

Result<std::int64_t> userIdByName(const Database& database, const std::string& name)
{
    std::int64_t id = 0;
    auto found = database.queryOne("SELECT id FROM users WHERE name = ?", {name},
                                   [&](const Statement& row) { id = row.integer(0); });
    if (!found)
        return found.error();
    if (!*found)
        return Error(ErrorCode::NotFound,
                     "There is no user '" + name + "'; check the name with 'user list'.");
    return id;
}

Identity::Identity(AuditedTransactions& gate, const Access& access,
                   const ControlPlaneOptions& options)
    : gate_(gate)
    , database_(gate.database())
    , access_(access)
    , options_(options)
{
}

Result<Enrollment> Identity::storeNewCredentials(std::int64_t id, const std::string& name,
                                                 const crypto::SecretBytes& password)
{
    SEALTRAIN_TRY(checkPasswordPolicy(name, password));
    auto hash = hashPassword(password, options_.passwordHashing);
    if (!hash)
        return hash.error();
    auto secret = crypto::SecretBytes::random(kTotpSecretSize);
    if (!secret)
        return secret.error();
    // The TOTP secret is stored as is: the whole database is encrypted under the database key
    // (docs/formats/database.md), and the server must be able to compute codes from it.
    SEALTRAIN_TRY(database_.run("UPDATE users SET password_hash = ?, totp_secret = ?, "
                                "totp_last_step = 0, failed_attempts = 0, locked_until = 0 "
                                "WHERE id = ?",
                                {*hash, SqlValue::blob(secret->bytes()), id}));
    return Enrollment{name, otpauthUri(options_.totpIssuer, name, *secret)};
}

Result<Enrollment> Identity::init(const std::string& adminName, const crypto::SecretBytes& password)
{
    SEALTRAIN_TRY(requireValidName("user", adminName));
    Enrollment enrollment;
    auto initialised = gate_.performWithoutSession(
        {"control.init", {}, {}, {"user", adminName}},
        [&](audit::EntryDraft& draft) -> Result<void> {
            auto users = database_.queryInteger("SELECT count(*) FROM users", {});
            if (!users)
                return users.error();
            if (*users != 0)
                return Error(ErrorCode::AlreadyExists, "The control plane is already "
                                                       "initialised; sign in as an admin instead.");
            SEALTRAIN_TRY(insertDefaultRoles(database_));
            SEALTRAIN_TRY(insertUser(database_, adminName, gate_.now()));
            const std::int64_t id = database_.lastInsertId();
            auto made = storeNewCredentials(id, adminName, password);
            if (!made)
                return made.error();
            enrollment = std::move(*made);
            SEALTRAIN_TRY(database_.run("INSERT INTO grants (user_id, role) VALUES (?, ?)",
                                        {id, kAdminRole}));
            draft.actor = {audit::ActorKind::System, "init", "", "local"};
            draft.details.push_back(audit::textDetail("role", kAdminRole));
            return success();
        });
    if (!initialised)
        return initialised.error();
    return enrollment;
}

Result<std::string> Identity::signIn(const std::string& name, const crypto::SecretBytes& password,
                                     const std::string& totpCode)
{
    std::string token;
    auto signedIn = gate_.performWithoutSession(
        {"session.sign_in", {}, {}, {"user", name}}, [&](audit::EntryDraft& draft) -> Result<void> {
            draft.actor = {audit::ActorKind::User, name, "", std::string(kAuthMethod)};
            auto account = findAccount(database_, name);
            if (!account)
                return account.error();
            const std::int64_t t = gate_.now();
            if (!*account)
                return refuseUnknownUser(gate_, name, password, draft);
            if (auto closed = closedAccount(**account, t))
                return refuse(draft, closed->message(), *closed);
            const auto check = checkCredentials(**account, password, totpCode, gate_.clock());
            if (!check.failure.empty()) {
                SEALTRAIN_TRY(countFailure(database_, options_, **account, t, draft));
                return refuse(draft, check.failure, wrongCredentials());
            }
            SEALTRAIN_TRY(clearFailures(database_, **account, check.step));
            auto issued = issueSession(database_, (*account)->id, t, draft);
            if (!issued)
                return issued.error();
            token = std::move(*issued);
            return success();
        });
    if (!signedIn)
        return signedIn.error();
    return token;
}

Result<void> Identity::signOut(const std::string& session)
{
    return gate_.perform(session, {"session.sign_out", {}, {}, {"session", ""}},
                         [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
                             draft.target.id = caller.sessionId;
                             return database_.run(
                                 "UPDATE sessions SET revoked = 1 WHERE token_hash = ?",
                                 {SqlValue::blob(sessionTokenHash(session))});
                         });
}

Result<Enrollment> Identity::createUser(const std::string& session, const std::string& name,
                                        const crypto::SecretBytes& password)
{
    return gate_.performReturning(
        session, {"user.create", permission::kUserManage, {}, {"user", name}},
        [&](const Caller&, audit::EntryDraft&) -> Result<Enrollment> {
            SEALTRAIN_TRY(requireValidName("user", name));
            if (auto done = insertUser(database_, name, gate_.now()); !done)
                return Error(ErrorCode::AlreadyExists,
                             "A user named '" + name + "' already exists; choose another name.");
            return storeNewCredentials(database_.lastInsertId(), name, password);
        });
}

Result<void> Identity::disableUser(const std::string& session, const std::string& name)
{
    return performOnUser(
        gate_, session, "user.disable", permission::kUserManage, name,
        [&](std::int64_t id) -> Result<void> {
            SEALTRAIN_TRY(access_.requireAnotherAdmin(id, "disable '" + name + "'"));
            SEALTRAIN_TRY(database_.run("UPDATE users SET disabled = 1 WHERE id = ?", {id}));
            return revokeSessionsOf(database_, id);
        });
}

Result<void> Identity::enableUser(const std::string& session, const std::string& name)
{
    return performOnUser(gate_, session, "user.enable", permission::kUserManage, name,
                         [&](std::int64_t id) {
                             return database_.run("UPDATE users SET disabled = 0, "
                                                  "failed_attempts = 0, locked_until = 0 "
                                                  "WHERE id = ?",
                                                  {id});
                         });
}

Result<Enrollment> Identity::resetUser(const std::string& session, const std::string& name,
                                       const crypto::SecretBytes& password)
{
    Enrollment enrollment;
    auto reset = performOnUser(gate_, session, "user.reset", permission::kUserManage, name,
                               [&](std::int64_t id) -> Result<void> {
                                   auto created = storeNewCredentials(id, name, password);
                                   if (!created)
                                       return created.error();
                                   enrollment = std::move(*created);
                                   return revokeSessionsOf(database_, id);
                               });
    if (!reset)
        return reset.error();
    return enrollment;
}

Result<void> Identity::revokeSessions(const std::string& session, const std::string& name)
{
    return performOnUser(gate_, session, "session.revoke", permission::kSessionManage, name,
                         [&](std::int64_t id) { return revokeSessionsOf(database_, id); });
}

Result<std::vector<SessionInfo>> Identity::listSessions(const std::string& session)
{
    return gate_.performListing<SessionInfo>(
        session, {"session.list", permission::kSessionManage, {}, {"session", "*"}},
        "SELECT s.id, u.name, s.created, s.last_used, s.revoked FROM sessions s "
        "JOIN users u ON u.id = s.user_id ORDER BY s.id DESC",
        [this](std::vector<SessionInfo>& sessions, const Statement& row) {
            SessionInfo info;
            info.id = "s" + std::to_string(row.integer(0));
            info.user = row.text(1);
            info.created = row.integer(2);
            info.lastUsed = row.integer(3);
            info.revoked = row.integer(4) != 0;
            const std::int64_t t = gate_.now();
            info.expired = t - info.lastUsed > options_.sessionIdle.count()
                           || t - info.created > options_.sessionMax.count();
            sessions.push_back(std::move(info));
        });
}

Result<std::vector<UserInfo>> Identity::listUsers(const std::string& session)
{
    return gate_.performGroupedListing<UserInfo>(
        session, {"user.list", permission::kUserManage, {}, {"user", "*"}},
        "SELECT u.name, u.disabled, g.role, g.project, g.break_glass FROM users u "
        "LEFT JOIN grants g ON g.user_id = u.id ORDER BY u.name, g.role, g.project",
        [](UserInfo& user, const Statement& row) {
            std::string grant = row.text(2);
            if (!row.text(3).empty())
                grant += "@" + row.text(3);
            if (row.integer(4) != 0)
                grant += "!";
            user.grants.push_back(std::move(grant));
        });
}

}  // namespace sealtrain::core
