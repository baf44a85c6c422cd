// File and memory byte sources and sinks over POSIX calls (pread, write, fsync, renameat2).
#include "sealtrain/base/byte_io.h"

#include "sealtrain/base/wipe.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>

namespace sealtrain {

namespace {

constexpr std::size_t kSinkBufferSize = std::size_t{1} << 20;
constexpr std::size_t kCopyBlockSize = std::size_t{1} << 20;

Error fileError(int error, const std::string& what, const std::filesystem::path& path)
{
    ErrorCode code = ErrorCode::Io;
    if (error == ENOENT || error == ENOTDIR)
        code = ErrorCode::NotFound;
    else if (error == EACCES || error == EPERM || error == EROFS)
        code = ErrorCode::PermissionDenied;
    else if (error == ENOSPC || error == EDQUOT)
        code = ErrorCode::ResourceExhausted;
    return Error(code, fmt::format("Cannot {} '{}' ({}); check the path, its permissions and the "
                                   "free space.",
                                   what, path.string(), std::strerror(error)));
}

Error shortRead()
{
    return Error(ErrorCode::Integrity,
                 "The data ends before the expected length, so it was truncated.");
}

}  // namespace

MemorySink::~MemorySink()
{
    wipeMemory(bytes_);
}

Result<void> MemorySink::write(std::span<const std::uint8_t> bytes)
{
    bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
    return success();
}

Result<void> MemorySource::readAt(std::uint64_t offset, std::span<std::uint8_t> out) const
{
    if (offset > view_.size() || out.size() > view_.size() - offset)
        return shortRead();
    std::copy_n(view_.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
    return success();
}

std::optional<std::span<const std::uint8_t>> MemorySource::viewAt(std::uint64_t offset,
                                                                  std::size_t length) const
{
    if (offset > view_.size() || length > view_.size() - offset)
        return std::nullopt;
    return view_.subspan(static_cast<std::size_t>(offset), length);
}

Result<SubrangeSource> SubrangeSource::create(const RandomAccessSource& base, std::uint64_t offset,
                                              std::uint64_t length)
{
    if (offset > base.size() || length > base.size() - offset) {
        return Error(ErrorCode::InvalidArgument,
                     "The requested range does not lie inside the source; pass an offset and "
                     "length within its size.");
    }
    return SubrangeSource(base, offset, length);
}

Result<void> SubrangeSource::readAt(std::uint64_t offset, std::span<std::uint8_t> out) const
{
    if (offset > length_ || out.size() > length_ - offset)
        return shortRead();
    return base_->readAt(offset_ + offset, out);
}

std::optional<std::span<const std::uint8_t>> SubrangeSource::viewAt(std::uint64_t offset,
                                                                    std::size_t length) const
{
    if (offset > length_ || length > length_ - offset)
        return std::nullopt;
    return base_->viewAt(offset_ + offset, length);
}

Result<std::unique_ptr<FileSource>> FileSource::open(const std::filesystem::path& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fileError(errno, "open", path);
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        const int error = errno;
        ::close(fd);
        return fileError(error, "inspect", path);
    }
    if (!S_ISREG(info.st_mode)) {
        ::close(fd);
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("'{}' is not a regular file; pass a file.", path.string()));
    }
    return std::unique_ptr<FileSource>(
        new FileSource(fd, static_cast<std::uint64_t>(info.st_size), path));
}

FileSource::~FileSource()
{
    ::close(fd_);
}

Result<void> FileSource::readAt(std::uint64_t offset, std::span<std::uint8_t> out) const
{
    if (offset > size_ || out.size() > size_ - offset)
        return shortRead();
    while (!out.empty()) {
        const ssize_t got = ::pread(fd_, out.data(), out.size(), static_cast<off_t>(offset));
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return fileError(errno, "read", path_);
        }
        if (got == 0)
            return shortRead();  // the file shrank after it was opened
        out = out.subspan(static_cast<std::size_t>(got));
        offset += static_cast<std::uint64_t>(got);
    }
    return success();
}

AtomicFileSink::AtomicFileSink(int fd, std::filesystem::path path, std::filesystem::path temporary,
                               Overwrite overwrite) noexcept
    : fd_(fd)
    , path_(std::move(path))
    , temporary_(std::move(temporary))
    , overwrite_(overwrite)
{
}

Result<std::unique_ptr<AtomicFileSink>> AtomicFileSink::create(const std::filesystem::path& path,
                                                               Overwrite overwrite, unsigned mode)
{
    std::error_code ignored;
    if (overwrite == Overwrite::Refuse && std::filesystem::exists(path, ignored)) {
        return Error(ErrorCode::AlreadyExists,
                     fmt::format("'{}' already exists; choose another name or allow overwriting.",
                                 path.string()));
    }
    const auto folder = path.parent_path();
    std::string pattern = (folder / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
    const int fd = ::mkostemp(pattern.data(), O_CLOEXEC);  // mode 0600
    if (fd < 0)
        return fileError(errno, "create a temporary file for", path);
    if (mode != kPrivateMode && ::fchmod(fd, static_cast<mode_t>(mode)) != 0) {
        const int error = errno;
        ::close(fd);
        ::unlink(pattern.c_str());
        return fileError(error, "set the mode of a temporary file for", path);
    }
    auto sink = std::unique_ptr<AtomicFileSink>(
        new AtomicFileSink(fd, path, std::filesystem::path(pattern), overwrite));
    sink->buffer_.reserve(kSinkBufferSize);
    return sink;
}

AtomicFileSink::~AtomicFileSink()
{
    discard();
    buffer_.resize(buffer_.capacity());
    wipeMemory(buffer_);
}

void AtomicFileSink::discard() noexcept
{
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
    if (!committed_ && !temporary_.empty()) {
        ::unlink(temporary_.c_str());
        temporary_.clear();
    }
}

Result<void> AtomicFileSink::flushBuffer()
{
    if (buffer_.empty())
        return success();
    auto written = writeAll(fd_, buffer_, path_);
    buffer_.clear();
    return written;
}

Result<void> AtomicFileSink::write(std::span<const std::uint8_t> bytes)
{
    if (fd_ < 0) {
        return Error(ErrorCode::Internal,
                     "The output file was already committed or discarded; write before commit.");
    }
    if (buffer_.size() + bytes.size() <= kSinkBufferSize) {
        buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
        return success();
    }
    SEALTRAIN_TRY(flushBuffer());
    if (bytes.size() >= kSinkBufferSize)
        return writeAll(fd_, bytes, path_);
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
    return success();
}

Result<void> AtomicFileSink::copyFrom(const FileSource& source, std::uint64_t offset,
                                      std::uint64_t length)
{
    if (offset > source.size() || length > source.size() - offset)
        return shortRead();
    SEALTRAIN_TRY(flushBuffer());
    std::vector<std::uint8_t> block(
        static_cast<std::size_t>(std::min<std::uint64_t>(length, kCopyBlockSize)));
    while (length > 0) {
        const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(length, block.size()));
        const std::span<std::uint8_t> part(block.data(), take);
        SEALTRAIN_TRY(source.readAt(offset, part));
        SEALTRAIN_TRY(writeAll(fd_, part, path_));
        offset += take;
        length -= take;
    }
    return success();
}

Result<void> AtomicFileSink::commit()
{
    if (fd_ < 0) {
        return Error(ErrorCode::Internal,
                     "The output file was already committed or discarded; commit only once.");
    }
    SEALTRAIN_TRY(flushBuffer());
    if (::fsync(fd_) != 0)
        return fileError(errno, "flush to disk", path_);
    if (::close(fd_) != 0) {
        fd_ = -1;
        return fileError(errno, "close", path_);
    }
    fd_ = -1;
    const unsigned flags = overwrite_ == Overwrite::Refuse ? RENAME_NOREPLACE : 0U;
    if (::renameat2(AT_FDCWD, temporary_.c_str(), AT_FDCWD, path_.c_str(), flags) != 0) {
        const int error = errno;
        if (error == EEXIST) {
            return Error(ErrorCode::AlreadyExists,
                         fmt::format("'{}' appeared while it was being written; choose another "
                                     "name or allow overwriting.",
                                     path_.string()));
        }
        return fileError(error, "rename the temporary file onto", path_);
    }
    committed_ = true;
    return syncFolder(path_.parent_path());
}

Result<void> writeAll(int fd, std::span<const std::uint8_t> bytes,
                      const std::filesystem::path& path)
{
    while (!bytes.empty()) {
        const ssize_t written = ::write(fd, bytes.data(), bytes.size());
        if (written < 0) {
            if (errno == EINTR)
                continue;
            return fileError(errno, "write", path);
        }
        bytes = bytes.subspan(static_cast<std::size_t>(written));
    }
    return success();
}

Result<void> writeFileAtomically(const std::filesystem::path& path,
                                 std::span<const std::uint8_t> bytes,
                                 AtomicFileSink::Overwrite overwrite, unsigned mode)
{
    auto sink = AtomicFileSink::create(path, overwrite, mode);
    if (!sink)
        return sink.error();
    SEALTRAIN_TRY((*sink)->write(bytes));
    return (*sink)->commit();
}

Result<std::string> readWholeFile(const std::filesystem::path& path, std::uint64_t maxBytes)
{
    auto source = FileSource::open(path);
    if (!source)
        return source.error();
    const std::uint64_t size = (*source)->size();
    if (size > maxBytes) {
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("'{}' is larger ({} bytes) than such a file can be ({} bytes); "
                                 "check that it is the right file.",
                                 path.string(), size, maxBytes));
    }
    std::string text(static_cast<std::size_t>(size), '\0');
    SEALTRAIN_TRY((*source)->readAt(
        0, {reinterpret_cast<std::uint8_t*>(text.data()), static_cast<std::size_t>(size)}));
    return text;
}

Result<void> syncFolder(const std::filesystem::path& folder)
{
    const int fd =
        ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return fileError(errno, "open the folder", folder);
    const int rc = ::fsync(fd);
    const int error = errno;
    ::close(fd);
    if (rc != 0)
        return fileError(error, "sync the folder", folder);
    return success();
}

}  // namespace sealtrain
