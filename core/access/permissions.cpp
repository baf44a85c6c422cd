// The permission catalogue, the default roles and the rule for names.
#include "sealtrain/core/access/permissions.h"

#include <algorithm>
#include <map>

namespace sealtrain::core {

namespace permission {

const std::vector<PermissionInfo>& catalogue()
{
    using enum DutyClass;
    static const std::vector<PermissionInfo> kCatalogue{
        {kUserManage, Administration, "create, disable, enable and reset users"},
        {kRoleManage, Administration, "create and delete custom roles, list roles"},
        {kGrantManage, Administration, "grant and revoke roles, break-glass grants"},
        {kSessionManage, Administration, "list every session, revoke a user's sessions"},
        {kKeyringManage, Administration,
         "rotate, re-wrap and retire KEKs, change the keyring passphrase"},
        {kDatasetImport, Data, "import datasets and their new versions"},
        {kDatasetRead, Data, "read datasets one has a read grant on, train and sample on them"},
        {kDatasetGrant, Data, "grant and revoke read access to datasets"},
        {kJobSubmit, Jobs, "submit, edit, run and follow one's own training jobs"},
        {kJobApprove, Jobs, "approve or reject other people's jobs"},
        {kModelRegister, Jobs, "register model versions from checkpoints, ask for their promotion"},
        {kModelApprove, ModelApproval, "approve or reject other people's model promotions"},
        {kAuditRead, Audit, "browse the audit log and have it verified"},
        {kAuditExport, Audit, "export signed audit bundles for a reviewer"},
        {kWorkerEnroll, Infrastructure,
         "make enrolment tokens, revoke workers, declare interconnects"},
        {kWorkerManage, Infrastructure, "manage enrolled GPU workers"},
        {kWorkerRead, Infrastructure, "list workers with their inventory and heartbeats"},
        // A backup holds every dataset, key and entry: identity administration's, not data's.
        {kPlatformBackup, Administration,
         "take encrypted, signed backups of the whole control plane"}};
    return kCatalogue;
}

const std::vector<std::string_view>& all()
{
    static const std::vector<std::string_view> kAll = [] {
        std::vector<std::string_view> names;
        for (const auto& permission : catalogue())
            names.push_back(permission.name);
        return names;
    }();
    return kAll;
}

namespace {

const PermissionInfo* find(std::string_view permission)
{
    const auto& known = catalogue();
    const auto found = std::find_if(known.begin(), known.end(),
                                    [&](const PermissionInfo& p) { return p.name == permission; });
    return found == known.end() ? nullptr : &*found;
}

}  // namespace

bool isKnown(std::string_view permission)
{
    return find(permission) != nullptr;
}

std::string_view description(std::string_view permission)
{
    const PermissionInfo* info = find(permission);
    return info == nullptr ? std::string_view() : info->description;
}

std::optional<DutyClass> dutyOf(std::string_view permission)
{
    const PermissionInfo* info = find(permission);
    if (info == nullptr)
        return std::nullopt;
    return info->duty;
}

std::string_view dutyClassName(DutyClass duty)
{
    switch (duty) {
    case DutyClass::Administration: return "administration";
    case DutyClass::Data: return "data";
    case DutyClass::Jobs: return "jobs";
    case DutyClass::ModelApproval: return "model approval";
    case DutyClass::Infrastructure: return "infrastructure";
    case DutyClass::Audit: return "audit";
    }
    return "unknown";
}

const std::vector<std::pair<DutyClass, DutyClass>>& separatedDuties()
{
    using enum DutyClass;
    // Whoever administers identities could otherwise make themselves anything; whoever runs the
    // workers receives the data keys of the jobs dispatched to them.
    // One pair a line, so that a review (and a mutation) sees each.
    // clang-format off
    static const std::vector<std::pair<DutyClass, DutyClass>> kPairs{
        {Administration, Data},
        {Administration, Jobs},
        {Administration, ModelApproval},
        {Administration, Audit},
        {Administration, Infrastructure},
        {Infrastructure, Data},
        {Infrastructure, Jobs},
        {Infrastructure, ModelApproval},
    };
    // clang-format on
    return kPairs;
}

bool isSeparated(DutyClass duty)
{
    const auto& pairs = separatedDuties();
    return std::any_of(pairs.begin(), pairs.end(),
                       [&](const auto& pair) { return pair.first == duty || pair.second == duty; });
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
