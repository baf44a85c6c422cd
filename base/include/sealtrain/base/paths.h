// Where Sealtrain keeps its files unless told otherwise.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace sealtrain {

// $SEALTRAIN_DATA_DIR, else $XDG_DATA_HOME/sealtrain, else ~/.local/share/sealtrain.
[[nodiscard]] std::filesystem::path defaultDataDir();

// The nearest existing ancestor of `path` (itself when it exists): where free space is measured
// for a directory not created yet.
[[nodiscard]] std::filesystem::path nearestExistingAncestor(const std::filesystem::path& path);

// Another of Sealtrain's programs, `name`, found beside the running one (installed: one bin
// folder) or in the build tree (app/<buildFolder>/<name> beside app/<this>/); nullopt when it is
// in neither place or not executable.
[[nodiscard]] std::optional<std::filesystem::path> siblingExecutable(std::string_view name,
                                                                     std::string_view buildFolder);

}  // namespace sealtrain
