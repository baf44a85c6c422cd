// The users that access decisions name, read from the users table: a user's id by name, and the
// admins. Access is below identity in core/'s order (issue #50), so these plain reads live here
// and identity, datasets and compliance use them too.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/store/database.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sealtrain::core {

// The id of the user `name`; NotFound, in one sentence, when there is none. For the services
// whose calls name a user (access, datasets, identity).
[[nodiscard]] Result<std::int64_t> userIdByName(const Database& database, const std::string& name);

// The enabled users holding the admin role globally and for good (no project, no break-glass,
// no expiry), by name: Access::adminNames and the compliance report's four-eyes claim.
[[nodiscard]] Result<std::vector<std::string>> enabledAdminNames(const Database& database);

}  // namespace sealtrain::core
