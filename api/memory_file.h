// An upload's file held in memory (memfd) by the services that receive uploads (Datasets'
// ImportDataset, Registry's ImportModel). Not installed.
#pragma once

#include "sealtrain/base/result.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

namespace sealtrain::api::server_internal {

// An anonymous in-memory file (memfd): an upload's bytes, which the importer reads by the path
// /proc/self/fd/N and which vanish with the descriptor. Never on disk (it may be swapped, like
// any of the daemon's memory; production nodes run with encrypted swap or none).
class MemoryFile {
public:
    [[nodiscard]] static Result<MemoryFile> create(std::string name)
    {
        const int fd = ::memfd_create("sealtrain-upload", MFD_CLOEXEC);
        if (fd < 0)
            return Error(ErrorCode::ResourceExhausted,
                         "The control plane could not hold the upload in memory; "
                         "try again later or ask its operator.");
        return MemoryFile(fd, std::move(name));
    }

    MemoryFile(MemoryFile&& other) noexcept
        : fd_(std::exchange(other.fd_, -1))
        , name_(std::move(other.name_))
        , size_(other.size_)
    {
    }
    MemoryFile& operator=(MemoryFile&&) = delete;
    MemoryFile(const MemoryFile&) = delete;
    MemoryFile& operator=(const MemoryFile&) = delete;
    ~MemoryFile()
    {
        if (fd_ >= 0)
            ::close(fd_);
    }

    [[nodiscard]] Result<void> append(const std::string& bytes)
    {
        std::size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return Error(ErrorCode::ResourceExhausted,
                             "The control plane ran out of memory for the upload; "
                             "import less at a time or ask its operator.");
            done += static_cast<std::size_t>(n);
        }
        size_ += bytes.size();
        return success();
    }

    [[nodiscard]] std::filesystem::path path() const
    {
        return "/proc/self/fd/" + std::to_string(fd_);
    }
    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

private:
    MemoryFile(int fd, std::string name)
        : fd_(fd)
        , name_(std::move(name))
    {
    }

    int fd_;
    std::string name_;
    std::uint64_t size_ = 0;
};

}  // namespace sealtrain::api::server_internal
