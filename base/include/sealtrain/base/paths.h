// Where Sealtrain keeps its files unless told otherwise.
#pragma once

#include <filesystem>

namespace sealtrain {

// $SEALTRAIN_DATA_DIR, else $XDG_DATA_HOME/sealtrain, else ~/.local/share/sealtrain.
[[nodiscard]] std::filesystem::path defaultDataDir();

// The nearest existing ancestor of `path` (itself when it exists): where free space is measured
// for a directory not created yet.
[[nodiscard]] std::filesystem::path nearestExistingAncestor(const std::filesystem::path& path);

}  // namespace sealtrain
