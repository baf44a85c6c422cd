// Accounts as sign-in reads them, and their failures per account and peer (accounts.h).
#include "identity/accounts.h"

#include "store/audited_transaction.h"

#include "sealtrain/base/wipe.h"
#include "sealtrain/core/access/permissions.h"
#include "sealtrain/core/store/call_origin.h"

#include <algorithm>
#include <utility>

namespace sealtrain::core::internal {
namespace {

// Lockouts are per account and peer; one account keeps at most options.maxLockoutPeers network
// peers' counts, and failures from any further peer share one count ("other"), so that a flood
// from many addresses costs the database a bounded number of rows. The local peer (the Unix
// socket, the control plane's own process) always keeps its own: no flood over the network
// locks it.
constexpr std::string_view kOtherPeers = "other";
// A peer's count is forgotten a day after its last failure, once its lockout has ended.
constexpr std::int64_t kForgetFailuresAfter = std::int64_t{24} * 3600;

// The peer whose count `peer`'s failures on `userId` go to: its own, or "other" once the account
// keeps kMaxLockoutPeers network peers' counts.
Result<std::string> lockoutBucket(const Database& database, std::int64_t maxPeers,
                                  std::int64_t userId, const std::string& peer)
{
    if (peer == kLocalPeer)
        return peer;
    auto own = database.queryInteger(
        "SELECT count(*) FROM sign_in_failures WHERE user_id = ? AND peer = ?", {userId, peer});
    if (!own)
        return own.error();
    if (*own > 0)
        return peer;
    auto kept = database.queryInteger(
        "SELECT count(*) FROM sign_in_failures WHERE user_id = ? AND peer NOT IN (?, ?)",
        {userId, std::string(kLocalPeer), std::string(kOtherPeers)});
    if (!kept)
        return kept.error();
    return *kept >= maxPeers ? std::string(kOtherPeers) : peer;
}

}  // namespace

// The account `name`, with the failures and lockout that count against `peer`.
Result<std::optional<Account>> findAccount(const Database& database,
                                           const ControlPlaneOptions& options,
                                           const std::string& name, const std::string& peer)
{
    Account account;
    std::vector<std::uint8_t> secret;
    auto found = database.queryOne(
        "SELECT id, password_hash, totp_secret, totp_last_step, disabled, reset_code_hash, "
        "reset_code_expires FROM users WHERE name = ?",
        {name}, [&](const Statement& row) {
            account.id = row.integer(0);
            account.passwordHash = row.text(1);
            secret = row.blob(2);
            account.lastTotpStep = static_cast<std::uint64_t>(row.integer(3));
            account.disabled = row.integer(4) != 0;
            if (!row.isNull(5))
                account.resetCodeHash = row.blob(5);
            account.resetCodeExpires = row.integer(6);
        });
    if (!found)
        return found.error();
    if (!*found)
        return std::optional<Account>();
    auto bucket = lockoutBucket(database, options.maxLockoutPeers, account.id, peer);
    if (!bucket)
        return bucket.error();
    account.peer = std::move(*bucket);
    SEALTRAIN_TRY(database.queryOne(
        "SELECT failed_attempts, locked_until FROM sign_in_failures WHERE user_id = ? AND peer = ?",
        {account.id, account.peer}, [&](const Statement& row) {
            account.failures = row.integer(0);
            account.lockedUntil = row.integer(1);
        }));
    auto totpSecret = crypto::SecretBytes::fromBytes(secret);
    wipeMemory(secret);
    if (!totpSecret)
        return totpSecret.error();
    account.totpSecret = std::move(*totpSecret);
    return std::optional<Account>(std::move(account));
}

std::optional<ClosedAccount> closedAccount(const Account& account, std::int64_t now)
{
    if (account.disabled)
        return ClosedAccount{"account disabled", reason::kAccountDisabled};
    if (account.lockedUntil > now)
        return ClosedAccount{"account locked for " + std::to_string(account.lockedUntil - now)
                                 + " more seconds after repeated failed sign-ins",
                             reason::kAccountLocked};
    if (account.resetCodeHash)
        return ClosedAccount{"account reset: its user must set new credentials with the reset code",
                             reason::kAccountInReset};
    return std::nullopt;
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
        database.run("INSERT OR REPLACE INTO sign_in_failures (user_id, peer, failed_attempts, "
                     "locked_until, last_failed) VALUES (?, ?, ?, ?, ?)",
                     {account.id, account.peer, count, until, now}));
    draft.details.push_back(audit::textDetail("failed_attempts", std::to_string(count)));
    if (until != 0)
        draft.details.push_back(audit::textDetail("locked_until", std::to_string(until)));
    return success();
}

// Clears the failures and remembers the code's time step, so that the code can not be replayed.
Result<void> clearFailures(const Database& database, const Account& account, std::uint64_t step)
{
    SEALTRAIN_TRY(database.run("DELETE FROM sign_in_failures WHERE user_id = ? AND peer = ?",
                               {account.id, account.peer}));
    return database.run("UPDATE users SET totp_last_step = ? WHERE id = ?",
                        {static_cast<std::int64_t>(step), account.id});
}

// Forgets every peer's failures and lockout of `userId` (an admin enabled or reset the account).
Result<void> clearAllFailures(const Database& database, std::int64_t userId)
{
    return database.run("DELETE FROM sign_in_failures WHERE user_id = ?", {userId});
}

Result<std::uint32_t> endOtherSessions(const Database& database, std::int64_t userId,
                                       const std::string& keptSession, audit::EntryDraft& draft)
{
    SEALTRAIN_TRY(database.run(
        "UPDATE sessions SET revoked = 1 WHERE user_id = ? AND revoked = 0 AND token_hash != ?",
        {userId, SqlValue::blob(sessionTokenHash(keptSession))}));
    const auto ended = static_cast<std::uint32_t>(database.changes());
    draft.details.push_back(audit::textDetail("sessions_ended", std::to_string(ended)));
    return ended;
}

Result<void> pruneFailures(const Database& database, std::int64_t now)
{
    return database.run("DELETE FROM sign_in_failures WHERE locked_until < ? AND last_failed < ?",
                        {now, now - kForgetFailuresAfter});
}

}  // namespace sealtrain::core::internal
