// The tar archives of a backup (docs/formats/backup.md): the outer archive a reviewer lists with
// `tar tvf`, and the inner one inside the sealed payload. POSIX pax format through libarchive;
// only regular files, written in the order given. Reading is strict: a member must be a regular
// file with a relative name of safe components (no "..", no absolute path, no link), and a
// member bigger than the caller's bound is refused before its bytes are read. Not installed.
#pragma once

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/hash.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sealtrain::core::internal {

// Whether `name` is a relative path of components that are not empty, ".", ".." or hidden
// temporary names, at most 4 levels and 255 bytes: what a backup names and a restore accepts.
[[nodiscard]] bool isSafeMemberName(std::string_view name);

class TarWriter final {
public:
    // How members are described: pax headers where a name or size needs them (the payload), or
    // one GNU tar header block per member (the outer archive: short names, so its layout is
    // fixed and checkCanonicalTar can check every byte).
    enum class Format { Pax, Gnu };
    // Writes the archive into `sink`, which must outlive the writer.
    [[nodiscard]] static Result<TarWriter> create(ByteSink& sink, Format format = Format::Pax);
    TarWriter(TarWriter&&) noexcept;
    TarWriter& operator=(TarWriter&&) noexcept;
    TarWriter(const TarWriter&) = delete;
    TarWriter& operator=(const TarWriter&) = delete;
    ~TarWriter();

    // A member with these bytes.
    [[nodiscard]] Result<void> addBytes(const std::string& name,
                                        std::span<const std::uint8_t> bytes);
    // A member with the bytes of `file` (streamed, bounded memory); returns their SHA-256.
    [[nodiscard]] Result<crypto::Sha256Digest> addFile(const std::string& name,
                                                       const std::filesystem::path& file);
    // Writes the end of the archive.
    [[nodiscard]] Result<void> finish();

private:
    struct State;
    explicit TarWriter(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

struct TarMember {
    std::string name;
    std::uint64_t size = 0;
};

class TarReader final {
public:
    // Reads the archive at `file`; Integrity when it is not one.
    [[nodiscard]] static Result<TarReader> open(const std::filesystem::path& file);
    TarReader(TarReader&&) noexcept;
    TarReader& operator=(TarReader&&) noexcept;
    TarReader(const TarReader&) = delete;
    TarReader& operator=(const TarReader&) = delete;
    ~TarReader();

    // The next member, or nullopt at the end. Integrity for a member that is not a regular file
    // with a safe name.
    [[nodiscard]] Result<std::optional<TarMember>> next();
    // The current member's bytes into `sink` (at most `limit` of them, else Integrity);
    // returns their SHA-256.
    [[nodiscard]] Result<crypto::Sha256Digest> read(ByteSink& sink, std::uint64_t limit);

private:
    struct State;
    explicit TarReader(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

// Checks that `file` is laid out exactly as TarWriter's Gnu format writes members of these
// sizes: one header block each, its data, zero padding to 512 bytes, two zero blocks and nothing
// after. With the header checksums libarchive checks and the digests of the data, every byte of
// the archive is then accounted for: Integrity otherwise.
[[nodiscard]] Result<void> checkCanonicalTar(const std::filesystem::path& file,
                                             const std::vector<std::uint64_t>& memberSizes);

}  // namespace sealtrain::core::internal
