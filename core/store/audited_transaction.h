// The audited transaction: the one door every change to the control plane walks through. It
// checks the caller's session, authorises the call with the one permission check, runs the
// change and appends its audit entry in the same database transaction; every refusal is appended
// too. When the entry can not be written the change is rolled back and the caller gets the error
// (fail closed). The services (identity, access, submissions, datasets, audit queries) hold one
// and never commit a transaction of their own. Not installed: nothing outside core/ sees it.
#pragma once

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/base/result.h"
#include "sealtrain/core/control_plane_options.h"
#include "sealtrain/core/store/call_origin.h"
#include "sealtrain/core/store/database.h"
#include "sealtrain/core/store/list_page.h"
#include "sealtrain/crypto/hash.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace sealtrain::core {

// How people authenticate to the control plane, as audit entries record it.
inline constexpr std::string_view kAuthMethod = "password+totp";

// The signed-in user behind a valid session.
struct Caller {
    std::int64_t userId = 0;
    std::string name;
    std::string sessionId;  // "s<row>", as audit entries name it
    bool breakGlass = false;
};

// A call as its permission check and its audit entry see it.
struct AuditedRequest {
    std::string action;           // the audit action, e.g. "user.create"
    std::string_view permission;  // what the caller must hold; empty: any signed-in user
    std::string project;          // scope of the check; empty: global
    audit::Target target;
};

// The SHA-256 of a session token: all the database keeps of it.
[[nodiscard]] crypto::Sha256Digest sessionTokenHash(const std::string& token);

// A refusal for lack of a permission or because of a separation-of-duties rule.
[[nodiscard]] Error denied(const std::string& sentence);

class AuditedTransactions final {
public:
    // The change itself: it may add details to the entry, or fail (and so roll back).
    using Body = std::function<Result<void>(const Caller&, audit::EntryDraft&)>;
    using SessionlessBody = std::function<Result<void>(audit::EntryDraft&)>;

    // Everything must outlive this object.
    AuditedTransactions(Database& database, audit::AuditLog& log, const audit::AuditKey* auditKey,
                        const audit::Clock& clock, const ControlPlaneOptions& options);
    AuditedTransactions(const AuditedTransactions&) = delete;
    AuditedTransactions& operator=(const AuditedTransactions&) = delete;

    // Session check, authorisation, `body`, and the entry, in one transaction. When anything
    // fails the change rolls back and the failure is recorded in a transaction of its own: a
    // refusal (PermissionDenied, or a session that is not valid) as denied, every other error
    // (invalid input, the database's, an integrity or I/O failure) as failed.
    [[nodiscard]] Result<void> perform(const std::string& session, const AuditedRequest& request,
                                       const Body& body);

    // perform for a call that returns something: `body` returns it (a Result), and it is
    // returned once the change and its entry are committed.
    template <typename ValueBody>
    [[nodiscard]] auto performReturning(const std::string& session, const AuditedRequest& request,
                                        const ValueBody& body)
        -> std::invoke_result_t<const ValueBody&, const Caller&, audit::EntryDraft&>
    {
        std::invoke_result_t<const ValueBody&, const Caller&, audit::EntryDraft&> value =
            Error(ErrorCode::Internal, "The call returned nothing.");
        auto performed =
            perform(session, request, [&](const Caller& caller, audit::EntryDraft& draft) {
                value = body(caller, draft);
                return value ? success() : Result<void>(value.error());
            });
        if (!performed)
            return performed.error();
        return value;
    }

    // perform for a listing: the rows of `sql`, each folded into the list by `addRow`.
    template <typename Item>
    [[nodiscard]] Result<std::vector<Item>>
    performListing(const std::string& session, const AuditedRequest& request, std::string_view sql,
                   const std::function<void(std::vector<Item>&, const Statement&)>& addRow)
    {
        return performReturning(
            session, request, [&](const Caller&, audit::EntryDraft&) -> Result<std::vector<Item>> {
                std::vector<Item> items;
                SEALTRAIN_TRY(
                    database_.query(sql, {}, [&](const Statement& row) { addRow(items, row); }));
                return items;
            });
    }

    // One page (store/list_page.h) of a list read by a LEFT JOIN that gives one row per element of
    // an item's list: a new item (name and flag in the first two columns) whenever the name
    // changes, and `addElement` for every row whose third column is not NULL. The page's start is
    // the entry's detail `after`; a page out of bounds is refused (and audited) after the caller.
    template <typename Item>
    [[nodiscard]] Result<KeyedPaged<Item>>
    performGroupedListing(const std::string& session, const AuditedRequest& request,
                          std::string_view sql, const KeyedPage& page,
                          const std::function<void(Item&, const Statement&)>& addElement)
    {
        return performReturning(
            session, request,
            [&](const Caller&, audit::EntryDraft& draft) -> Result<KeyedPaged<Item>> {
                draft.details.push_back(audit::textDetail("after", page.after));
                SEALTRAIN_TRY(checkKeyedPage(page));
                std::vector<Item> items;
                SEALTRAIN_TRY(database_.query(sql, {}, [&](const Statement& row) {
                    if (items.empty() || items.back().name != row.text(0))
                        items.push_back({row.text(0), row.integer(1) != 0, {}});
                    if (!row.isNull(2))
                        addElement(items.back(), row);
                }));
                return pageAfter(std::move(items), page,
                                 [](const Item& item) { return pageKey(item); });
            });
    }

    // The same checks and refusals as perform, but a success commits only the session's use and
    // appends no entry: for a call whose change comes later in a perform of its own (a dataset
    // import checks its caller first, imports for minutes outside any transaction, and then
    // registers the result). `check` runs inside the transaction; its entry draft is dropped.
    [[nodiscard]] Result<Caller> admit(const std::string& session, const AuditedRequest& request,
                                       const Body& check);

    // The session check alone, for a call that changes nothing and appends no entry on success
    // (whoAmI): the caller behind `session` when it is valid and holds `request.permission`.
    // When the session's last use was recorded less than options().sessionUseInterval ago, this
    // only reads: no transaction, no savepoint, no write. Otherwise (a use to record, a refusal,
    // an error) it is admit with no check: the use is committed, a refusal audited.
    [[nodiscard]] Result<Caller> identify(const std::string& session,
                                          const AuditedRequest& request);

    // The caller behind `session` when it is valid, by reads alone: nothing is recorded, and an
    // invalid session is not audited here. Only for a call that reads before the one perform that
    // decides it (a password change reads the stored hash first, so that its slow check runs
    // outside any transaction): that perform refuses, and audits, an invalid session once
    // (issue #54: one refusal, one entry).
    [[nodiscard]] std::optional<Caller> peek(const std::string& session);

    // The door for the calls made before anyone has a session (init, sign-in): `body` makes the
    // change and fills in the entry (actor included). When it fails with the entry's outcome
    // still Ok (the database failed, or init found users already) everything rolls back and the
    // failure is recorded with the actor "unknown". When it fails after marking the entry
    // denied (a wrong password), what it changed so far (the failure count) commits with the
    // entry, and the caller gets its error.
    [[nodiscard]] Result<void> performWithoutSession(const AuditedRequest& request,
                                                     const SessionlessBody& body);
    // performWithoutSession for a call whose credential is in the request and whose caller is
    // nobody until it matches (a reset code's redemption, issue #48): a refusal (the entry marked
    // denied by `body`, its reason the entry's) is an anonymous one, counted per window like the
    // others (flushAnonymousRefusals) instead of written call by call.
    [[nodiscard]] Result<void> performAnonymously(const AuditedRequest& request,
                                                  const SessionlessBody& body);

    // Appends a refusal of `caller`'s `request` in a transaction of its own, for a call that
    // fails outside perform (a dataset import that fails after admit).
    [[nodiscard]] Result<void> recordRefusal(const Caller& caller, const AuditedRequest& request,
                                             audit::Outcome outcome, const Error& error);

    // Whether `caller` holds `permission` globally or in `project` (any error reads as no).
    [[nodiscard]] bool holds(const Caller& caller, std::string_view permission,
                             const std::string& project);

    // Unix seconds on the control plane's clock.
    [[nodiscard]] std::int64_t now() const;

    // Where the call being served came from; every entry written until it is cleared records
    // it (the details "peer" and "certificate_serial", unless the entry names a peer itself).
    // The server sets it on the thread that runs the call's work (its group commit, or under
    // its lock), and clears it after.
    void setOrigin(std::optional<CallOrigin> origin) { origin_ = std::move(origin); }
    [[nodiscard]] const std::optional<CallOrigin>& origin() const noexcept { return origin_; }

    // Anonymous refusals (no valid session, no worker's certificate) of one action from one peer
    // are written one entry per options().anonymousRefusalWindow: the first as itself, the
    // others counted and written as one entry (detail "repeated") when the next comes after the
    // window or when this runs. The server runs it every second (`all` false: the windows that
    // have passed) and at shutdown (`all`: every count). Counted, never dropped (issue #27).
    [[nodiscard]] Result<void> flushAnonymousRefusals(bool all);
    // Audits a call turned away before it could name anyone (a sign-in told the control plane is
    // busy): as an anonymous refusal, counted per window like the others; never dropped.
    [[nodiscard]] Result<void> recordAnonymousRefusal(const AuditedRequest& request,
                                                      const Error& error);

    [[nodiscard]] Database& database() const noexcept { return database_; }
    [[nodiscard]] const audit::AuditKey* auditKey() const noexcept { return auditKey_; }
    [[nodiscard]] const audit::Clock& clock() const noexcept { return clock_; }
    [[nodiscard]] audit::AuditLog& log() const noexcept { return log_; }
    [[nodiscard]] const ControlPlaneOptions& options() const noexcept { return options_; }

private:
    // A valid session as the session check read it.
    struct SessionCheck {
        Caller caller;
        std::int64_t row = 0;
        std::int64_t lastUsed = 0;
    };

    [[nodiscard]] Result<Caller> enter(const std::string& session, const AuditedRequest& request,
                                       const Body& body, bool entryOnSuccess);
    // performWithoutSession, and with `countRefusals` performAnonymously.
    [[nodiscard]] Result<void> performSessionless(const AuditedRequest& request,
                                                  const SessionlessBody& body, bool countRefusals);
    // The session check: checkSession, then the session's use recorded when it is due.
    [[nodiscard]] Result<Caller> authenticate(const std::string& session);
    // Whether `session` is valid at `t` (known, not revoked, its user enabled, not expired), and
    // its caller; reads only. Unauthenticated, in one sentence, when it is not.
    [[nodiscard]] Result<SessionCheck> checkSession(const std::string& session, std::int64_t t);
    // Whether a use at `t` must be written: the last one written is sessionUseInterval old.
    [[nodiscard]] bool useDue(std::int64_t lastUsed, std::int64_t t) const;
    // The one permission check: does any unexpired grant of the caller, global or for
    // `project`, give a role that holds `permission`?
    [[nodiscard]] Result<void> authorize(const Caller& caller, std::string_view permission,
                                         const std::string& project);
    // The owner of `session` when the token is known (revoked, expired, disabled), else nobody.
    [[nodiscard]] audit::Actor sessionOwner(const std::string& session) const;
    [[nodiscard]] Result<void> recordRefusal(const audit::Actor& actor,
                                             const AuditedRequest& request, audit::Outcome outcome,
                                             const Error& error, bool breakGlass);
    // Anonymous refusals counted in an open window, by (action, lockout peer).
    struct CountedRefusals {
        std::string action;
        std::string targetKind;
        std::string peer;  // the newest refusal's, as the transport named it
        std::int64_t windowStart = 0;
        std::int64_t last = 0;
        std::int64_t count = 0;       // refusals in the window after the one written
        std::string reason;           // the newest refusal's sentence
        std::string_view reasonCode;  // and its reason code (a ReasonCode's name)
    };
    static constexpr std::size_t kMaxCountedKeys = 1024;
    // True when this anonymous refusal was counted in its key's open window instead of written.
    // `reason` is the audit entry's reason (not a sentence for a caller), `reasonCode` its code.
    [[nodiscard]] bool countAnonymous(const AuditedRequest& request, const std::string& reason,
                                      std::string_view reasonCode);
    // One entry for a window's counted refusals.
    [[nodiscard]] Result<void> writeCounted(const CountedRefusals& counted);

    // Records a failed call after its transaction rolled back; returns `error`.
    [[nodiscard]] Error recordFailure(const audit::Actor& actor, const AuditedRequest& request,
                                      audit::Outcome outcome, const Error& error, bool breakGlass);
    // Appends the entry and commits; on failure the change is rolled back (fail closed).
    [[nodiscard]] Result<void> commit(Transaction& transaction, const audit::EntryDraft& draft);

    Database& database_;
    audit::AuditLog& log_;
    const audit::AuditKey* auditKey_;
    const audit::Clock& clock_;
    const ControlPlaneOptions& options_;
    std::optional<CallOrigin> origin_;
    std::map<std::pair<std::string, std::string>, CountedRefusals> anonymous_;
};

}  // namespace sealtrain::core
