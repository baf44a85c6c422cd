// A signed-in user's change of their own password (identity.h, Identity::startPasswordChange).
#include "sealtrain/core/identity/identity.h"

#include "identity/accounts.h"
#include "store/audited_transaction.h"

#include "sealtrain/core/identity/password.h"
#include "sealtrain/core/store/database.h"

namespace sealtrain::core {

namespace {

constexpr const char* kAction = "user.change_password";

}  // namespace

void PasswordChange::check(const crypto::SecretBytes& current, const crypto::SecretBytes& next)
{
    if (!account_.read)
        return;
    checked_ = true;
    matched_ = verifyPassword(account_.storedHash, current);
    if (!matched_)
        return;  // the new one is neither judged nor hashed: nothing will change
    if (auto fit = checkPasswordPolicy(account_.name, next); !fit) {
        unfit_ = fit.error();
        return;
    }
    auto hash = hashPassword(next, hashing_);
    if (!hash) {
        unfit_ = hash.error();
        return;
    }
    newHash_ = std::move(*hash);
}

OwnAccount Identity::readOwnAccount(const std::string& session)
{
    OwnAccount account;
    account.session = session;
    // Read only: the perform that decides the call refuses and audits an invalid session, once.
    auto caller = gate_.peek(session);
    if (!caller)
        return account;
    std::optional<std::string> hash;
    if (!database_.queryOne("SELECT password_hash FROM users WHERE id = ?", {caller->userId},
                            [&](const Statement& row) { hash = row.text(0); }))
        return account;
    if (!hash || hash->empty())
        return account;
    account.userId = caller->userId;
    account.name = caller->name;
    account.storedHash = std::move(*hash);
    account.read = true;
    return account;
}

PasswordChange Identity::startPasswordChange(const std::string& session)
{
    PasswordChange change;
    change.hashing_ = options_.passwordHashing;
    change.account_ = readOwnAccount(session);
    return change;
}

Result<std::uint32_t> Identity::finishPasswordChange(const PasswordChange& change)
{
    bool wrongPassword = false;
    std::uint32_t ended = 0;
    auto performed = gate_.perform(
        change.account_.session, {kAction, {}, {}, {"user", change.account_.name}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
            draft.target.id = caller.name;
            std::optional<std::string> stored;
            SEALTRAIN_TRY(database_.queryOne("SELECT password_hash FROM users WHERE id = ?",
                                             {caller.userId},
                                             [&](const Statement& row) { stored = row.text(0); }));
            // Read for another session's user, or changed since (a reset, another change): the
            // check proved nothing about the password now stored.
            if (!change.account_.read || !change.checked_ || caller.userId != change.account_.userId
                || stored != change.account_.storedHash)
                return Error(ErrorCode::FailedPrecondition,
                             "Your password changed while this was checked; nothing changed, try "
                             "again.");
            if (!change.matched_) {
                // Committed with the denied entry: this session ends, so a guess costs a
                // sign-in (which counts failures and locks out).
                wrongPassword = true;
                draft.outcome = audit::Outcome::Denied;
                draft.reason = "wrong current password; the session was ended";
                return database_.run("UPDATE sessions SET revoked = 1 WHERE token_hash = ?",
                                     {SqlValue::blob(sessionTokenHash(change.account_.session))});
            }
            if (change.unfit_)
                return *change.unfit_;
            SEALTRAIN_TRY(database_.run("UPDATE users SET password_hash = ? WHERE id = ?",
                                        {change.newHash_, caller.userId}));
            // Whoever may have learnt the old password loses the sessions it opened.
            auto others = internal::endOtherSessions(database_, caller.userId,
                                                     change.account_.session, draft);
            if (!others)
                return others.error();
            ended = *others;
            return success();
        });
    if (!performed)
        return performed.error();
    if (wrongPassword)
        return Error(ErrorCode::Unauthenticated,
                     "The current password is wrong; nothing changed and this session has "
                     "ended, so sign in again to try once more.");
    return ended;
}

}  // namespace sealtrain::core
