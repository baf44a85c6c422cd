// The enrolment and reset codes' redemption (identity.h, "completeReset"; issue #48): the new
// credentials made before the transaction, the code checked (and its expiry, told only to the
// holder of the right code), refusals anonymous and counted like every anonymous refusal.
#include "sealtrain/core/identity/identity.h"

#include "identity/accounts.h"
#include "sealtrain/core/identity/password.h"
#include "sealtrain/core/identity/totp.h"
#include "store/audited_transaction.h"

#include <openssl/crypto.h>

#include <utility>

namespace sealtrain::core {

using internal::findAccount;
using internal::hashOfResetCode;
using internal::recordUnknownUser;
using internal::refuse;

namespace {

// One answer for every refused reset completion.
Error wrongResetCode()
{
    return Error(ErrorCode::Unauthenticated,
                 "The user name or reset code is wrong, or the reset was completed already; "
                 "check them, or ask an admin for a new reset.");
}

bool resetCodeMatches(const std::vector<std::uint8_t>& stored, const std::string& code)
{
    const auto hash = hashOfResetCode(code);
    return stored.size() == hash.size()
           && CRYPTO_memcmp(stored.data(), hash.data(), hash.size()) == 0;
}

}  // namespace

Result<NewCredentials> Identity::makeCredentials(const std::string& name,
                                                 const crypto::SecretBytes& password) const
{
    SEALTRAIN_TRY(checkPasswordPolicy(name, password));
    auto hash = hashPassword(password, options_.passwordHashing);
    if (!hash)
        return hash.error();
    auto secret = crypto::SecretBytes::random(kTotpSecretSize);
    if (!secret)
        return secret.error();
    return NewCredentials{std::move(*hash), std::move(*secret)};
}

Result<Enrollment> Identity::storeCredentials(std::int64_t id, const std::string& name,
                                              const NewCredentials& credentials)
{
    // The TOTP secret is stored as is: the whole database is encrypted under the database key
    // (docs/formats/database.md), and the server must be able to compute codes from it. A new
    // secret the user had started to move to (identity/totp_change.cpp) goes: these are the
    // credentials.
    SEALTRAIN_TRY(database_.run(
        "UPDATE users SET password_hash = ?, totp_secret = ?, "
        "totp_last_step = 0, failed_attempts = 0, locked_until = 0, "
        "reset_code_hash = NULL, totp_pending = NULL, "
        "totp_pending_expires = 0, totp_pending_misses = 0 WHERE id = ?",
        {credentials.passwordHash, SqlValue::blob(credentials.totpSecret.bytes()), id}));
    return Enrollment{name, otpauthUri(options_.totpIssuer, name, credentials.totpSecret)};
}

Result<Enrollment> Identity::storeNewCredentials(std::int64_t id, const std::string& name,
                                                 const crypto::SecretBytes& password)
{
    auto made = makeCredentials(name, password);
    if (!made)
        return made.error();
    return storeCredentials(id, name, *made);
}

bool Identity::resetCodeWorks(const std::string& name, const std::string& resetCode) const
{
    auto account = findAccount(database_, options_, name, std::string(kLocalPeer));
    if (!account || !*account || !(*account)->resetCodeHash)
        return false;
    return resetCodeMatches(*(*account)->resetCodeHash, resetCode)
           && gate_.now() < (*account)->resetCodeExpires;
}

Result<Enrollment> Identity::completeReset(const std::string& name, const std::string& resetCode,
                                           const crypto::SecretBytes& password)
{
    auto credentials = makeCredentials(name, password);
    if (!credentials)
        return credentials.error();
    return completeReset(name, resetCode, *credentials);
}

Result<Enrollment> Identity::completeReset(const std::string& name, const std::string& resetCode,
                                           const NewCredentials& credentials)
{
    Enrollment enrollment;
    auto completed = gate_.performAnonymously(
        {"user.complete_reset", {}, {}, {"user", name}},
        [&](audit::EntryDraft& draft) -> Result<void> {
            // Nobody is authenticated until the code matches (issue #48): a refusal's actor is
            // unknown, its target the account named.
            draft.actor = {audit::ActorKind::User, "unknown", "", "reset code"};
            auto account = findAccount(database_, options_, name, std::string(kLocalPeer));
            if (!account)
                return account.error();
            if (!*account) {
                recordUnknownUser(gate_, name, draft);
                return refuse(draft, "unknown user",
                              wrongResetCode().because(reason::kUnknownUser));
            }
            const auto& stored = (*account)->resetCodeHash;
            if (!stored)
                return refuse(draft, "no reset is open",
                              wrongResetCode().because(reason::kWrongCredentials));
            if (!resetCodeMatches(*stored, resetCode))
                return refuse(draft, "wrong reset code",
                              wrongResetCode().because(reason::kWrongCredentials));
            // Told only to whoever holds the right code (issue #48).
            if (gate_.now() >= (*account)->resetCodeExpires)
                return refuse(draft, "reset code expired",
                              Error(ErrorCode::Unauthenticated,
                                    "This code has expired; ask an admin for a new one "
                                    "('sealtrainctl user reset "
                                        + name + "').")
                                  .because(reason::kCodeExpired));
            // Credentials made for a code that did not work a moment before (a reset opened in
            // between) are none: refused, nothing stored.
            if (credentials.passwordHash.empty())
                return Error(ErrorCode::FailedPrecondition,
                             "The reset changed while it was being completed; try again.");
            draft.actor.id = name;
            auto made = storeCredentials((*account)->id, name, credentials);
            if (!made)
                return made.error();
            enrollment = std::move(*made);
            return success();
        });
    if (!completed)
        return completed.error();
    return enrollment;
}

}  // namespace sealtrain::core
