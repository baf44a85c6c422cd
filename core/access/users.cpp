// The users that access decisions name (access/users.h).
#include "sealtrain/core/access/users.h"

#include "sealtrain/core/access/permissions.h"

namespace sealtrain::core {

Result<std::int64_t> userIdByName(const Database& database, const std::string& name)
{
    std::int64_t id = 0;
    auto found = database.queryOne("SELECT id FROM users WHERE name = ?", {name},
                                   [&](const Statement& row) { id = row.integer(0); });
    if (!found)
        return found.error();
    if (!*found)
        return Error(ErrorCode::NotFound,
                     "There is no user '" + name + "'; check the name with 'user list'.");
    return id;
}

Result<std::vector<std::string>> enabledAdminNames(const Database& database)
{
    std::vector<std::string> names;
    SEALTRAIN_TRY(database.query(
        "SELECT DISTINCT u.name FROM users u JOIN grants g ON g.user_id = u.id WHERE g.role = ? "
        "AND g.project = '' AND g.break_glass = 0 AND g.expires = 0 AND u.disabled = 0 "
        "ORDER BY u.name",
        {std::string(kAdminRole)}, [&](const Statement& row) { names.push_back(row.text(0)); }));
    return names;
}

}  // namespace sealtrain::core
