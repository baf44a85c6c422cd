// Byte and file I/O that every layer shares: a sink that takes bytes in order and a random-access
// source with a fixed size (file and memory implementations, a view of part of another source),
// a file written atomically with a chosen mode, whole-file reads and EINTR-safe writes.
#pragma once

#include "sealtrain/base/result.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sealtrain {

class ByteSink {
public:
    virtual ~ByteSink() = default;
    [[nodiscard]] virtual Result<void> write(std::span<const std::uint8_t> bytes) = 0;

protected:
    ByteSink() = default;
    ByteSink(const ByteSink&) = default;
    ByteSink& operator=(const ByteSink&) = default;
};

class RandomAccessSource {
public:
    virtual ~RandomAccessSource() = default;
    // Fixed for the life of the source (a file's size when it was opened).
    [[nodiscard]] virtual std::uint64_t size() const = 0;
    // Fills all of `out` from `offset`; Integrity when that range runs past size().
    [[nodiscard]] virtual Result<void> readAt(std::uint64_t offset,
                                              std::span<std::uint8_t> out) const = 0;
    // The bytes in place when the source already holds them in memory (no copy), else nullopt;
    // nullopt too when the range runs past size().
    [[nodiscard]] virtual std::optional<std::span<const std::uint8_t>>
    viewAt(std::uint64_t /*offset*/, std::size_t /*length*/) const
    {
        return std::nullopt;
    }

protected:
    RandomAccessSource() = default;
    RandomAccessSource(const RandomAccessSource&) = default;
    RandomAccessSource& operator=(const RandomAccessSource&) = default;
};

// Collects everything written, for tests and small objects.
class MemorySink final : public ByteSink {
public:
    ~MemorySink() override;
    [[nodiscard]] Result<void> write(std::span<const std::uint8_t> bytes) override;
    [[nodiscard]] const std::vector<std::uint8_t>& bytes() const noexcept { return bytes_; }
    [[nodiscard]] std::vector<std::uint8_t> take() noexcept { return std::move(bytes_); }

private:
    std::vector<std::uint8_t> bytes_;
};

// Reads from bytes the caller keeps alive (a view, never a copy).
class MemorySource final : public RandomAccessSource {
public:
    explicit MemorySource(std::span<const std::uint8_t> bytes) noexcept
        : view_(bytes)
    {
    }

    [[nodiscard]] std::uint64_t size() const override { return view_.size(); }
    [[nodiscard]] Result<void> readAt(std::uint64_t offset,
                                      std::span<std::uint8_t> out) const override;
    [[nodiscard]] std::optional<std::span<const std::uint8_t>>
    viewAt(std::uint64_t offset, std::size_t length) const override;

private:
    std::span<const std::uint8_t> view_;
};

// `length` bytes of `base` from `offset`, read as a source of its own. `base` must outlive it.
class SubrangeSource final : public RandomAccessSource {
public:
    // InvalidArgument when the range does not lie inside `base`.
    [[nodiscard]] static Result<SubrangeSource> create(const RandomAccessSource& base,
                                                       std::uint64_t offset, std::uint64_t length);

    [[nodiscard]] std::uint64_t size() const override { return length_; }
    [[nodiscard]] Result<void> readAt(std::uint64_t offset,
                                      std::span<std::uint8_t> out) const override;
    [[nodiscard]] std::optional<std::span<const std::uint8_t>>
    viewAt(std::uint64_t offset, std::size_t length) const override;

private:
    SubrangeSource(const RandomAccessSource& base, std::uint64_t offset,
                   std::uint64_t length) noexcept
        : base_(&base)
        , offset_(offset)
        , length_(length)
    {
    }
    const RandomAccessSource* base_;
    std::uint64_t offset_;
    std::uint64_t length_;
};

// A read-only file, read with pread(2) (safe to share between threads).
class FileSource final : public RandomAccessSource {
public:
    // NotFound, PermissionDenied or Io, each naming the file.
    [[nodiscard]] static Result<std::unique_ptr<FileSource>>
    open(const std::filesystem::path& path);
    ~FileSource() override;
    FileSource(const FileSource&) = delete;
    FileSource& operator=(const FileSource&) = delete;

    [[nodiscard]] std::uint64_t size() const override { return size_; }
    [[nodiscard]] Result<void> readAt(std::uint64_t offset,
                                      std::span<std::uint8_t> out) const override;
    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

private:
    FileSource(int fd, std::uint64_t size, std::filesystem::path path) noexcept
        : fd_(fd)
        , size_(size)
        , path_(std::move(path))
    {
    }
    int fd_;
    std::uint64_t size_;
    std::filesystem::path path_;
};

// Writes a new file atomically: the bytes go to a temporary file beside `path` (created with
// `mode`, 0600 unless told otherwise), commit() flushes it to disk (fsync), renames it over `path`
// and syncs the folder. Destroying it without commit() removes the temporary file, so a failure
// never leaves a partial file.
class AtomicFileSink final : public ByteSink {
public:
    enum class Overwrite { Refuse, Allow };
    static constexpr unsigned kPrivateMode = 0600;

    // AlreadyExists when `path` exists and `overwrite` is Refuse; NotFound or Io otherwise.
    [[nodiscard]] static Result<std::unique_ptr<AtomicFileSink>>
    create(const std::filesystem::path& path, Overwrite overwrite = Overwrite::Refuse,
           unsigned mode = kPrivateMode);
    ~AtomicFileSink() override;
    AtomicFileSink(const AtomicFileSink&) = delete;
    AtomicFileSink& operator=(const AtomicFileSink&) = delete;

    [[nodiscard]] Result<void> write(std::span<const std::uint8_t> bytes) override;
    // Copies `length` bytes of `source` from `offset` (bounded memory, in the kernel where it
    // can), for rewriting part of a file without passing the bytes through user code.
    [[nodiscard]] Result<void> copyFrom(const FileSource& source, std::uint64_t offset,
                                        std::uint64_t length);
    [[nodiscard]] Result<void> commit();
    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

private:
    AtomicFileSink(int fd, std::filesystem::path path, std::filesystem::path temporary,
                   Overwrite overwrite) noexcept;
    Result<void> flushBuffer();
    void discard() noexcept;

    int fd_;
    std::filesystem::path path_;
    std::filesystem::path temporary_;
    Overwrite overwrite_;
    bool committed_ = false;
    std::vector<std::uint8_t> buffer_;
};

// Writes `bytes` as the whole content of `path` through an AtomicFileSink: `path` holds either
// its old content or all of `bytes`, never a part.
[[nodiscard]] Result<void> writeFileAtomically(const std::filesystem::path& path,
                                               std::span<const std::uint8_t> bytes,
                                               AtomicFileSink::Overwrite overwrite,
                                               unsigned mode = AtomicFileSink::kPrivateMode);

// The whole of a file. NotFound, PermissionDenied or Io, each naming the file, on failure;
// InvalidArgument when it is larger than `maxBytes` (a guard against reading the wrong file).
[[nodiscard]] Result<std::string> readWholeFile(const std::filesystem::path& path,
                                                std::uint64_t maxBytes = std::uint64_t{1} << 30);

// Writes all of `bytes` to `fd`, retrying after EINTR and short writes; errors name `path`.
[[nodiscard]] Result<void> writeAll(int fd, std::span<const std::uint8_t> bytes,
                                    const std::filesystem::path& path);

// Flushes a folder's entries (a rename or a new file in it) to disk with fsync.
[[nodiscard]] Result<void> syncFolder(const std::filesystem::path& folder);

}  // namespace sealtrain
