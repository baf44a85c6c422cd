// A signed-in user's replacement of their own TOTP secret (identity.h, Identity::startTotpChange):
// both factors prove the user, a new secret waits in users.totp_pending (migration 10), and a
// code from it makes it the user's. The user who lost the old authenticator asks an admin for a
// reset instead; this is for moving to a new one while the old one still works.
#include "sealtrain/core/identity/identity.h"

#include "identity/accounts.h"
#include "store/audited_transaction.h"

#include "sealtrain/base/wipe.h"
#include "sealtrain/core/identity/password.h"
#include "sealtrain/core/identity/totp.h"
#include "sealtrain/core/store/database.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace sealtrain::core {

namespace {

constexpr const char* kStartAction = "user.totp_start";
constexpr const char* kConfirmAction = "user.totp_confirm";

// What the start reads of the account in its transaction.
struct TotpAccount {
    std::string passwordHash;
    crypto::SecretBytes secret;
    std::uint64_t lastStep = 0;
};

// The secret a column holds, its copy in ordinary memory wiped.
Result<crypto::SecretBytes> takeSecretColumn(std::vector<std::uint8_t>& bytes)
{
    auto secret = crypto::SecretBytes::fromBytes(bytes);
    wipeMemory(bytes);
    return secret;
}

Result<std::optional<TotpAccount>> readTotpAccount(const Database& database, std::int64_t userId)
{
    TotpAccount account;
    std::vector<std::uint8_t> secret;
    auto found = database.queryOne(
        "SELECT password_hash, totp_secret, totp_last_step FROM users WHERE id = ?", {userId},
        [&](const Statement& row) {
            account.passwordHash = row.text(0);
            secret = row.blob(1);
            account.lastStep = static_cast<std::uint64_t>(row.integer(2));
        });
    auto taken = takeSecretColumn(secret);
    if (!found)
        return found.error();
    if (!*found)
        return std::optional<TotpAccount>();
    if (!taken)
        return taken.error();
    account.secret = std::move(*taken);
    return std::optional<TotpAccount>(std::move(account));
}

// The pending secret, its expiry and its wrong codes so far.
struct PendingRow {
    crypto::SecretBytes secret;
    std::int64_t expires = 0;
    std::int64_t misses = 0;
    std::uint64_t lastStep = 0;
};

Result<std::optional<PendingRow>> readPending(const Database& database, std::int64_t userId)
{
    PendingRow pending;
    std::vector<std::uint8_t> secret;
    auto found = database.queryOne(
        "SELECT totp_pending, totp_pending_expires, totp_pending_misses, totp_last_step "
        "FROM users WHERE id = ? AND totp_pending IS NOT NULL",
        {userId}, [&](const Statement& row) {
            secret = row.blob(0);
            pending.expires = row.integer(1);
            pending.misses = row.integer(2);
            pending.lastStep = static_cast<std::uint64_t>(row.integer(3));
        });
    auto taken = takeSecretColumn(secret);
    if (!found)
        return found.error();
    if (!*found)
        return std::optional<PendingRow>();
    if (!taken)
        return taken.error();
    pending.secret = std::move(*taken);
    return std::optional<PendingRow>(std::move(pending));
}

Result<void> discardPending(const Database& database, std::int64_t userId)
{
    return database.run("UPDATE users SET totp_pending = NULL, totp_pending_expires = 0, "
                        "totp_pending_misses = 0 WHERE id = ?",
                        {userId});
}

Error wrongFactors()
{
    return Error(ErrorCode::Unauthenticated,
                 "The password or TOTP code is wrong; nothing changed and this session has "
                 "ended, so sign in again to try once more.");
}

}  // namespace

void TotpChange::check(const crypto::SecretBytes& password)
{
    if (!account_.read)
        return;
    checked_ = true;
    matched_ = verifyPassword(account_.storedHash, password);
}

TotpChange Identity::startTotpChange(const std::string& session)
{
    TotpChange change;
    change.account_ = readOwnAccount(session);
    return change;
}

Result<PendingTotp> Identity::finishTotpStart(const TotpChange& change,
                                              const std::string& currentCode)
{
    std::optional<std::string> refusal;  // why both factors did not match, when they did not
    PendingTotp pending;
    auto performed = gate_.perform(
        change.account_.session, {kStartAction, {}, {}, {"user", change.account_.name}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
            draft.target.id = caller.name;
            auto account = readTotpAccount(database_, caller.userId);
            if (!account)
                return account.error();
            // Read for another session's user, or the password changed since: the check proved
            // nothing about the password now stored.
            if (!*account || !change.account_.read || !change.checked_
                || caller.userId != change.account_.userId
                || (*account)->passwordHash != change.account_.storedHash)
                return Error(ErrorCode::FailedPrecondition,
                             "Your password changed while this was checked; nothing changed, try "
                             "again.");
            const std::uint64_t step = matchTotp(
                (*account)->secret, currentTotpStep(options_, gate_.clock()), currentCode);
            if (!change.matched_)
                refusal = "wrong password";
            else if (step == 0)
                refusal = "wrong TOTP code";
            else if (step <= (*account)->lastStep)
                refusal = "TOTP code reused";
            if (refusal) {
                // Committed with the denied entry: this session ends, so a guess costs a
                // sign-in (which counts failures and locks out).
                draft.outcome = audit::Outcome::Denied;
                draft.reason = *refusal + "; the session was ended";
                return database_.run("UPDATE sessions SET revoked = 1 WHERE token_hash = ?",
                                     {SqlValue::blob(sessionTokenHash(change.account_.session))});
            }
            auto secret = crypto::SecretBytes::random(kTotpSecretSize);
            if (!secret)
                return secret.error();
            pending.expires = gate_.now() + kTotpChangeLifetimeSeconds;
            // The code just used is spent, as a sign-in's is.
            SEALTRAIN_TRY(
                database_.run("UPDATE users SET totp_pending = ?, totp_pending_expires = ?, "
                              "totp_pending_misses = 0, totp_last_step = ? WHERE id = ?",
                              {SqlValue::blob(secret->bytes()), pending.expires,
                               static_cast<std::int64_t>(step), caller.userId}));
            pending.enrollment = {caller.name,
                                  otpauthUri(options_.totpIssuer, caller.name, *secret)};
            draft.details.push_back(
                audit::textDetail("pending_expires", std::to_string(pending.expires)));
            return success();
        });
    if (!performed)
        return performed.error();
    if (refusal)
        return wrongFactors();
    return pending;
}

Result<std::uint32_t> Identity::confirmTotpChange(const std::string& session,
                                                  const std::string& newCode)
{
    std::optional<Error> refusal;
    std::uint32_t ended = 0;
    auto performed = gate_.perform(
        session, {kConfirmAction, {}, {}, {"user", ""}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
            draft.target.id = caller.name;
            auto pending = readPending(database_, caller.userId);
            if (!pending)
                return pending.error();
            if (!*pending || (*pending)->expires <= gate_.now())
                return Error(ErrorCode::FailedPrecondition,
                             "No new TOTP secret is waiting for a code (none was started, or it "
                             "lapsed after ten minutes); start the change again.");
            const std::uint64_t step =
                matchTotp((*pending)->secret, currentTotpStep(options_, gate_.clock()), newCode);
            if (step == 0) {
                const std::int64_t misses = (*pending)->misses + 1;
                draft.outcome = audit::Outcome::Denied;
                draft.details.push_back(audit::textDetail("wrong_codes", std::to_string(misses)));
                if (misses >= kTotpConfirmAttempts) {
                    draft.reason = "wrong code from the new secret; the new secret was discarded";
                    refusal = Error(ErrorCode::PermissionDenied,
                                    "That code is not from the new secret, and it was the last "
                                    "try: the new secret is discarded and the old one still "
                                    "holds; start the change again.");
                    return discardPending(database_, caller.userId);
                }
                draft.reason = "wrong code from the new secret";
                refusal =
                    Error(ErrorCode::PermissionDenied,
                          "That code is not from the new secret; check that the "
                          "authenticator shows the new entry and try again ("
                              + std::to_string(kTotpConfirmAttempts - misses) + " tries left).");
                return database_.run("UPDATE users SET totp_pending_misses = ? WHERE id = ?",
                                     {misses, caller.userId});
            }
            // The confirming code is spent: it can not sign anyone in afterwards.
            const auto spent = static_cast<std::int64_t>(std::max(step, (*pending)->lastStep));
            SEALTRAIN_TRY(database_.run(
                "UPDATE users SET totp_secret = totp_pending, totp_last_step = ? WHERE id = ?",
                {spent, caller.userId}));
            SEALTRAIN_TRY(discardPending(database_, caller.userId));
            // Whoever may have copied the old secret loses the sessions it may have opened.
            auto others = internal::endOtherSessions(database_, caller.userId, session, draft);
            if (!others)
                return others.error();
            ended = *others;
            return success();
        });
    if (!performed)
        return performed.error();
    if (refusal)
        return *refusal;
    return ended;
}

}  // namespace sealtrain::core
