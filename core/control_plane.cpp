// The service layer: authentication, the one permission check, separation of duties, and the
// audit entry that goes with every decision.
#include "sealtrain/core/control_plane.h"

#include "control_plane_internal.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/core/access.h"
#include "sealtrain/core/password.h"
#include "sealtrain/core/totp.h"
#include "sealtrain/crypto/random.h"

#include <algorithm>
#include <optional>

namespace sealtrain::core {

namespace {

crypto::Sha256Digest tokenHash(const std::string& token)
{
    return crypto::sha256(asBytes(token));
}

audit::Actor userActor(const std::string& name, const std::string& sessionId)
{
    return {audit::ActorKind::User, name, sessionId, std::string(kAuthMethod)};
}

Error denied(const std::string& sentence)
{
    return Error(ErrorCode::PermissionDenied, sentence);
}

// A hash nobody's password matches, with the floor parameters, so that signing in as an unknown
// user costs one Argon2id verification like a wrong password does (no timing oracle for names).
constexpr std::string_view kDummyHashAtFloor =
    "$argon2id$v=19$m=65536,t=2,p=1$5FBQdkEOwNsnPz4tN+LC1Q$"
    "s+EQlsC5FUTJeWNgERPHcNA9xcwn9xge2W/S8geGkeg";

// Permission classes for separation of duties: operators of the infrastructure hold `worker.*`
// and never data or job permissions.
bool isInfrastructure(std::string_view permission)
{
    return permission.starts_with("worker.");
}

bool isDataOrJob(std::string_view permission)
{
    return permission.starts_with("dataset.") || permission.starts_with("job.");
}

bool isAdministration(std::string_view permission)
{
    return permission == permission::kUserManage || permission == permission::kRoleManage
           || permission == permission::kGrantManage || permission == permission::kSessionManage;
}

Result<bool> exists(const Database& database, std::string_view sql, const std::string& key)
{
    auto statement = database.prepare(sql);
    if (!statement)
        return statement.error();
    statement->bind(1, key);
    return statement->step();
}

}  // namespace

Result<std::int64_t> userIdByName(const Database& database, const std::string& name)
{
    auto statement = database.prepare("SELECT id FROM users WHERE name = ?");
    if (!statement)
        return statement.error();
    statement->bind(1, name);
    auto row = statement->step();
    if (!row)
        return row.error();
    if (!*row)
        return Error(ErrorCode::NotFound,
                     "There is no user '" + name + "'; check the name with 'user list'.");
    return statement->integer(0);
}

Result<void> forEachRow(Statement& statement, const std::function<void(const Statement&)>& onRow)
{
    for (;;) {
        auto row = statement.step();
        if (!row)
            return row.error();
        if (!*row)
            return success();
        onRow(statement);
    }
}

ControlPlane::ControlPlane(Database& database, const audit::AuditKey* auditKey,
                           const audit::Clock& clock, ControlPlaneOptions options,
                           std::unique_ptr<audit::AuditLog> log)
    : database_(database)
    , auditKey_(auditKey)
    , clock_(clock)
    , options_(std::move(options))
    , log_(std::move(log))
{
}

ControlPlane::~ControlPlane() = default;

Result<std::unique_ptr<ControlPlane>>
ControlPlane::open(Database& database, audit::AuditStore& store,
                   const crypto::SigningKey& signingKey, const audit::AuditKey* auditKey,
                   const audit::Clock& clock, ControlPlaneOptions options,
                   audit::LogOptions logOptions)
{
    if (options.passwordHashing.opsLimit < crypto::kArgon2Floor.opsLimit
        || options.passwordHashing.memLimitBytes < crypto::kArgon2Floor.memLimitBytes)
        return Error(ErrorCode::InvalidArgument,
                     "The password hashing parameters are below the Argon2id floor; raise them.");
    if (logOptions.origin.empty())
        logOptions.origin = "sealtrain.local/control";
    auto log = audit::AuditLog::open(store, signingKey, auditKey, clock, std::move(logOptions));
    if (!log)
        return log.error();
    return std::unique_ptr<ControlPlane>(
        new ControlPlane(database, auditKey, clock, std::move(options), std::move(*log)));
}

std::int64_t ControlPlane::now() const
{
    return std::chrono::duration_cast<std::chrono::seconds>(clock_.now().time_since_epoch())
        .count();
}

Result<void> ControlPlane::appendEntry(Transaction& transaction, const audit::EntryDraft& draft)
{
    auto appended = log_->append(transaction, draft);
    if (!appended)
        return Error(
            appended.error().code(),
            "The change was not made because its audit entry could not be written (" + [&] {
                std::string m = appended.error().message();
                m.pop_back();  // the full stop
                std::replace(m.begin(), m.end(), '.', ',');
                return m;
            }() + "); fix the audit store and try again.");
    return success();
}

Result<void> ControlPlane::recordRefusal(const audit::Actor& actor, const Request& request,
                                         audit::Outcome outcome, const Error& error,
                                         bool breakGlass)
{
    auto transaction = database_.begin();
    if (!transaction)
        return transaction.error();
    audit::EntryDraft draft;
    draft.actor = actor;
    draft.action = request.action;
    draft.target = request.target;
    draft.outcome = outcome;
    draft.reason = error.message();
    if (!request.project.empty())
        draft.details.push_back(audit::textDetail("project", request.project));
    if (breakGlass)
        draft.details.push_back(audit::textDetail("break_glass", "true"));
    SEALTRAIN_TRY(appendEntry(**transaction, draft));
    return (*transaction)->commit();
}

Result<ControlPlane::Caller> ControlPlane::authenticate(const std::string& session)
{
    auto statement = database_.prepare(
        "SELECT s.id, s.created, s.last_used, s.revoked, u.id, u.name, u.disabled "
        "FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?");
    if (!statement)
        return statement.error();
    statement->bindBlob(1, tokenHash(session));
    auto row = statement->step();
    if (!row)
        return row.error();
    if (!*row)
        return Error(ErrorCode::Unauthenticated, "The session is not valid; sign in again.");
    Caller caller;
    const std::int64_t sessionRow = statement->integer(0);
    caller.sessionId = "s" + std::to_string(sessionRow);
    caller.userId = statement->integer(4);
    caller.name = statement->text(5);
    const std::int64_t t = now();
    const bool expired = t - statement->integer(2) > options_.sessionIdle.count()
                         || t - statement->integer(1) > options_.sessionMax.count();
    if (statement->integer(3) != 0)
        return Error(ErrorCode::Unauthenticated, "The session was revoked; sign in again.");
    if (statement->integer(6) != 0)
        return Error(ErrorCode::Unauthenticated,
                     "The account '" + caller.name + "' is disabled; ask an admin.");
    if (expired)
        return Error(ErrorCode::Unauthenticated, "The session has expired; sign in again.");
    auto touch = database_.prepare("UPDATE sessions SET last_used = ? WHERE id = ?");
    if (!touch)
        return touch.error();
    touch->bind(1, t).bind(2, sessionRow);
    SEALTRAIN_TRY(touch->run());
    auto breakGlass = database_.prepare("SELECT count(*) FROM grants WHERE user_id = ? AND "
                                        "break_glass = 1 AND expires > ?");
    if (!breakGlass)
        return breakGlass.error();
    breakGlass->bind(1, caller.userId).bind(2, t);
    SEALTRAIN_TRY(breakGlass->step());
    caller.breakGlass = breakGlass->integer(0) > 0;
    return caller;
}

// The one permission check: does any unexpired grant of the caller, global or for `project`,
// give a role that holds `permission`?
Result<void> ControlPlane::authorize(const Caller& caller, std::string_view permission,
                                     const std::string& project)
{
    if (permission.empty())
        return success();
    auto statement = database_.prepare(
        "SELECT count(*) FROM grants g JOIN role_permissions p ON p.role = g.role "
        "WHERE g.user_id = ? AND p.permission = ? AND (g.project = '' OR g.project = ?) "
        "AND (g.expires = 0 OR g.expires > ?)");
    if (!statement)
        return statement.error();
    statement->bind(1, caller.userId).bind(2, permission).bind(3, project).bind(4, now());
    SEALTRAIN_TRY(statement->step());
    if (statement->integer(0) == 0)
        return denied("The user '" + caller.name + "' lacks the permission '"
                      + std::string(permission) + "'"
                      + (project.empty() ? std::string() : " in project '" + project + "'")
                      + "; ask an admin for a grant.");
    return success();
}

Result<void> ControlPlane::perform(const std::string& session, const Request& request,
                                   const Body& body)
{
    auto transaction = database_.begin();
    if (!transaction)
        return transaction.error();
    auto caller = authenticate(session);
    if (!caller) {
        (*transaction)->rollback();
        if (caller.error().code() != ErrorCode::Unauthenticated)
            return caller.error();
        // The session's owner when the token is known (revoked, expired, disabled), else nobody.
        audit::Actor actor{audit::ActorKind::User, "unknown", "", std::string(kAuthMethod)};
        if (auto owner = database_.prepare("SELECT s.id, u.name FROM sessions s JOIN users u ON "
                                           "u.id = s.user_id WHERE s.token_hash = ?")) {
            owner->bindBlob(1, tokenHash(session));
            if (auto row = owner->step(); row && *row)
                actor = userActor(owner->text(1), "s" + std::to_string(owner->integer(0)));
        }
        SEALTRAIN_TRY(recordRefusal(actor, request, audit::Outcome::Denied, caller.error(), false));
        return caller.error();
    }
    const audit::Actor actor = userActor(caller->name, caller->sessionId);
    Result<void> outcome = authorize(*caller, request.permission, request.project);
    audit::EntryDraft draft;
    draft.actor = actor;
    draft.action = request.action;
    draft.target = request.target;
    if (outcome)
        outcome = body(*caller, draft);
    if (!outcome) {
        (*transaction)->rollback();
        const auto code = outcome.error().code();
        const bool refusal = code == ErrorCode::PermissionDenied;
        if (refusal || code == ErrorCode::InvalidArgument || code == ErrorCode::NotFound
            || code == ErrorCode::AlreadyExists)
            SEALTRAIN_TRY(recordRefusal(actor, request,
                                        refusal ? audit::Outcome::Denied : audit::Outcome::Failed,
                                        outcome.error(), caller->breakGlass));
        return outcome.error();
    }
    if (!request.project.empty())
        draft.details.push_back(audit::textDetail("project", request.project));
    if (caller->breakGlass)
        draft.details.push_back(audit::textDetail("break_glass", "true"));
    SEALTRAIN_TRY(appendEntry(**transaction, draft));
    return (*transaction)->commit();
}

Result<Enrollment> ControlPlane::storeNewCredentials(std::int64_t id, const std::string& name,
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
    auto statement = database_.prepare(
        "UPDATE users SET password_hash = ?, totp_secret = ?, totp_last_step = 0, "
        "failed_attempts = 0, locked_until = 0 WHERE id = ?");
    if (!statement)
        return statement.error();
    statement->bind(1, *hash).bindBlob(2, secret->bytes()).bind(3, id);
    SEALTRAIN_TRY(statement->run());
    return Enrollment{name, otpauthUri(options_.totpIssuer, name, *secret)};
}

Result<Enrollment> ControlPlane::init(const std::string& adminName,
                                      const crypto::SecretBytes& password)
{
    if (!isValidName(adminName))
        return Error(ErrorCode::InvalidArgument,
                     "The user name must be 1 to 64 of a-z, 0-9, '_' and '-'; choose another.");
    auto transaction = database_.begin();
    if (!transaction)
        return transaction.error();
    auto any = database_.prepare("SELECT count(*) FROM users");
    if (!any)
        return any.error();
    SEALTRAIN_TRY(any->step());
    if (any->integer(0) != 0)
        return Error(ErrorCode::AlreadyExists,
                     "The control plane is already initialised; sign in as an admin instead.");
    for (const auto& role : defaultRoles()) {
        auto insert =
            database_.prepare("INSERT OR IGNORE INTO roles (name, builtin) VALUES (?, 1)");
        if (!insert)
            return insert.error();
        insert->bind(1, role.name);
        SEALTRAIN_TRY(insert->run());
        for (const auto& permission : role.permissions) {
            auto add = database_.prepare(
                "INSERT OR IGNORE INTO role_permissions (role, permission) VALUES (?, ?)");
            if (!add)
                return add.error();
            add->bind(1, role.name).bind(2, permission);
            SEALTRAIN_TRY(add->run());
        }
    }
    auto user = database_.prepare("INSERT INTO users (name, password_hash, totp_secret, created) "
                                  "VALUES (?, '', x'', ?)");
    if (!user)
        return user.error();
    user->bind(1, adminName).bind(2, now());
    SEALTRAIN_TRY(user->run());
    const std::int64_t id = database_.lastInsertId();
    auto enrollment = storeNewCredentials(id, adminName, password);
    if (!enrollment)
        return enrollment.error();
    auto grant = database_.prepare("INSERT INTO grants (user_id, role) VALUES (?, ?)");
    if (!grant)
        return grant.error();
    grant->bind(1, id).bind(2, kAdminRole);
    SEALTRAIN_TRY(grant->run());
    audit::EntryDraft draft;
    draft.actor = {audit::ActorKind::System, "init", "", "local"};
    draft.action = "control.init";
    draft.target = {"user", adminName};
    draft.details.push_back(audit::textDetail("role", kAdminRole));
    SEALTRAIN_TRY(appendEntry(**transaction, draft));
    SEALTRAIN_TRY((*transaction)->commit());
    return enrollment;
}

Result<std::string> ControlPlane::signIn(const std::string& name,
                                         const crypto::SecretBytes& password,
                                         const std::string& totpCode)
{
    const Request request{"session.sign_in", {}, {}, {"user", name}};
    auto transaction = database_.begin();
    if (!transaction)
        return transaction.error();
    auto statement = database_.prepare(
        "SELECT id, password_hash, totp_secret, totp_last_step, disabled, failed_attempts, "
        "locked_until FROM users WHERE name = ?");
    if (!statement)
        return statement.error();
    statement->bind(1, name);
    auto row = statement->step();
    if (!row)
        return row.error();
    const Error wrong(ErrorCode::Unauthenticated,
                      "The user name, password or TOTP code is wrong; try again.");
    const std::int64_t t = now();
    audit::EntryDraft draft;
    draft.actor = {audit::ActorKind::User, name, "", std::string(kAuthMethod)};
    draft.action = request.action;
    draft.target = request.target;
    draft.outcome = audit::Outcome::Denied;
    if (!*row) {
        // As slow as a wrong password: the result is thrown away.
        const bool atFloor =
            options_.passwordHashing.opsLimit == crypto::kArgon2Floor.opsLimit
            && options_.passwordHashing.memLimitBytes == crypto::kArgon2Floor.memLimitBytes;
        if (atFloor) {
            (void)verifyPassword(std::string(kDummyHashAtFloor), password);
        } else if (auto dummy = hashPassword(password, options_.passwordHashing); !dummy) {
            return dummy.error();
        }
        // An unknown name may be a mistyped password: it is kept only as a keyed hash.
        draft.actor.id = "unknown";
        if (auditKey_ != nullptr)
            draft.sensitive.emplace_back("user_name", name);
        draft.target = {"user", "unknown"};
        draft.reason = "unknown user";
        SEALTRAIN_TRY(appendEntry(**transaction, draft));
        SEALTRAIN_TRY((*transaction)->commit());
        return wrong;
    }
    const std::int64_t id = statement->integer(0);
    const std::string hash = statement->text(1);
    auto secret = crypto::SecretBytes::fromBytes(statement->blob(2));
    if (!secret)
        return secret.error();
    const auto lastStep = static_cast<std::uint64_t>(statement->integer(3));
    const bool disabled = statement->integer(4) != 0;
    const std::int64_t failures = statement->integer(5);
    const std::int64_t lockedUntil = statement->integer(6);

    std::optional<Error> refusal;
    if (disabled) {
        refusal = Error(ErrorCode::PermissionDenied,
                        "The account '" + name + "' is disabled; ask an admin.");
    } else if (lockedUntil > t) {
        refusal = Error(ErrorCode::PermissionDenied,
                        "The account '" + name + "' is locked after repeated failed sign-ins for "
                            + std::to_string(lockedUntil - t) + " more seconds; wait and retry.");
    } else {
        const std::uint64_t step = matchTotp(*secret, totpStep(clock_.now()), totpCode);
        const bool passwordOk = verifyPassword(hash, password);
        if (!passwordOk || step == 0 || step <= lastStep) {
            const std::int64_t count = failures + 1;
            std::int64_t until = 0;
            if (count >= options_.maxFailedSignIns) {
                const auto doublings =
                    std::min<std::int64_t>(count - options_.maxFailedSignIns, 20);
                const std::int64_t backoff = std::min<std::int64_t>(
                    options_.lockout.count() << doublings, options_.maxLockout.count());
                until = t + backoff;
            }
            auto update = database_.prepare(
                "UPDATE users SET failed_attempts = ?, locked_until = ? WHERE id = ?");
            if (!update)
                return update.error();
            update->bind(1, count).bind(2, until).bind(3, id);
            SEALTRAIN_TRY(update->run());
            draft.reason = !passwordOk ? "wrong password"
                           : step == 0 ? "wrong TOTP code"
                                       : "TOTP code reused";
            draft.details.push_back(audit::textDetail("failed_attempts", std::to_string(count)));
            if (until != 0)
                draft.details.push_back(audit::textDetail("locked_until", std::to_string(until)));
            SEALTRAIN_TRY(appendEntry(**transaction, draft));
            SEALTRAIN_TRY((*transaction)->commit());
            return wrong;
        }
        auto update = database_.prepare("UPDATE users SET failed_attempts = 0, locked_until = 0, "
                                        "totp_last_step = ? WHERE id = ?");
        if (!update)
            return update.error();
        update->bind(1, static_cast<std::int64_t>(step)).bind(2, id);
        SEALTRAIN_TRY(update->run());
    }
    if (refusal) {
        draft.reason = refusal->message();
        SEALTRAIN_TRY(appendEntry(**transaction, draft));
        SEALTRAIN_TRY((*transaction)->commit());
        return *refusal;
    }
    const auto random = crypto::randomBytes(32);
    std::string token = "st_" + toBase64Url(random);
    auto insert = database_.prepare(
        "INSERT INTO sessions (token_hash, user_id, created, last_used) VALUES (?, ?, ?, ?)");
    if (!insert)
        return insert.error();
    insert->bindBlob(1, tokenHash(token)).bind(2, id).bind(3, t).bind(4, t);
    SEALTRAIN_TRY(insert->run());
    draft.actor.session = "s" + std::to_string(database_.lastInsertId());
    draft.outcome = audit::Outcome::Ok;
    SEALTRAIN_TRY(appendEntry(**transaction, draft));
    SEALTRAIN_TRY((*transaction)->commit());
    return token;
}

Result<void> ControlPlane::signOut(const std::string& session)
{
    return perform(session, {"session.sign_out", {}, {}, {"session", ""}},
                   [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
                       draft.target.id = caller.sessionId;
                       auto statement = database_.prepare(
                           "UPDATE sessions SET revoked = 1 WHERE token_hash = ?");
                       if (!statement)
                           return statement.error();
                       statement->bindBlob(1, tokenHash(session));
                       return statement->run();
                   });
}

Result<Enrollment> ControlPlane::createUser(const std::string& session, const std::string& name,
                                            const crypto::SecretBytes& password)
{
    Enrollment enrollment;
    auto performed = perform(
        session, {"user.create", permission::kUserManage, {}, {"user", name}},
        [&](const Caller&, audit::EntryDraft&) -> Result<void> {
            if (!isValidName(name))
                return Error(ErrorCode::InvalidArgument,
                             "The user name must be 1 to 64 of a-z, 0-9, '_' and '-'; choose "
                             "another.");
            auto insert = database_.prepare("INSERT INTO users (name, password_hash, "
                                            "totp_secret, created) VALUES (?, '', x'', ?)");
            if (!insert)
                return insert.error();
            insert->bind(1, name).bind(2, now());
            if (auto done = insert->run(); !done)
                return Error(ErrorCode::AlreadyExists,
                             "A user named '" + name + "' already exists; choose another name.");
            auto created = storeNewCredentials(database_.lastInsertId(), name, password);
            if (!created)
                return created.error();
            enrollment = std::move(*created);
            return success();
        });
    if (!performed)
        return performed.error();
    return enrollment;
}

// Refuses when `userId` is the only enabled user holding the admin role globally (break-glass
// grants do not count: they expire).
Result<void> ControlPlane::requireAnotherAdmin(std::int64_t id, const std::string& what)
{
    auto statement = database_.prepare(
        "SELECT count(DISTINCT u.id), sum(u.id = ?) FROM users u JOIN grants g ON g.user_id = u.id "
        "WHERE g.role = ? AND g.project = '' AND g.break_glass = 0 AND g.expires = 0 "
        "AND u.disabled = 0");
    if (!statement)
        return statement.error();
    statement->bind(1, id).bind(2, kAdminRole);
    SEALTRAIN_TRY(statement->step());
    if (statement->integer(1) > 0 && statement->integer(0) <= 1)
        return denied("Cannot " + what + ": it is the last admin; make another admin first.");
    return success();
}

// Infrastructure operators hold no data or job permissions, whatever the project and however
// the grant is made (break-glass too): refuses a grant that would give one user both classes.
Result<void> ControlPlane::requireSeparateOperator(std::int64_t id, const std::string& user,
                                                   const std::string& role)
{
    constexpr std::string_view kClasses =
        "sum(p.permission LIKE 'worker.%'), "
        "sum(p.permission LIKE 'dataset.%' OR p.permission LIKE 'job.%')";
    auto granted = database_.prepare("SELECT " + std::string(kClasses)
                                     + " FROM role_permissions p WHERE p.role = ?");
    if (!granted)
        return granted.error();
    granted->bind(1, role);
    SEALTRAIN_TRY(granted->step());
    const bool grantsInfrastructure = granted->integer(0) > 0;
    const bool grantsData = granted->integer(1) > 0;
    if (!grantsInfrastructure && !grantsData)
        return success();
    auto held = database_.prepare("SELECT " + std::string(kClasses)
                                  + " FROM grants g JOIN role_permissions p ON p.role = g.role "
                                    "WHERE g.user_id = ? AND (g.expires = 0 OR g.expires > ?)");
    if (!held)
        return held.error();
    held->bind(1, id).bind(2, now());
    SEALTRAIN_TRY(held->step());
    if (grantsData && held->integer(0) > 0)
        return denied("The user '" + user
                      + "' operates infrastructure and may not hold data or job permissions; "
                        "use a separate account.");
    if (grantsInfrastructure && held->integer(1) > 0)
        return denied("The user '" + user
                      + "' holds data or job permissions and may not operate infrastructure; "
                        "use a separate account.");
    return success();
}

Result<void> ControlPlane::disableUser(const std::string& session, const std::string& name)
{
    return perform(session, {"user.disable", permission::kUserManage, {}, {"user", name}},
                   [&](const Caller&, audit::EntryDraft&) -> Result<void> {
                       auto id = userIdByName(database_, name);
                       if (!id)
                           return id.error();
                       SEALTRAIN_TRY(requireAnotherAdmin(*id, "disable '" + name + "'"));
                       auto statement =
                           database_.prepare("UPDATE users SET disabled = 1 WHERE id = ?");
                       if (!statement)
                           return statement.error();
                       statement->bind(1, *id);
                       SEALTRAIN_TRY(statement->run());
                       auto revoke =
                           database_.prepare("UPDATE sessions SET revoked = 1 WHERE user_id = ?");
                       if (!revoke)
                           return revoke.error();
                       revoke->bind(1, *id);
                       return revoke->run();
                   });
}

Result<void> ControlPlane::enableUser(const std::string& session, const std::string& name)
{
    return perform(session, {"user.enable", permission::kUserManage, {}, {"user", name}},
                   [&](const Caller&, audit::EntryDraft&) -> Result<void> {
                       auto id = userIdByName(database_, name);
                       if (!id)
                           return id.error();
                       auto statement = database_.prepare(
                           "UPDATE users SET disabled = 0, failed_attempts = 0, locked_until = 0 "
                           "WHERE id = ?");
                       if (!statement)
                           return statement.error();
                       statement->bind(1, *id);
                       return statement->run();
                   });
}

Result<Enrollment> ControlPlane::resetUser(const std::string& session, const std::string& name,
                                           const crypto::SecretBytes& password)
{
    Enrollment enrollment;
    auto performed = perform(session, {"user.reset", permission::kUserManage, {}, {"user", name}},
                             [&](const Caller&, audit::EntryDraft&) -> Result<void> {
                                 auto id = userIdByName(database_, name);
                                 if (!id)
                                     return id.error();
                                 auto created = storeNewCredentials(*id, name, password);
                                 if (!created)
                                     return created.error();
                                 enrollment = std::move(*created);
                                 auto revoke = database_.prepare(
                                     "UPDATE sessions SET revoked = 1 WHERE user_id = ?");
                                 if (!revoke)
                                     return revoke.error();
                                 revoke->bind(1, *id);
                                 return revoke->run();
                             });
    if (!performed)
        return performed.error();
    return enrollment;
}

Result<void> ControlPlane::revokeSessions(const std::string& session, const std::string& name)
{
    return perform(session, {"session.revoke", permission::kSessionManage, {}, {"user", name}},
                   [&](const Caller&, audit::EntryDraft&) -> Result<void> {
                       auto id = userIdByName(database_, name);
                       if (!id)
                           return id.error();
                       auto revoke =
                           database_.prepare("UPDATE sessions SET revoked = 1 WHERE user_id = ?");
                       if (!revoke)
                           return revoke.error();
                       revoke->bind(1, *id);
                       return revoke->run();
                   });
}

Result<std::vector<UserInfo>> ControlPlane::listUsers(const std::string& session)
{
    std::vector<UserInfo> users;
    auto performed = perform(
        session, {"user.list", permission::kUserManage, {}, {"user", "*"}},
        [&](const Caller&, audit::EntryDraft&) -> Result<void> {
            auto statement = database_.prepare(
                "SELECT u.name, u.disabled, g.role, g.project, g.break_glass FROM users u "
                "LEFT JOIN grants g ON g.user_id = u.id ORDER BY u.name, g.role, g.project");
            if (!statement)
                return statement.error();
            return forEachRow(*statement, [&](const Statement& row) {
                if (users.empty() || users.back().name != row.text(0))
                    users.push_back({row.text(0), row.integer(1) != 0, {}});
                if (!row.isNull(2)) {
                    std::string grant = row.text(2);
                    if (!row.text(3).empty())
                        grant += "@" + row.text(3);
                    if (row.integer(4) != 0)
                        grant += "!";
                    users.back().grants.push_back(std::move(grant));
                }
            });
        });
    if (!performed)
        return performed.error();
    return users;
}

Result<void> ControlPlane::createRole(const std::string& session, const std::string& name,
                                      const std::vector<std::string>& permissions)
{
    return perform(
        session, {"role.create", permission::kRoleManage, {}, {"role", name}},
        [&](const Caller&, audit::EntryDraft& draft) -> Result<void> {
            if (!isValidName(name))
                return Error(ErrorCode::InvalidArgument,
                             "The role name must be 1 to 64 of a-z, 0-9, '_' and '-'; choose "
                             "another.");
            bool administration = false;
            bool other = false;
            for (const auto& p : permissions) {
                if (!permission::isKnown(p))
                    return Error(ErrorCode::InvalidArgument,
                                 "The permission '" + p + "' is unknown; see 'role permissions'.");
                (isAdministration(p) ? administration : other) = true;
            }
            if (administration && other)
                return denied("A role may not combine identity administration with data, job "
                              "or audit permissions; make two roles.");
            const bool infrastructure =
                std::any_of(permissions.begin(), permissions.end(),
                            [](const auto& p) { return isInfrastructure(p); });
            const bool data = std::any_of(permissions.begin(), permissions.end(),
                                          [](const auto& p) { return isDataOrJob(p); });
            if (infrastructure && data)
                return denied("A role may not combine infrastructure (worker) permissions with "
                              "data or job permissions; make two roles.");
            auto insert = database_.prepare("INSERT INTO roles (name) VALUES (?)");
            if (!insert)
                return insert.error();
            insert->bind(1, name);
            if (auto done = insert->run(); !done)
                return Error(ErrorCode::AlreadyExists,
                             "A role named '" + name + "' already exists; choose another name.");
            for (const auto& p : permissions) {
                auto add = database_.prepare(
                    "INSERT OR IGNORE INTO role_permissions (role, permission) VALUES (?, ?)");
                if (!add)
                    return add.error();
                add->bind(1, name).bind(2, p);
                SEALTRAIN_TRY(add->run());
                draft.details.push_back(audit::textDetail("permission", p));
            }
            return success();
        });
}

Result<void> ControlPlane::deleteRole(const std::string& session, const std::string& name)
{
    return perform(
        session, {"role.delete", permission::kRoleManage, {}, {"role", name}},
        [&](const Caller&, audit::EntryDraft&) -> Result<void> {
            auto builtin =
                exists(database_, "SELECT 1 FROM roles WHERE name = ? AND builtin = 1", name);
            if (!builtin)
                return builtin.error();
            if (*builtin)
                return denied("The role '" + name + "' is a default role and can not be deleted.");
            auto inUse = exists(database_, "SELECT 1 FROM grants WHERE role = ?", name);
            if (!inUse)
                return inUse.error();
            if (*inUse)
                return Error(ErrorCode::InvalidArgument,
                             "The role '" + name + "' is still granted; revoke its grants first.");
            auto statement = database_.prepare("DELETE FROM roles WHERE name = ?");
            if (!statement)
                return statement.error();
            statement->bind(1, name);
            SEALTRAIN_TRY(statement->run());
            if (database_.changes() == 0)
                return Error(ErrorCode::NotFound,
                             "There is no role '" + name + "'; check the name.");
            return success();
        });
}

Result<void> ControlPlane::grantRole(const std::string& session, const std::string& user,
                                     const std::string& role, const std::string& project)
{
    return grantBreakGlass(session, user, role, project, {}, std::chrono::seconds{0});
}

Result<void> ControlPlane::grantBreakGlass(const std::string& session, const std::string& user,
                                           const std::string& role, const std::string& project,
                                           const std::string& reason, std::chrono::seconds duration)
{
    const bool breakGlass = duration.count() != 0 || !reason.empty();
    return perform(
        session,
        {breakGlass ? "grant.break_glass" : "grant.create",
         permission::kGrantManage,
         project,
         {"user", user}},
        [&](const Caller&, audit::EntryDraft& draft) -> Result<void> {
            if (!project.empty() && !isValidName(project))
                return Error(ErrorCode::InvalidArgument,
                             "The project name must be 1 to 64 of a-z, 0-9, '_' and '-'; choose "
                             "another.");
            if (breakGlass
                && (reason.empty() || duration.count() <= 0 || duration > options_.maxBreakGlass))
                return Error(ErrorCode::InvalidArgument,
                             "A break-glass grant needs a reason and a duration of at most "
                                 + std::to_string(options_.maxBreakGlass.count())
                                 + " seconds; give both.");
            auto id = userIdByName(database_, user);
            if (!id)
                return id.error();
            auto known = exists(database_, "SELECT 1 FROM roles WHERE name = ?", role);
            if (!known)
                return known.error();
            if (!*known)
                return Error(ErrorCode::NotFound,
                             "There is no role '" + role + "'; check the name with 'role list'.");
            SEALTRAIN_TRY(requireSeparateOperator(*id, user, role));
            auto insert = database_.prepare("INSERT INTO grants (user_id, role, project, expires, "
                                            "break_glass, reason) VALUES (?, ?, ?, ?, ?, ?)");
            if (!insert)
                return insert.error();
            insert->bind(1, *id)
                .bind(2, role)
                .bind(3, project)
                .bind(4, breakGlass ? now() + duration.count() : std::int64_t{0})
                .bind(5, std::int64_t{breakGlass ? 1 : 0})
                .bind(6, reason);
            if (auto done = insert->run(); !done)
                return Error(ErrorCode::AlreadyExists,
                             "The user '" + user + "' already holds the role '" + role
                                 + "' there; revoke it first to change it.");
            draft.details.push_back(audit::textDetail("role", role));
            if (breakGlass) {
                draft.details.push_back(audit::textDetail("break_glass", "true"));
                draft.details.push_back(
                    audit::textDetail("expires_in_s", std::to_string(duration.count())));
                draft.details.push_back(audit::textDetail("break_glass_reason", reason));
            }
            return success();
        });
}

Result<void> ControlPlane::revokeRole(const std::string& session, const std::string& user,
                                      const std::string& role, const std::string& project)
{
    return perform(
        session, {"grant.revoke", permission::kGrantManage, project, {"user", user}},
        [&](const Caller&, audit::EntryDraft& draft) -> Result<void> {
            auto id = userIdByName(database_, user);
            if (!id)
                return id.error();
            if (role == kAdminRole && project.empty())
                SEALTRAIN_TRY(requireAnotherAdmin(*id, "revoke admin from '" + user + "'"));
            auto statement = database_.prepare(
                "DELETE FROM grants WHERE user_id = ? AND role = ? AND project = ?");
            if (!statement)
                return statement.error();
            statement->bind(1, *id).bind(2, role).bind(3, project);
            SEALTRAIN_TRY(statement->run());
            if (database_.changes() == 0)
                return Error(ErrorCode::NotFound, "The user '" + user + "' does not hold the role '"
                                                      + role + "' there; check with 'user list'.");
            draft.details.push_back(audit::textDetail("role", role));
            return success();
        });
}

Result<std::int64_t> ControlPlane::submit(const std::string& session, const std::string& kind,
                                          const std::string& name, const std::string& project,
                                          const crypto::Sha256Digest& contentHash)
{
    std::int64_t id = 0;
    auto performed =
        perform(session, {kind + ".submit", permission::kJobSubmit, project, {kind, name}},
                [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
                    auto insert = database_.prepare("INSERT INTO submissions (kind, name, project, "
                                                    "submitter, content_hash, created) "
                                                    "VALUES (?, ?, ?, ?, ?, ?)");
                    if (!insert)
                        return insert.error();
                    insert->bind(1, kind).bind(2, name).bind(3, project).bind(4, caller.userId);
                    insert->bindBlob(5, contentHash).bind(6, now());
                    SEALTRAIN_TRY(insert->run());
                    id = database_.lastInsertId();
                    draft.details.push_back(audit::textDetail("submission", std::to_string(id)));
                    draft.details.push_back(audit::textDetail("sha256", toHex(contentHash)));
                    return success();
                });
    if (!performed)
        return performed.error();
    return id;
}

namespace {

struct Submission {
    std::string kind;
    std::string name;
    std::string project;
    std::int64_t submitter = 0;
    std::vector<std::uint8_t> contentHash;
};

Result<Submission> loadSubmission(const Database& database, std::int64_t id)
{
    auto statement = database.prepare(
        "SELECT kind, name, project, submitter, content_hash FROM submissions WHERE id = ?");
    if (!statement)
        return statement.error();
    statement->bind(1, id);
    auto row = statement->step();
    if (!row)
        return row.error();
    if (!*row)
        return Error(ErrorCode::NotFound,
                     "There is no submission " + std::to_string(id) + "; check the number.");
    return Submission{statement->text(0), statement->text(1), statement->text(2),
                      statement->integer(3), statement->blob(4)};
}

// The submission's project scopes the permission check, so it is read before perform() runs.
Result<Submission> peekSubmission(Database& database, std::int64_t id)
{
    return loadSubmission(database, id);
}

}  // namespace

Result<void> ControlPlane::editSubmission(const std::string& session, std::int64_t id,
                                          const crypto::Sha256Digest& contentHash)
{
    auto peeked = peekSubmission(database_, id);
    const std::string project = peeked ? peeked->project : std::string();
    const std::string kind = peeked ? peeked->kind : std::string("job");
    return perform(
        session, {kind + ".edit", permission::kJobSubmit, project, {kind, std::to_string(id)}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
            auto submission = loadSubmission(database_, id);
            if (!submission)
                return submission.error();
            if (submission->submitter != caller.userId)
                return denied("Only the submitter may edit submission " + std::to_string(id)
                              + "; submit your own instead.");
            auto update = database_.prepare("UPDATE submissions SET content_hash = ? WHERE id = ?");
            if (!update)
                return update.error();
            update->bindBlob(1, contentHash).bind(2, id);
            SEALTRAIN_TRY(update->run());
            draft.details.push_back(audit::textDetail("sha256", toHex(contentHash)));
            return success();
        });
}

Result<void> ControlPlane::approve(const std::string& session, std::int64_t id,
                                   const crypto::Sha256Digest& contentHash)
{
    auto peeked = peekSubmission(database_, id);
    const std::string project = peeked ? peeked->project : std::string();
    const std::string kind = peeked ? peeked->kind : std::string("job");
    return perform(
        session, {kind + ".approve", permission::kJobApprove, project, {kind, std::to_string(id)}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
            auto submission = loadSubmission(database_, id);
            if (!submission)
                return submission.error();
            draft.details.push_back(audit::textDetail("sha256", toHex(contentHash)));
            if (submission->submitter == caller.userId)
                return denied("Nobody may approve their own submission; ask another approver.");
            if (!std::equal(submission->contentHash.begin(), submission->contentHash.end(),
                            contentHash.begin(), contentHash.end()))
                return denied("The approval is for content that differs from the submission's "
                              "current SHA-256; review the current version and approve that.");
            auto insert = database_.prepare("INSERT INTO approvals (submission_id, approver, "
                                            "content_hash, created) VALUES (?, ?, ?, ?)");
            if (!insert)
                return insert.error();
            insert->bind(1, id).bind(2, caller.userId).bindBlob(3, contentHash).bind(4, now());
            return insert->run();
        });
}

Result<bool> ControlPlane::isApproved(const std::string& session, std::int64_t id)
{
    auto peeked = peekSubmission(database_, id);
    const std::string project = peeked ? peeked->project : std::string();
    const std::string kind = peeked ? peeked->kind : std::string("job");
    bool approved = false;
    auto performed = perform(
        session, {kind + ".status", permission::kJobSubmit, project, {kind, std::to_string(id)}},
        [&](const Caller&, audit::EntryDraft&) -> Result<void> {
            auto statement = database_.prepare(
                "SELECT count(*) FROM approvals a JOIN submissions s ON s.id = a.submission_id "
                "WHERE s.id = ? AND a.content_hash = s.content_hash AND a.approver != s.submitter");
            if (!statement)
                return statement.error();
            statement->bind(1, id);
            SEALTRAIN_TRY(statement->step());
            approved = statement->integer(0) > 0;
            return success();
        });
    if (!performed)
        return performed.error();
    return approved;
}

Result<std::vector<audit::Entry>> ControlPlane::readAudit(const std::string& session,
                                                          std::uint64_t first, std::uint64_t count)
{
    auto performed =
        perform(session, {"audit.read", permission::kAuditRead, {}, {"audit", "log"}},
                [&](const Caller&, audit::EntryDraft& draft) -> Result<void> {
                    draft.details.push_back(audit::textDetail("first", std::to_string(first)));
                    draft.details.push_back(audit::textDetail("count", std::to_string(count)));
                    return success();
                });
    if (!performed)
        return performed.error();
    auto stored = log_->store().readEntries(first, count);
    if (!stored)
        return stored.error();
    std::vector<audit::Entry> entries;
    for (const auto& s : *stored) {
        auto entry = audit::decodeEntry(s.bytes);
        if (!entry)
            return entry.error();
        entries.push_back(std::move(*entry));
    }
    return entries;
}

Result<std::vector<SessionInfo>> ControlPlane::listSessions(const std::string& session)
{
    std::vector<SessionInfo> sessions;
    auto performed =
        perform(session, {"session.list", permission::kSessionManage, {}, {"session", "*"}},
                [&](const Caller&, audit::EntryDraft&) -> Result<void> {
                    auto statement = database_.prepare(
                        "SELECT s.id, u.name, s.created, s.last_used, s.revoked FROM sessions s "
                        "JOIN users u ON u.id = s.user_id ORDER BY s.id DESC");
                    if (!statement)
                        return statement.error();
                    const std::int64_t t = now();
                    return forEachRow(*statement, [&](const Statement& row) {
                        SessionInfo info;
                        info.id = "s" + std::to_string(row.integer(0));
                        info.user = row.text(1);
                        info.created = row.integer(2);
                        info.lastUsed = row.integer(3);
                        info.revoked = row.integer(4) != 0;
                        info.expired = t - info.lastUsed > options_.sessionIdle.count()
                                       || t - info.created > options_.sessionMax.count();
                        sessions.push_back(std::move(info));
                    });
                });
    if (!performed)
        return performed.error();
    return sessions;
}

Result<std::vector<RoleInfo>> ControlPlane::listRoles(const std::string& session)
{
    std::vector<RoleInfo> roles;
    auto performed = perform(
        session, {"role.list", permission::kRoleManage, {}, {"role", "*"}},
        [&](const Caller&, audit::EntryDraft&) -> Result<void> {
            auto statement = database_.prepare(
                "SELECT r.name, r.builtin, p.permission FROM roles r LEFT JOIN role_permissions "
                "p ON p.role = r.name ORDER BY r.builtin DESC, r.name, p.permission");
            if (!statement)
                return statement.error();
            return forEachRow(*statement, [&](const Statement& row) {
                if (roles.empty() || roles.back().name != row.text(0))
                    roles.push_back({row.text(0), row.integer(1) != 0, {}});
                if (!row.isNull(2))
                    roles.back().permissions.push_back(row.text(2));
            });
        });
    if (!performed)
        return performed.error();
    return roles;
}

Result<std::string> ControlPlane::exportAudit(const std::string& session,
                                              const audit::ExportFilter& filter)
{
    auto performed =
        perform(session, {"audit.export", permission::kAuditExport, {}, {"audit", "log"}},
                [&](const Caller&, audit::EntryDraft& draft) -> Result<void> {
                    draft.details.push_back(audit::textDetail("filter", filter.describe()));
                    return success();
                });
    if (!performed)
        return performed.error();
    return audit::exportBundle(*log_, filter);
}

}  // namespace sealtrain::core
