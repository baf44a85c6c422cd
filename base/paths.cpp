// Default locations, following the XDG base directory convention.
#include "sealtrain/base/paths.h"

#include <unistd.h>

#include <cstdlib>

namespace sealtrain {

std::filesystem::path defaultDataDir()
{
    if (const char* dir = std::getenv("SEALTRAIN_DATA_DIR"); dir != nullptr && *dir != '\0')
        return dir;
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg != nullptr && *xdg != '\0')
        return std::filesystem::path(xdg) / "sealtrain";
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
        return std::filesystem::path(home) / ".local" / "share" / "sealtrain";
    return std::filesystem::current_path() / "sealtrain-data";
}

std::filesystem::path nearestExistingAncestor(const std::filesystem::path& path)
{
    std::error_code ec;
    std::filesystem::path current = std::filesystem::absolute(path, ec);
    if (ec)
        current = path;
    while (!current.empty()) {
        if (std::filesystem::exists(current, ec))
            return current;
        if (current == current.parent_path())
            break;
        current = current.parent_path();
    }
    return std::filesystem::path("/");
}

std::optional<std::filesystem::path> siblingExecutable(std::string_view name,
                                                       std::string_view buildFolder)
{
    std::error_code error;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error)
        return std::nullopt;
    for (const auto& candidate :
         {self.parent_path() / name, self.parent_path().parent_path() / buildFolder / name}) {
        if (::access(candidate.c_str(), X_OK) == 0)
            return candidate;
    }
    return std::nullopt;
}

}  // namespace sealtrain
