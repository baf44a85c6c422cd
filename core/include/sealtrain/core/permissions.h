// Permissions and the default roles of docs/operations/access-control.md. A role is a set of
// permissions; a grant gives a user a role globally or for one project (core/access.h).
#pragma once

#include "sealtrain/base/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::core::permission {

inline constexpr std::string_view kUserManage = "user.manage";
inline constexpr std::string_view kRoleManage = "role.manage";
inline constexpr std::string_view kGrantManage = "grant.manage";
inline constexpr std::string_view kSessionManage = "session.manage";
// Rotating, retiring and re-wrapping KEKs and changing the keyring passphrase (the admin's).
inline constexpr std::string_view kKeyringManage = "keyring.manage";
// Taking an encrypted, signed backup of the whole control plane (the admin's;
// docs/operations/backup.md).
inline constexpr std::string_view kPlatformBackup = "platform.backup";
inline constexpr std::string_view kDatasetImport = "dataset.import";
inline constexpr std::string_view kDatasetRead = "dataset.read";
inline constexpr std::string_view kDatasetGrant = "dataset.grant";
inline constexpr std::string_view kJobSubmit = "job.submit";
inline constexpr std::string_view kJobApprove = "job.approve";
inline constexpr std::string_view kAuditRead = "audit.read";
inline constexpr std::string_view kAuditExport = "audit.export";
// The model registry (docs/registry.md): registering versions and asking for their promotion;
// approving or rejecting other people's promotions and exports.
inline constexpr std::string_view kModelRegister = "model.register";
inline constexpr std::string_view kModelApprove = "model.approve";
// Infrastructure: enrolling (enrolment tokens, revocation), managing and listing GPU workers.
// Never combined with dataset.* or job.* permissions, nor with identity administration, in one
// role or for one user (separation of duties).
inline constexpr std::string_view kWorkerEnroll = "worker.enroll";
inline constexpr std::string_view kWorkerManage = "worker.manage";
inline constexpr std::string_view kWorkerRead = "worker.read";

// Every permission this build knows; a custom role may only hold these.
[[nodiscard]] const std::vector<std::string_view>& all();
[[nodiscard]] bool isKnown(std::string_view permission);
// What holding `permission` lets one do, in a few words, for a role editor; empty when unknown.
[[nodiscard]] std::string_view description(std::string_view permission);

}  // namespace sealtrain::core::permission

namespace sealtrain::core {

inline constexpr std::string_view kAdminRole = "admin";

struct RoleDefinition {
    std::string name;
    std::vector<std::string> permissions;
};

// admin, steward, engineer, approver, auditor, operator. The admin manages identities, access
// and the keyring but holds no data or job permissions; the auditor only reads and exports the
// audit log; the operator enrolls and manages workers and may hold no data or job permissions.
[[nodiscard]] const std::vector<RoleDefinition>& defaultRoles();

// Lowercase [a-z0-9_-], 1 to 64 characters: user, role, project and dataset names.
[[nodiscard]] bool isValidName(std::string_view name);
// InvalidArgument, in one sentence about the `what` name ("user", "role", …), unless `name` is
// valid.
[[nodiscard]] Result<void> requireValidName(std::string_view what, std::string_view name);

}  // namespace sealtrain::core
