// The reason codes a refusal's audit entry carries (detail reason_code, docs/formats/audit.md,
// "Reason codes"): what programs, the compliance report first, read instead of the sentence,
// which may quote what a caller typed (issue #49). Each is made at compile time from a literal
// (base/result.h, ReasonCode), so no caller text can become one.
#pragma once

#include "sealtrain/base/result.h"

#include <array>

namespace sealtrain::core::reason {

// The session presented is not one, was revoked, has expired (idle or too old), or belongs to a
// disabled account.
inline constexpr ReasonCode kSessionInvalid{"session_invalid"};
inline constexpr ReasonCode kSessionRevoked{"session_revoked"};
inline constexpr ReasonCode kSessionExpired{"session_expired"};
inline constexpr ReasonCode kAccountDisabled{"account_disabled"};
// A sign-in refused: the name is nobody's, the credentials are wrong, the account is locked
// after repeated failures, or reset and waiting for its user's new credentials.
inline constexpr ReasonCode kUnknownUser{"unknown_user"};
inline constexpr ReasonCode kWrongCredentials{"wrong_credentials"};
inline constexpr ReasonCode kAccountLocked{"account_locked"};
inline constexpr ReasonCode kAccountInReset{"account_in_reset"};
// An enrolment or reset code that was right but is past its lifetime.
inline constexpr ReasonCode kCodeExpired{"code_expired"};
// The caller's roles do not give the permission in that project.
inline constexpr ReasonCode kNoPermission{"no_permission"};
// Separation of duties: deciding on one's own request (job, submission, promotion, export,
// grant, reset), leaving fewer admins than the rule needs, or one role holding duties that may
// not be combined (core/access/permissions.h).
inline constexpr ReasonCode kOwnApproval{"own_approval"};
inline constexpr ReasonCode kLastAdmin{"last_admin"};
inline constexpr ReasonCode kDutiesCombined{"duties_combined"};

// Every code, as docs/formats/audit.md lists them (test_core_reason_codes compares the two).
inline constexpr std::array kAll{
    kSessionInvalid,   kSessionRevoked, kSessionExpired, kAccountDisabled, kUnknownUser,
    kWrongCredentials, kAccountLocked,  kAccountInReset, kCodeExpired,     kNoPermission,
    kOwnApproval,      kLastAdmin,      kDutiesCombined};

// Whether `code` names a refusal by a separation-of-duties rule.
[[nodiscard]] constexpr bool isSeparationOfDuties(std::string_view code) noexcept
{
    return code == kOwnApproval.name() || code == kLastAdmin.name()
           || code == kDutiesCombined.name();
}

}  // namespace sealtrain::core::reason
