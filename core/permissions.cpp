// The permission catalogue, the default roles and the rule for names.
#include "sealtrain/core/permissions.h"

#include <algorithm>
#include <map>

namespace sealtrain::core {

namespace permission {

const std::vector<std::string_view>& all()
{
    static const std::vector<std::string_view> kAll{
        kUserManage,    kRoleManage,   kGrantManage,   kSessionManage, kKeyringManage,
        kDatasetImport, kDatasetRead,  kDatasetGrant,  kJobSubmit,     kJobApprove,
        kModelRegister, kModelApprove, kAuditRead,     kAuditExport,   kWorkerEnroll,
        kWorkerManage,  kWorkerRead,   kPlatformBackup};
    return kAll;
}

bool isKnown(std::string_view permission)
{
    const auto& known = all();
    return std::find(known.begin(), known.end(), permission) != known.end();
}

std::string_view description(std::string_view permission)
{
    static const std::map<std::string_view, std::string_view> kWhat{
        {kUserManage, "create, disable, enable and reset users"},
        {kRoleManage, "create and delete custom roles, list roles"},
        {kGrantManage, "grant and revoke roles, break-glass grants"},
        {kSessionManage, "list every session, revoke a user's sessions"},
        {kKeyringManage, "rotate, re-wrap and retire KEKs, change the keyring passphrase"},
        {kDatasetImport, "import datasets and their new versions"},
        {kDatasetRead, "read datasets one has a read grant on, train and sample on them"},
        {kDatasetGrant, "grant and revoke read access to datasets"},
        {kJobSubmit, "submit, edit, run and follow one's own training jobs"},
        {kJobApprove, "approve or reject other people's jobs"},
        {kModelRegister, "register model versions from checkpoints, ask for their promotion"},
        {kModelApprove, "approve or reject other people's model promotions"},
        {kAuditRead, "browse the audit log and have it verified"},
        {kAuditExport, "export signed audit bundles for a reviewer"},
        {kWorkerEnroll, "make enrolment tokens, revoke workers, declare interconnects"},
        {kWorkerManage, "manage enrolled GPU workers"},
        {kWorkerRead, "list workers with their inventory and heartbeats"},
        {kPlatformBackup, "take encrypted, signed backups of the whole control plane"}};
    const auto found = kWhat.find(permission);
    return found == kWhat.end() ? std::string_view() : found->second;
}

}  // namespace permission

const std::vector<RoleDefinition>& defaultRoles()
{
    using namespace permission;
    static const std::vector<RoleDefinition> kRoles{
        {std::string(kAdminRole),
         {std::string(kUserManage), std::string(kRoleManage), std::string(kGrantManage),
          std::string(kSessionManage), std::string(kKeyringManage), std::string(kPlatformBackup)}},
        {"steward",
         {std::string(kDatasetImport), std::string(kDatasetRead), std::string(kDatasetGrant)}},
        {"engineer",
         {std::string(kDatasetRead), std::string(kJobSubmit), std::string(kModelRegister)}},
        {"approver", {std::string(kJobApprove), std::string(kModelApprove)}},
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
