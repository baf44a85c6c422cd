// ControlPlane's private types and helpers, shared by the .cpp files that implement its members
// (control_plane.cpp, control_plane_datasets.cpp). Not installed; nothing outside core/ sees it.
#pragma once

#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/database.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace sealtrain::core {

// How people authenticate to the control plane, as audit entries record it.
inline constexpr std::string_view kAuthMethod = "password+totp";

struct ControlPlane::Caller {
    std::int64_t userId = 0;
    std::string name;
    std::string sessionId;
    bool breakGlass = false;
};

struct ControlPlane::Request {
    std::string action;           // the audit action, e.g. "user.create"
    std::string_view permission;  // what the caller must hold; empty: any signed-in user
    std::string project;          // scope of the check; empty: global
    audit::Target target;
};

// The id of the user `name`; NotFound, in one sentence, when there is none.
[[nodiscard]] Result<std::int64_t> userIdByName(const Database& database, const std::string& name);

// Steps `statement` through its rows, calling `onRow` on each; stops at the first error.
[[nodiscard]] Result<void> forEachRow(Statement& statement,
                                      const std::function<void(const Statement&)>& onRow);

}  // namespace sealtrain::core
