// The audited transaction: authentication, the one permission check, and the audit entry that
// goes with every decision, allowed or denied, committed with the change or not at all.
#include "store/audited_transaction.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/base/logging.h"
#include "sealtrain/base/utf8.h"
#include "sealtrain/core/store/reason_codes.h"

#include <fmt/format.h>

#include <algorithm>

namespace sealtrain::core {

namespace {

// A refusal's reason code, when it has one, as its entry's reason_code detail (audit.md).
void addReasonCode(audit::EntryDraft& draft, const Error& error)
{
    if (!error.reasonCode().empty())
        draft.details.push_back(audit::textDetail("reason_code", std::string(error.reasonCode())));
}

audit::Actor userActor(const std::string& name, const std::string& sessionId)
{
    return {audit::ActorKind::User, name, sessionId, std::string(kAuthMethod)};
}

audit::EntryDraft draftFor(const audit::Actor& actor, const AuditedRequest& request)
{
    audit::EntryDraft draft;
    draft.actor = actor;
    draft.action = request.action;
    draft.target = request.target;
    return draft;
}

// Every entry of a project-scoped call names the project; every entry made under a break-glass
// grant says so.
void addScope(audit::EntryDraft& draft, const std::string& project, bool breakGlass)
{
    if (!project.empty())
        draft.details.push_back(audit::textDetail("project", project));
    if (breakGlass)
        draft.details.push_back(audit::textDetail("break_glass", "true"));
}

// A refusal's caller-chosen fields (a target named in the request, a reason quoting it, the
// details) may be anything a caller sends: each is cut to kRefusalFieldBytes at a character
// boundary, bytes that are not UTF-8 are written as \xNN, and at most kRefusalDetails details
// are kept, so that the entry always fits the format and is never dropped (issue #27: a 64 KiB
// name made a refusal leave no entry). What was cut is said in the field itself.
constexpr std::size_t kRefusalFieldBytes = 4096;
constexpr std::size_t kRefusalDetails = 64;

void fitField(std::string& text)
{
    if (text.size() <= kRefusalFieldBytes && isValidUtf8(text))
        return;
    const std::size_t original = text.size();
    std::string fitted;
    for (std::size_t pos = 0; pos < text.size() && fitted.size() < kRefusalFieldBytes;) {
        char32_t cp = 0;
        const std::size_t length = decodeUtf8(text, pos, cp);
        if (length == 0) {
            fitted += fmt::format("\\x{:02x}", static_cast<std::uint8_t>(text[pos]));
            ++pos;
        } else {
            fitted.append(text, pos, length);
            pos += length;
        }
    }
    if (original > kRefusalFieldBytes)
        fitted += fmt::format(" … ({} bytes, cut for the audit log)", original);
    text = std::move(fitted);
}

void fitRefusal(audit::EntryDraft& draft)
{
    fitField(draft.actor.id);
    fitField(draft.target.kind);
    fitField(draft.target.id);
    fitField(draft.reason);
    if (draft.details.size() > kRefusalDetails) {
        const std::size_t dropped = draft.details.size() - kRefusalDetails;
        draft.details.resize(kRefusalDetails - 1);
        draft.details.push_back(audit::textDetail("details_cut", std::to_string(dropped + 1)));
    }
    for (audit::Detail& detail : draft.details) {
        if (detail.kind != audit::Detail::Kind::Text)
            continue;
        std::string text(detail.value.begin(), detail.value.end());
        fitField(text);
        detail.value.assign(text.begin(), text.end());
        fitField(detail.name);
    }
}

// A refusal (PermissionDenied) is denied; every other error is a failure.
audit::Outcome outcomeOf(const Error& error)
{
    return error.code() == ErrorCode::PermissionDenied ? audit::Outcome::Denied
                                                       : audit::Outcome::Failed;
}

}  // namespace

crypto::Sha256Digest sessionTokenHash(const std::string& token)
{
    return crypto::sha256(asBytes(token));
}

Error denied(const std::string& sentence)
{
    return Error(ErrorCode::PermissionDenied, sentence);
}

AuditedTransactions::AuditedTransactions(Database& database, audit::AuditLog& log,
                                         const audit::AuditKey* auditKey, const audit::Clock& clock,
                                         const ControlPlaneOptions& options)
    : database_(database)
    , log_(log)
    , auditKey_(auditKey)
    , clock_(clock)
    , options_(options)
{
}

std::int64_t AuditedTransactions::now() const
{
    return std::chrono::duration_cast<std::chrono::seconds>(clock_.now().time_since_epoch())
        .count();
}

Result<void> AuditedTransactions::commit(Transaction& transaction, const audit::EntryDraft& draft)
{
    // In a group the entry joins the group's transaction: the log's tree takes it in when that
    // commits. A savepoint that then can not be released poisons the group (Transaction).
    audit::EntryDraft withOrigin = draft;
    if (origin_) {
        const bool namesPeer =
            std::any_of(draft.details.begin(), draft.details.end(),
                        [](const audit::Detail& detail) { return detail.name == "peer"; });
        if (!namesPeer) {
            // A transport's peer string is short, but it is the caller's: cut like any field.
            withOrigin.details.push_back(
                audit::textDetail("peer", escapeControls(origin_->peer.substr(0, 256))));
            if (!origin_->certificateSerial.empty())
                withOrigin.details.push_back(
                    audit::textDetail("certificate_serial", origin_->certificateSerial));
        }
    }
    auto appended = log_.append(transaction.outermost(), withOrigin);
    if (!appended)
        return Error(
            appended.error().code(),
            "The change was not made because its audit entry could not be written (" + [&] {
                std::string m = appended.error().message();
                m.pop_back();  // the full stop
                std::replace(m.begin(), m.end(), '.', ',');
                return m;
            }() + "); fix the audit store and try again.");
    return transaction.commit();
}

Result<void> AuditedTransactions::recordRefusal(const audit::Actor& actor,
                                                const AuditedRequest& request,
                                                audit::Outcome outcome, const Error& error,
                                                bool breakGlass)
{
    auto transaction = database_.begin();
    if (!transaction)
        return transaction.error();
    audit::EntryDraft draft = draftFor(actor, request);
    draft.outcome = outcome;
    draft.reason = error.message();
    addReasonCode(draft, error);
    addScope(draft, request.project, breakGlass);
    fitRefusal(draft);
    return commit(**transaction, draft);
}

Result<void> AuditedTransactions::recordRefusal(const Caller& caller, const AuditedRequest& request,
                                                audit::Outcome outcome, const Error& error)
{
    return recordRefusal(userActor(caller.name, caller.sessionId), request, outcome, error,
                         caller.breakGlass);
}

Result<AuditedTransactions::SessionCheck>
AuditedTransactions::checkSession(const std::string& session, std::int64_t t)
{
    SessionCheck check;
    std::int64_t created = 0;
    bool revoked = false;
    bool disabled = false;
    auto found = database_.queryOne(
        "SELECT s.id, s.created, s.last_used, s.revoked, u.id, u.name, u.disabled "
        "FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?",
        {SqlValue::blob(sessionTokenHash(session))}, [&](const Statement& row) {
            check.row = row.integer(0);
            created = row.integer(1);
            check.lastUsed = row.integer(2);
            revoked = row.integer(3) != 0;
            check.caller.userId = row.integer(4);
            check.caller.name = row.text(5);
            disabled = row.integer(6) != 0;
        });
    if (!found)
        return found.error();
    if (!*found)
        return Error(ErrorCode::Unauthenticated, "The session is not valid; sign in again.")
            .because(reason::kSessionInvalid);
    check.caller.sessionId = "s" + std::to_string(check.row);
    const bool expired = t - check.lastUsed > options_.sessionIdle.count()
                         || t - created > options_.sessionMax.count();
    if (revoked)
        return Error(ErrorCode::Unauthenticated, "The session was revoked; sign in again.")
            .because(reason::kSessionRevoked);
    if (disabled)
        return Error(ErrorCode::Unauthenticated,
                     "The account '" + check.caller.name + "' is disabled; ask an admin.")
            .because(reason::kAccountDisabled);
    if (expired)
        return Error(ErrorCode::Unauthenticated, "The session has expired; sign in again.")
            .because(reason::kSessionExpired);
    auto breakGlass = database_.queryInteger("SELECT count(*) FROM grants WHERE user_id = ? AND "
                                             "break_glass = 1 AND expires > ?",
                                             {check.caller.userId, t});
    if (!breakGlass)
        return breakGlass.error();
    check.caller.breakGlass = *breakGlass > 0;
    return check;
}

bool AuditedTransactions::useDue(std::int64_t lastUsed, std::int64_t t) const
{
    // At most half the idle timeout, so that a session in use never expires for want of a write.
    const std::int64_t interval =
        std::min(options_.sessionUseInterval.count(), options_.sessionIdle.count() / 2);
    return t - lastUsed >= interval;
}

Result<Caller> AuditedTransactions::authenticate(const std::string& session)
{
    const std::int64_t t = now();
    auto check = checkSession(session, t);
    if (!check)
        return check.error();
    if (useDue(check->lastUsed, t))
        SEALTRAIN_TRY(
            database_.run("UPDATE sessions SET last_used = ? WHERE id = ?", {t, check->row}));
    return std::move(check->caller);
}

Result<void> AuditedTransactions::authorize(const Caller& caller, std::string_view permission,
                                            const std::string& project)
{
    if (permission.empty())
        return success();
    auto grants = database_.queryInteger(
        "SELECT count(*) FROM grants g JOIN role_permissions p ON p.role = g.role "
        "WHERE g.user_id = ? AND p.permission = ? AND (g.project = '' OR g.project = ?) "
        "AND (g.expires = 0 OR g.expires > ?)",
        {caller.userId, permission, project, now()});
    if (!grants)
        return grants.error();
    if (*grants == 0)
        return denied("The user '" + caller.name + "' lacks the permission '"
                      + std::string(permission) + "'"
                      + (project.empty() ? std::string() : " in project '" + project + "'")
                      + "; ask an admin for a grant.")
            .because(reason::kNoPermission);
    return success();
}

bool AuditedTransactions::holds(const Caller& caller, std::string_view permission,
                                const std::string& project)
{
    return authorize(caller, permission, project).ok();
}

audit::Actor AuditedTransactions::sessionOwner(const std::string& session) const
{
    audit::Actor actor{audit::ActorKind::User, "unknown", "", std::string(kAuthMethod)};
    // A failed look-up leaves the actor unknown: the refusal is recorded either way.
    (void)database_.queryOne(
        "SELECT s.id, u.name FROM sessions s JOIN users u ON "
        "u.id = s.user_id WHERE s.token_hash = ?",
        {SqlValue::blob(sessionTokenHash(session))}, [&](const Statement& row) {
            actor = userActor(row.text(1), "s" + std::to_string(row.integer(0)));
        });
    // A call with an enrolled worker's certificate and no session is the worker's (issue #27,
    // item 13): it is audited as that worker, not as an unknown user.
    if (actor.id == "unknown" && origin_ && !origin_->certificateSerial.empty())
        (void)database_.queryOne("SELECT name FROM workers WHERE serial = ?",
                                 {origin_->certificateSerial}, [&](const Statement& row) {
                                     actor = {audit::ActorKind::Worker, row.text(0), "", "mtls"};
                                 });
    return actor;
}

Result<Caller> AuditedTransactions::enter(const std::string& session, const AuditedRequest& request,
                                          const Body& body, bool entryOnSuccess)
{
    auto transaction = database_.begin();
    if (!transaction)
        return transaction.error();
    auto caller = authenticate(session);
    if (!caller) {
        (*transaction)->rollback();
        // An unknown, revoked or expired session is a refusal; anything else (the database
        // failed while looking) is a failure, recorded all the same.
        const auto outcome = caller.error().code() == ErrorCode::Unauthenticated
                                 ? audit::Outcome::Denied
                                 : audit::Outcome::Failed;
        const audit::Actor owner = sessionOwner(session);
        if (outcome == audit::Outcome::Denied && owner.kind == audit::ActorKind::User
            && owner.id == "unknown"
            && countAnonymous(request, caller.error().message(), caller.error().reasonCode()))
            return caller.error();
        return recordFailure(owner, request, outcome, caller.error(), false);
    }
    audit::EntryDraft draft = draftFor(userActor(caller->name, caller->sessionId), request);
    Result<void> outcome = authorize(*caller, request.permission, request.project);
    if (outcome)
        outcome = body(*caller, draft);
    if (!outcome) {
        (*transaction)->rollback();
        return recordFailure(userActor(caller->name, caller->sessionId), request,
                             outcomeOf(outcome.error()), outcome.error(), caller->breakGlass);
    }
    if (!entryOnSuccess) {
        SEALTRAIN_TRY((*transaction)->commit());
        return caller;
    }
    addScope(draft, request.project, caller->breakGlass);
    SEALTRAIN_TRY(commit(**transaction, draft));
    return caller;
}

Error AuditedTransactions::recordFailure(const audit::Actor& actor, const AuditedRequest& request,
                                         audit::Outcome outcome, const Error& error,
                                         bool breakGlass)
{
    // Every failed call leaves an entry, whatever failed. When even that entry can not be
    // written (the database is gone), the caller still gets the first error, the one to act on.
    if (auto recorded = recordRefusal(actor, request, outcome, error, breakGlass); !recorded)
        log::warn("audit", "could not record a failed call in the audit log",
                  {{"action", request.action}, {"error", recorded.error().message()}});
    return error;
}

bool AuditedTransactions::countAnonymous(const AuditedRequest& request, const std::string& reason,
                                         std::string_view reasonCode)
{
    const std::string peer = origin_ ? origin_->peer : std::string(kLocalPeer);
    const auto key = std::make_pair(request.action, lockoutPeer(peer));
    const std::int64_t t = now();
    const auto found = anonymous_.find(key);
    if (found != anonymous_.end()) {
        CountedRefusals& counted = found->second;
        if (t - counted.windowStart < options_.anonymousRefusalWindow.count()) {
            ++counted.count;
            counted.last = t;
            counted.peer = peer;
            counted.reason = reason;
            counted.reasonCode = reasonCode;
            return true;
        }
        if (counted.count > 0) {
            if (auto written = writeCounted(counted); !written)
                log::warn("audit", "could not record counted refusals in the audit log",
                          {{"action", counted.action}, {"error", written.error().message()}});
        }
        anonymous_.erase(found);
    }
    if (anonymous_.size() >= kMaxCountedKeys) {
        if (auto flushed = flushAnonymousRefusals(true); !flushed)
            log::warn("audit", "could not record counted refusals in the audit log",
                      {{"error", flushed.error().message()}});
    }
    anonymous_.emplace(key, CountedRefusals{request.action, request.target.kind, peer, t, t, 0,
                                            reason, reasonCode});
    return false;
}

Result<void> AuditedTransactions::recordAnonymousRefusal(const AuditedRequest& request,
                                                         const Error& error)
{
    if (countAnonymous(request, error.message(), error.reasonCode()))
        return success();
    return recordRefusal({audit::ActorKind::User, "unknown", "", std::string(kAuthMethod)}, request,
                         audit::Outcome::Failed, error, false);
}

Result<void> AuditedTransactions::writeCounted(const CountedRefusals& counted)
{
    auto transaction = database_.begin();
    if (!transaction)
        return transaction.error();
    audit::EntryDraft draft =
        draftFor({audit::ActorKind::User, "unknown", "", std::string(kAuthMethod)},
                 {counted.action, {}, {}, {counted.targetKind, "*"}});
    draft.outcome = audit::Outcome::Denied;
    draft.reason = fmt::format("{} more calls without a valid session from this peer were "
                               "refused, counted rather than written one by one; the last: {}",
                               counted.count, counted.reason);
    draft.details.push_back(audit::textDetail("repeated", std::to_string(counted.count)));
    draft.details.push_back(audit::textDetail("window_start", std::to_string(counted.windowStart)));
    draft.details.push_back(audit::textDetail("last", std::to_string(counted.last)));
    draft.details.push_back(audit::textDetail("peer", escapeControls(counted.peer.substr(0, 256))));
    if (!counted.reasonCode.empty())
        draft.details.push_back(audit::textDetail("reason_code", std::string(counted.reasonCode)));
    fitRefusal(draft);
    return commit(**transaction, draft);
}

Result<void> AuditedTransactions::flushAnonymousRefusals(bool all)
{
    const std::int64_t t = now();
    Result<void> outcome = success();
    for (auto it = anonymous_.begin(); it != anonymous_.end();) {
        const CountedRefusals& counted = it->second;
        if (!all && t - counted.windowStart < options_.anonymousRefusalWindow.count()) {
            ++it;
            continue;
        }
        if (counted.count > 0) {
            if (auto written = writeCounted(counted); !written) {
                outcome = written;  // kept, to be written at the next flush
                ++it;
                continue;
            }
        }
        it = anonymous_.erase(it);
    }
    return outcome;
}

Result<void> AuditedTransactions::perform(const std::string& session, const AuditedRequest& request,
                                          const Body& body)
{
    auto caller = enter(session, request, body, true);
    if (!caller)
        return caller.error();
    return success();
}

Result<Caller> AuditedTransactions::admit(const std::string& session, const AuditedRequest& request,
                                          const Body& check)
{
    return enter(session, request, check, false);
}

Result<Caller> AuditedTransactions::identify(const std::string& session,
                                             const AuditedRequest& request)
{
    // Reads alone decide a valid session whose use is recent; anything else goes through the
    // transaction, which records the use or audits the refusal.
    const std::int64_t t = now();
    if (auto check = checkSession(session, t);
        check && !useDue(check->lastUsed, t)
        && authorize(check->caller, request.permission, request.project))
        return std::move(check->caller);
    return enter(
        session, request, [](const Caller&, audit::EntryDraft&) { return success(); }, false);
}

std::optional<Caller> AuditedTransactions::peek(const std::string& session)
{
    auto check = checkSession(session, now());
    if (!check)
        return std::nullopt;
    return std::move(check->caller);
}

Result<void> AuditedTransactions::performWithoutSession(const AuditedRequest& request,
                                                        const SessionlessBody& body)
{
    return performSessionless(request, body, false);
}

Result<void> AuditedTransactions::performAnonymously(const AuditedRequest& request,
                                                     const SessionlessBody& body)
{
    return performSessionless(request, body, true);
}

Result<void> AuditedTransactions::performSessionless(const AuditedRequest& request,
                                                     const SessionlessBody& body,
                                                     bool countRefusals)
{
    auto transaction = database_.begin();
    if (!transaction)
        return transaction.error();
    audit::EntryDraft draft = draftFor({}, request);
    auto outcome = body(draft);
    if (!outcome && draft.outcome == audit::Outcome::Ok) {
        (*transaction)->rollback();
        // The name a caller typed is not known to be anyone's (nor to be a name: people type
        // passwords there), so the failure is recorded without it, as actor and as target.
        const audit::Actor nobody{audit::ActorKind::System, "unknown", "", "local"};
        AuditedRequest unnamed = request;
        unnamed.target.id.clear();
        return recordFailure(nobody, unnamed, outcomeOf(outcome.error()), outcome.error(), false);
    }
    // An anonymous refusal changes nothing: counted, and written with its window's count.
    if (countRefusals && !outcome
        && countAnonymous(request, draft.reason, outcome.error().reasonCode())) {
        (*transaction)->rollback();
        return outcome;
    }
    if (draft.outcome != audit::Outcome::Ok)
        fitRefusal(draft);  // a sign-in's actor is the name the caller typed
    SEALTRAIN_TRY(commit(**transaction, draft));
    return outcome;
}

}  // namespace sealtrain::core
