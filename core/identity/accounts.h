// Accounts as sign-in reads them, and their failures and lockouts, counted per account and peer
// (migration 7; docs/operations/access-control.md, "Lockout"): identity.cpp's sign-in and the
// admin calls that clear a lockout use these.
#pragma once

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/base/result.h"
#include "sealtrain/core/control_plane_options.h"
#include "sealtrain/core/store/database.h"
#include "sealtrain/core/store/reason_codes.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::core {
class AuditedTransactions;
}  // namespace sealtrain::core

namespace sealtrain::core::internal {

// What sign-in reads about an account.
struct Account {
    std::int64_t id = 0;
    std::string passwordHash;
    crypto::SecretBytes totpSecret;
    std::uint64_t lastTotpStep = 0;
    bool disabled = false;
    std::int64_t failures = 0;                               // in a row, from `peer`
    std::int64_t lockedUntil = 0;                            // for `peer`
    std::string peer;                                        // the lockout peer these count against
    std::optional<std::vector<std::uint8_t>> resetCodeHash;  // set while a reset is open
    std::int64_t resetCodeExpires = 0;  // when that code stops working (Unix seconds)
};

// The account `name`, with the failures and lockout that count against `peer`; nullopt when
// there is no such user.
[[nodiscard]] Result<std::optional<Account>> findAccount(const Database& database,
                                                         const ControlPlaneOptions& options,
                                                         const std::string& name,
                                                         const std::string& peer);
// Why `account` may not sign in at `now` whatever its credentials (the audit entry's reason):
// disabled, locked out, or reset and waiting for its user to set new credentials.
struct ClosedAccount {
    std::string reason;
    ReasonCode code;
};
[[nodiscard]] std::optional<ClosedAccount> closedAccount(const Account& account, std::int64_t now);
// Counts one more failure in a row from the account's peer; from maxFailedSignIns on, locks it
// there for a time that doubles with every further failure, up to maxLockout.
[[nodiscard]] Result<void> countFailure(const Database& database,
                                        const ControlPlaneOptions& options, const Account& account,
                                        std::int64_t now, audit::EntryDraft& draft);
// Clears the count of the account's peer and remembers the code's time step (no replay).
[[nodiscard]] Result<void> clearFailures(const Database& database, const Account& account,
                                         std::uint64_t step);
// Forgets every peer's failures and lockout of `userId` (an admin enabled or reset the account).
[[nodiscard]] Result<void> clearAllFailures(const Database& database, std::int64_t userId);
// Ends every live session of `userId` but `keptSession` (a token), after a change of their own
// credentials, and records how many in the entry (detail sessions_ended); returns that count.
[[nodiscard]] Result<std::uint32_t> endOtherSessions(const Database& database, std::int64_t userId,
                                                     const std::string& keptSession,
                                                     audit::EntryDraft& draft);
// Forgets the counts of peers whose last failure is a day old and whose lock is over.
[[nodiscard]] Result<void> pruneFailures(const Database& database, std::int64_t now);

// Marks a sessionless call's entry denied with `reason`; the caller gets `error` once the entry
// is committed.
[[nodiscard]] Error refuse(audit::EntryDraft& draft, std::string reason, Error error);
// An unknown name is recorded only as a keyed hash: it may be a password typed into the wrong
// field.
void recordUnknownUser(const AuditedTransactions& gate, const std::string& name,
                       audit::EntryDraft& draft);
// What the database keeps of an enrolment or reset code.
[[nodiscard]] crypto::Sha256Digest hashOfResetCode(const std::string& code);

}  // namespace sealtrain::core::internal
