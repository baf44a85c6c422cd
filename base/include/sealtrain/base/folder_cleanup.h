// A folder that is removed, with everything in it, when this goes out of scope unless it was
// kept: a half-made data directory, a half-imported dataset or one that could not be registered
// leaves nothing behind.
#pragma once

#include <filesystem>
#include <system_error>
#include <utility>

namespace sealtrain {

class FolderCleanup final {
public:
    explicit FolderCleanup(std::filesystem::path path)
        : path_(std::move(path))
    {
    }
    FolderCleanup(const FolderCleanup&) = delete;
    FolderCleanup& operator=(const FolderCleanup&) = delete;
    ~FolderCleanup()
    {
        if (!path_.empty()) {
            std::error_code ec;
            std::filesystem::remove_all(path_, ec);
        }
    }
    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
    // The folder stays: it was moved into place, or registered.
    void keep() noexcept { path_.clear(); }

private:
    std::filesystem::path path_;
};

}  // namespace sealtrain
