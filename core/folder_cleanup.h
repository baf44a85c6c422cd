// A folder that is removed, with everything in it, when this goes out of scope unless it was
// kept: a half-made data directory or a dataset that could not be registered leaves nothing
// behind. Not installed: for core/'s own .cpp files.
#pragma once

#include <filesystem>
#include <system_error>
#include <utility>

namespace sealtrain::core {

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
    // The folder stays: it was moved into place, or registered.
    void keep() noexcept { path_.clear(); }

private:
    std::filesystem::path path_;
};

}  // namespace sealtrain::core
