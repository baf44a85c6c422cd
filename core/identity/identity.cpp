// Users, credentials, resets, sign-in and sessions. Sign-in is one audited transaction made of
// named steps: look the account up, check that it may sign in now, check the password and the
// TOTP code, count a failure or clear the count, and issue the session. Every refusal costs one
// Argon2id computation and gives the same sentence, so that neither the message nor the time
// tells an unknown name from a disabled, locked or reset account.
#include "sealtrain/core/identity/identity.h"

#include "identity/accounts.h"
#include "store/audited_transaction.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/base/wipe.h"
#include "sealtrain/core/access/access.h"
#include "sealtrain/core/identity/password.h"
#include "sealtrain/core/identity/totp.h"
#include "sealtrain/core/store/database.h"
#include "sealtrain/core/store/reason_codes.h"
#include "sealtrain/crypto/random.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <functional>
#include <optional>

namespace sealtrain::core {

using internal::Account;
using internal::clearAllFailures;
using internal::clearFailures;
using internal::closedAccount;
using internal::countFailure;
using internal::findAccount;
using internal::hashOfResetCode;
using internal::pruneFailures;
using internal::recordUnknownUser;
using internal::refuse;

namespace {

// A hash nobody's password matches, with the floor parameters, so that signing in as an unknown
// user costs one Argon2id verification like a wrong password does (no timing oracle for names).
constexpr std::string_view kDummyHashAtFloor =
    "$argon2id$v=19$m=65536,t=2,p=1$5FBQdkEOwNsnPz4tN+LC1Q$"
    "s+EQlsC5FUTJeWNgERPHcNA9xcwn9xge2W/S8geGkeg";

// One answer for every refused sign-in, so that it does not tell which credential was wrong nor
// whether the account exists, is disabled, locked or reset (the audit entry says which).
Error wrongCredentials()
{
    return Error(ErrorCode::Unauthenticated,
                 "The user name, password or TOTP code is wrong, or the account may not sign in "
                 "now; try again, or ask an admin.");
}

// Costs what checking a wrong password costs, one Argon2id computation, for the refusals that
// have no password hash to check against (an unknown name, a disabled, locked or reset account):
// no timing oracle for user names or account states.
Result<void> spendOneVerification(const crypto::Argon2Params& hashing,
                                  const crypto::SecretBytes& password)
{
    const bool atFloor = hashing.opsLimit == crypto::kArgon2Floor.opsLimit
                         && hashing.memLimitBytes == crypto::kArgon2Floor.memLimitBytes;
    if (atFloor) {
        (void)verifyPassword(std::string(kDummyHashAtFloor), password);
    } else if (auto dummy = hashPassword(password, hashing); !dummy) {
        return dummy.error();
    }
    return success();
}

// The TOTP time step the code matches when the password is right too (`passwordOk`) and the
// code was not used before; else why not (the audit entry's reason).
struct CredentialCheck {
    std::uint64_t step = 0;
    std::string failure;  // empty when both match
};

CredentialCheck checkCredentials(const Account& account, bool passwordOk,
                                 const std::string& totpCode, std::uint64_t currentStep)
{
    const std::uint64_t step = matchTotp(account.totpSecret, currentStep, totpCode);
    if (!passwordOk)
        return {0, "wrong password"};
    if (step == 0)
        return {0, "wrong TOTP code"};
    if (step <= account.lastTotpStep)
        return {0, "TOTP code reused"};
    return {step, {}};
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

// Leaves `userId` with no password and no TOTP secret, ends their sessions, lockout and any
// pending request, and returns the one-time code with which they set new credentials until
// `expires` (the database keeps only its SHA-256).
Result<std::string> openReset(const Database& database, std::int64_t userId, std::int64_t expires)
{
    std::string code = "rc_" + toBase64Url(crypto::randomBytes(32));
    SEALTRAIN_TRY(database.run("UPDATE users SET password_hash = '', totp_secret = x'', "
                               "totp_last_step = 0, failed_attempts = 0, locked_until = 0, "
                               "reset_code_hash = ?, reset_code_expires = ? WHERE id = ?",
                               {SqlValue::blob(hashOfResetCode(code)), expires, userId}));
    SEALTRAIN_TRY(database.run("DELETE FROM pending_resets WHERE user_id = ?", {userId}));
    SEALTRAIN_TRY(clearAllFailures(database, userId));
    SEALTRAIN_TRY(revokeSessionsOf(database, userId));
    return code;
}

struct ResetRequest {
    std::int64_t requesterId = 0;
    std::string requester;
};

// The admin who asked for the reset of `userId` that waits for approval, if any.
Result<std::optional<ResetRequest>> pendingReset(const Database& database, std::int64_t userId)
{
    ResetRequest request;
    auto found = database.queryOne("SELECT p.requested_by, u.name FROM pending_resets p "
                                   "JOIN users u ON u.id = p.requested_by WHERE p.user_id = ?",
                                   {userId}, [&](const Statement& row) {
                                       request.requesterId = row.integer(0);
                                       request.requester = row.text(1);
                                   });
    if (!found)
        return found.error();
    if (!*found)
        return std::optional<ResetRequest>();
    return std::optional<ResetRequest>(std::move(request));
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

// A reset call (user.manage) on the user `name`: `takesEffect` decides, inside the transaction,
// whether the reset happens now (true: the outcome holds the one-time code) or waits (false).
using ResetDecision =
    std::function<Result<bool>(const Caller&, std::int64_t userId, audit::EntryDraft&)>;

Result<ResetOutcome> performReset(AuditedTransactions& gate, const std::string& session,
                                  const std::string& action, const std::string& name,
                                  std::chrono::seconds codeLifetime,
                                  const ResetDecision& takesEffect)
{
    return gate.performReturning(
        session, {action, permission::kUserManage, {}, {"user", name}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<ResetOutcome> {
            auto id = userIdByName(gate.database(), name);
            if (!id)
                return id.error();
            auto now = takesEffect(caller, *id, draft);
            if (!now)
                return now.error();
            if (!*now)
                return ResetOutcome{name, {}};
            const std::int64_t expires = gate.now() + codeLifetime.count();
            auto code = openReset(gate.database(), *id, expires);
            if (!code)
                return code.error();
            draft.details.push_back(audit::textDetail("code_expires", std::to_string(expires)));
            return ResetOutcome{name, std::move(*code), expires};
        });
}

}  // namespace

namespace internal {

// Marks the sign-in's entry denied with `reason`; the caller gets `error` once the entry (and
// the failure count, if any) is committed.
Error refuse(audit::EntryDraft& draft, std::string reason, Error error)
{
    draft.outcome = audit::Outcome::Denied;
    draft.reason = std::move(reason);
    if (!error.reasonCode().empty())
        draft.details.push_back(audit::textDetail("reason_code", std::string(error.reasonCode())));
    return error;
}

// An unknown name is recorded only as a keyed hash: it may be a password typed into the wrong
// field.
void recordUnknownUser(const AuditedTransactions& gate, const std::string& name,
                       audit::EntryDraft& draft)
{
    draft.actor.id = "unknown";
    if (gate.auditKey() != nullptr)
        draft.sensitive.emplace_back("user_name", name);
    draft.target = {"user", "unknown"};
}

crypto::Sha256Digest hashOfResetCode(const std::string& code)
{
    return crypto::sha256(asBytes(code));
}

}  // namespace internal

Identity::Identity(AuditedTransactions& gate, Access& access, const ControlPlaneOptions& options)
    : gate_(gate)
    , database_(gate.database())
    , access_(access)
    , options_(options)
{
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

void SignInAttempt::checkPassword(const crypto::SecretBytes& password)
{
    if (!read_)
        return;  // finishSignIn reads the account and checks the password itself
    if (!known_) {
        checked_ = spendOneVerification(hashing_, password).ok();
        return;
    }
    if (closed_) {
        checked_ = spendOneVerification(hashing_, password).ok();
        return;
    }
    matched_ = verifyPassword(passwordHash_, password);
    checked_ = true;
}

SignInAttempt Identity::startSignIn(const std::string& name, const std::string& peer)
{
    SignInAttempt attempt;
    attempt.name_ = name;
    attempt.peer_ = peer;
    attempt.hashing_ = options_.passwordHashing;
    // A failed read leaves the attempt unread: finishSignIn reads again, and records the failure.
    auto account = findAccount(database_, options_, name, peer);
    if (!account)
        return attempt;
    attempt.read_ = true;
    attempt.known_ = account->has_value();
    if (attempt.known_) {
        attempt.closed_ = closedAccount(**account, gate_.now()).has_value();
        attempt.passwordHash_ = (*account)->passwordHash;
    }
    return attempt;
}

Result<std::string> Identity::finishSignIn(const SignInAttempt& attempt,
                                           const crypto::SecretBytes& password,
                                           const std::string& totpCode)
{
    const std::string& name = attempt.name_;
    std::string token;
    auto signedIn = gate_.performWithoutSession(
        {"session.sign_in", {}, {}, {"user", name}}, [&](audit::EntryDraft& draft) -> Result<void> {
            // Nobody is authenticated until the credentials match: a refused sign-in's actor
            // is unknown, its target the account it named, and its peer says where it came
            // from (issue #27: the victim was named as the actor of an attacker's attempts).
            draft.actor = {audit::ActorKind::User, "unknown", "", std::string(kAuthMethod)};
            const std::int64_t t = gate_.now();
            SEALTRAIN_TRY(pruneFailures(database_, t));
            auto account = findAccount(database_, options_, name, attempt.peer_);
            if (!account)
                return account.error();
            if (*account)
                draft.details.push_back(audit::textDetail("lockout_peer", (*account)->peer));
            if (!*account) {
                recordUnknownUser(gate_, name, draft);
                if (!attempt.checked_)
                    SEALTRAIN_TRY(spendOneVerification(options_.passwordHashing, password));
                return refuse(draft, "unknown user",
                              wrongCredentials().because(reason::kUnknownUser));
            }
            if (auto closed = closedAccount(**account, t)) {
                if (!attempt.checked_)
                    SEALTRAIN_TRY(spendOneVerification(options_.passwordHashing, password));
                return refuse(draft, closed->reason, wrongCredentials().because(closed->code));
            }
            // The check made before the transaction holds while the hash it used is the
            // account's; after a change of credentials (or none made) the password is checked
            // here.
            const bool checkedThisHash = attempt.checked_ && attempt.known_ && !attempt.closed_
                                         && attempt.passwordHash_ == (*account)->passwordHash;
            const bool passwordOk = checkedThisHash
                                        ? attempt.matched_
                                        : verifyPassword((*account)->passwordHash, password);
            const auto check = checkCredentials(**account, passwordOk, totpCode,
                                                currentTotpStep(options_, gate_.clock()));
            if (!check.failure.empty()) {
                SEALTRAIN_TRY(countFailure(database_, options_, **account, t, draft));
                return refuse(draft, check.failure,
                              wrongCredentials().because(reason::kWrongCredentials));
            }
            SEALTRAIN_TRY(clearFailures(database_, **account, check.step));
            draft.actor.id = name;
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

Result<std::string> Identity::signIn(const std::string& name, const crypto::SecretBytes& password,
                                     const std::string& totpCode, const std::string& peer)
{
    SignInAttempt attempt = startSignIn(name, peer);
    attempt.checkPassword(password);
    return finishSignIn(attempt, password, totpCode);
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

Result<SessionInfo> Identity::whoAmI(const std::string& session)
{
    auto caller = gate_.identify(session, {"session.whoami", {}, {}, {"session", ""}});
    if (!caller)
        return caller.error();
    SessionInfo info;
    info.id = caller->sessionId;
    info.user = caller->name;
    return info;
}

Result<SelfInfo> Identity::describeSelf(const std::string& session)
{
    auto caller = gate_.identify(session, {"session.whoami", {}, {}, {"session", ""}});
    if (!caller)
        return caller.error();
    SelfInfo self;
    self.session.id = caller->sessionId;
    self.session.user = caller->name;
    self.breakGlass = caller->breakGlass;
    self.idleSeconds = options_.sessionIdle.count();
    auto found =
        database_.queryOne("SELECT created, last_used FROM sessions WHERE id = ?",
                           {static_cast<std::int64_t>(std::stoll(caller->sessionId.substr(1)))},
                           [&](const Statement& row) {
                               self.session.created = row.integer(0);
                               self.session.lastUsed = row.integer(1);
                           });
    if (!found)
        return found.error();
    self.idleExpires = self.session.lastUsed + options_.sessionIdle.count();
    self.absoluteExpires = self.session.created + options_.sessionMax.count();
    // The one permission check's join (AuditedTransactions::authorize), listed instead of
    // counted.
    auto listed =
        database_.query("SELECT DISTINCT g.project, p.permission FROM grants g "
                        "JOIN role_permissions p ON p.role = g.role "
                        "WHERE g.user_id = ? AND (g.expires = 0 OR g.expires > ?) ORDER BY 1, 2",
                        {caller->userId, gate_.now()}, [&](const Statement& row) {
                            self.permissions[row.text(0)].push_back(row.text(1));
                        });
    if (!listed)
        return listed.error();
    return self;
}

Result<NewUser> Identity::createUser(const std::string& session, const std::string& name)
{
    return gate_.performReturning(
        session, {"user.create", permission::kUserManage, {}, {"user", name}},
        [&](const Caller&, audit::EntryDraft& draft) -> Result<NewUser> {
            SEALTRAIN_TRY(requireValidName("user", name));
            if (auto done = insertUser(database_, name, gate_.now()); !done)
                return Error(ErrorCode::AlreadyExists,
                             "A user named '" + name + "' already exists; choose another name.");
            const std::int64_t expires = gate_.now() + options_.enrolmentCodeLifetime.count();
            auto code = openReset(database_, database_.lastInsertId(), expires);
            if (!code)
                return code.error();
            draft.details.push_back(audit::textDetail("credentials", "set by the user"));
            draft.details.push_back(audit::textDetail("code_expires", std::to_string(expires)));
            return NewUser{name, std::move(code).value(), expires};
        });
}

Result<ChangeOutcome> Identity::disableUser(const std::string& session, const std::string& name)
{
    ChangeOutcome outcome;
    auto performed = gate_.perform(
        session, {"user.disable", permission::kUserManage, {}, {"user", name}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
            auto id = userIdByName(database_, name);
            if (!id)
                return id.error();
            bool now = false;
            SEALTRAIN_ASSIGN(now,
                             access_.removeAdmin(caller, *id, "disable '" + name + "'", draft));
            if (!now) {
                outcome.pending = true;
                return success();
            }
            SEALTRAIN_TRY(database_.run("UPDATE users SET disabled = 1 WHERE id = ?", {*id}));
            return revokeSessionsOf(database_, *id);
        });
    if (!performed)
        return performed.error();
    return outcome;
}

Result<void> Identity::enableUser(const std::string& session, const std::string& name)
{
    return performOnUser(gate_, session, "user.enable", permission::kUserManage, name,
                         [&](std::int64_t id) -> Result<void> {
                             SEALTRAIN_TRY(clearAllFailures(database_, id));
                             return database_.run("UPDATE users SET disabled = 0 WHERE id = ?",
                                                  {id});
                         });
}

Result<ResetOutcome> Identity::resetUser(const std::string& session, const std::string& name)
{
    return performReset(
        gate_, session, "user.reset", name, options_.enrolmentCodeLifetime,
        [&](const Caller& caller, std::int64_t id, audit::EntryDraft& draft) -> Result<bool> {
            auto administrator = access_.administersIdentities(id);
            if (!administrator)
                return administrator.error();
            auto admins = access_.adminCount();
            if (!admins)
                return admins.error();
            if (!*administrator && *admins < 2)
                return true;  // one admin: four eyes can not be had (access-control.md)
            // Whoever holds the reset code could sign in as the user: a second admin must agree.
            SEALTRAIN_TRY(database_.run("INSERT OR REPLACE INTO pending_resets "
                                        "(user_id, requested_by, created) VALUES (?, ?, ?)",
                                        {id, caller.userId, gate_.now()}));
            draft.details.push_back(audit::textDetail("approval", "pending"));
            return false;
        });
}

Result<ResetOutcome> Identity::approveReset(const std::string& session, const std::string& name)
{
    return performReset(
        gate_, session, "user.reset_approve", name, options_.enrolmentCodeLifetime,
        [&](const Caller& caller, std::int64_t id, audit::EntryDraft& draft) -> Result<bool> {
            auto request = pendingReset(database_, id);
            if (!request)
                return request.error();
            if (!*request)
                return Error(ErrorCode::NotFound, "No reset of '" + name
                                                      + "' waits for approval; request one with "
                                                        "'sealtrainctl user reset "
                                                      + name + "'.");
            if ((*request)->requesterId == caller.userId)
                return denied("You requested the reset of '" + name
                              + "' yourself; another admin must approve it.")
                    .because(reason::kOwnApproval);
            if (id == caller.userId)
                return denied("Nobody may approve the reset of their own account; another admin "
                              "must approve it.")
                    .because(reason::kOwnApproval);
            draft.details.push_back(audit::textDetail("requested_by", (*request)->requester));
            return true;
        });
}

Result<void> Identity::revokeSessions(const std::string& session, const std::string& name)
{
    return performOnUser(gate_, session, "session.revoke", permission::kSessionManage, name,
                         [&](std::int64_t id) { return revokeSessionsOf(database_, id); });
}

Result<Paged<SessionInfo>> Identity::listSessions(const std::string& session, const ListPage& page)
{
    return gate_.performReturning(
        session, {"session.list", permission::kSessionManage, {}, {"session", "*"}},
        [&](const Caller&, audit::EntryDraft& draft) -> Result<Paged<SessionInfo>> {
            draft.details.push_back(audit::textDetail("before", std::to_string(page.before)));
            SEALTRAIN_TRY(checkListPage(page));
            Paged<SessionInfo> listed;
            std::vector<std::int64_t> rows;
            const std::int64_t t = gate_.now();
            // One more than the page holds: whether a next page exists.
            SEALTRAIN_TRY(database_.query(
                "SELECT s.id, u.name, s.created, s.last_used, s.revoked FROM sessions s "
                "JOIN users u ON u.id = s.user_id WHERE (? = 0 OR s.id < ?) "
                "ORDER BY s.id DESC LIMIT ?",
                {page.before, page.before, static_cast<std::int64_t>(page.limit) + 1},
                [&](const Statement& row) {
                    SessionInfo info;
                    info.id = "s" + std::to_string(row.integer(0));
                    info.user = row.text(1);
                    info.created = row.integer(2);
                    info.lastUsed = row.integer(3);
                    info.revoked = row.integer(4) != 0;
                    info.expired = t - info.lastUsed > options_.sessionIdle.count()
                                   || t - info.created > options_.sessionMax.count();
                    rows.push_back(row.integer(0));
                    listed.items.push_back(std::move(info));
                }));
            if (listed.items.size() > page.limit) {
                listed.items.pop_back();
                listed.nextBefore = rows[page.limit - 1];
            }
            return listed;
        });
}

Result<std::vector<PendingReset>> Identity::listPendingResets(const std::string& session)
{
    return gate_.performListing<PendingReset>(
        session, {"user.list_resets", permission::kUserManage, {}, {"user", "*"}},
        "SELECT u.name, r.name, p.created FROM pending_resets p JOIN users u ON u.id = p.user_id "
        "JOIN users r ON r.id = p.requested_by ORDER BY p.created, u.name",
        [](std::vector<PendingReset>& resets, const Statement& row) {
            resets.push_back({row.text(0), row.text(1), row.integer(2)});
        });
}

Result<KeyedPaged<UserInfo>> Identity::listUsers(const std::string& session, const KeyedPage& page)
{
    return gate_.performGroupedListing<UserInfo>(
        session, {"user.list", permission::kUserManage, {}, {"user", "*"}},
        "SELECT u.name, u.disabled, g.role, g.project, g.break_glass FROM users u "
        "LEFT JOIN grants g ON g.user_id = u.id ORDER BY u.name, g.role, g.project",
        page, [](UserInfo& user, const Statement& row) {
            std::string grant = row.text(2);
            if (!row.text(3).empty())
                grant += "@" + row.text(3);
            if (row.integer(4) != 0)
                grant += "!";
            user.grants.push_back(std::move(grant));
        });
}

}  // namespace sealtrain::core
