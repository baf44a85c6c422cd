// The permission catalogue, the default roles and the rule for names.
#include "sealtrain/core/permissions.h"

#include <algorithm>

namespace sealtrain::core {

namespace permission {

const std::vector<std::string_view>& all()
{
    static const std::vector<std::string_view> kAll{
        kUserManage,    kRoleManage,  kGrantManage,  kSessionManage, kKeyringManage,
        kDatasetImport, kDatasetRead, kDatasetGrant, kJobSubmit,     kJobApprove,
        kAuditRead,     kAuditExport, kWorkerEnroll, kWorkerManage,  kWorkerRead};
    return kAll;
}

bool isKnown(std::string_view permission)
{
    const auto& known = all();
    return std::find(known.begin(), known.end(), permission) != known.end();
}

}  // namespace permission

const std::vector<RoleDefinition>& defaultRoles()
{
    using namespace permission;
    static const std::vector<RoleDefinition> kRoles{
        {std::string(kAdminRole),
         {std::string(kUserManage), std::string(kRoleManage), std::string(kGrantManage),
          std::string(kSessionManage), std::string(kKeyringManage)}},
        {"steward",
         {std::string(kDatasetImport), std::string(kDatasetRead), std::string(kDatasetGrant)}},
        {"engineer", {std::string(kDatasetRead), std::string(kJobSubmit)}},
        {"approver", {std::string(kJobApprove)}},
        {"auditor", {std::string(kAuditRead), std::string(kAuditExport)}},
        {"operator",
         {std::string(kWorkerEnroll), std::string(kWorkerManage), std::string(kWorkerRead)}},
    };
    return kRoles;
}

bool isValidName(std::string_view name)
{
    if (name.empty() || name.size() > 64)
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
}

Result<void> requireValidName(std::string_view what, std::string_view name)
{
    if (isValidName(name))
        return success();
    return Error(ErrorCode::InvalidArgument,
                 "The " + std::string(what)
                     + " name must be 1 to 64 of a-z, 0-9, '_' and '-'; choose another.");
}

}  // namespace sealtrain::core
