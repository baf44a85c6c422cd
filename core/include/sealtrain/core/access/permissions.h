// Permissions and the default roles of docs/operations/access-control.md. A role is a set of
// permissions; a grant gives a user a role globally or for one project (core/access/access.h).
#pragma once

#include "sealtrain/base/result.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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

// The duty a permission serves (issue #48). Every permission declares its class beside its name
// in the catalogue (permissions.cpp); separation of duties and four eyes are derived from the
// classes, never from a list of permissions.
enum class DutyClass {
    Administration,  // identities, access, the keyring, backups
    Data,            // datasets: import, read, grants
    Jobs,            // training jobs and the versions registered from them
    ModelApproval,   // approving other people's promotions and exports
    Infrastructure,  // GPU workers
    Audit,           // reading and exporting the audit log
};
inline constexpr std::size_t kDutyClassCount = 6;

struct PermissionInfo {
    std::string_view name;
    DutyClass duty;
    std::string_view description;  // what holding it lets one do, in a few words
};

// The catalogue: every permission this build knows, with its duty class.
[[nodiscard]] const std::vector<PermissionInfo>& catalogue();
// Every permission this build knows; a custom role may only hold these.
[[nodiscard]] const std::vector<std::string_view>& all();
[[nodiscard]] bool isKnown(std::string_view permission);
// What holding `permission` lets one do, in a few words, for a role editor; empty when unknown.
[[nodiscard]] std::string_view description(std::string_view permission);
// The duty class `permission` declares; nullopt when this build does not know it.
[[nodiscard]] std::optional<DutyClass> dutyOf(std::string_view permission);
// The class as refusals and the docs say it, e.g. "infrastructure".
[[nodiscard]] std::string_view dutyClassName(DutyClass duty);

// The separation of duties (docs/operations/access-control.md): the pairs of classes that no role
// combines and no user holds together.
[[nodiscard]] const std::vector<std::pair<DutyClass, DutyClass>>& separatedDuties();
// Whether `duty` is kept apart from another class: a grant, a role's creation or a change that
// gives it takes a second admin whenever there are two or more.
[[nodiscard]] bool isSeparated(DutyClass duty);

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
