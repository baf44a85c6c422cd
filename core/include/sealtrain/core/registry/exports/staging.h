// An exported model's folder staged on disk for one download (issue #48): built once, written
// to a private folder under the data directory's downloads/ sealed with a key that only this
// object holds (C2SP chunked encryption, crypto/chunked.h), and streamed from there a piece at a
// time, so that a download holds no more than one piece in memory and no plaintext weights reach
// the disk. The folder goes when the object does; a folder left by a crash is removed when the
// data directory is next opened.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/registry/exports/export_folder.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace sealtrain::core {

class StagedExport final {
public:
    struct File {
        std::string name;
        std::uint64_t size = 0;  // plaintext bytes
    };

    // Writes `folder` under a new folder of `root` (made 0700 when missing) and lets the bytes
    // of `folder` go. Io, naming the folder, when the disk refuses; nothing is left behind then.
    [[nodiscard]] static Result<StagedExport> stage(ExportFolder folder,
                                                    const std::filesystem::path& root);

    StagedExport(StagedExport&& other) noexcept;
    StagedExport& operator=(StagedExport&& other) noexcept;
    StagedExport(const StagedExport&) = delete;
    StagedExport& operator=(const StagedExport&) = delete;
    ~StagedExport();

    [[nodiscard]] const std::string& digest() const noexcept { return digest_; }
    [[nodiscard]] const std::vector<File>& files() const noexcept { return files_; }

    // Reads file `index` front to back, each piece authenticated before it is passed to
    // `consume` (at most `piece` bytes, the last possibly shorter; an empty file passes one
    // empty piece). `consume` returns false to stop: Cancelled then. Integrity when the staged
    // file was changed on disk.
    [[nodiscard]] Result<void>
    read(std::size_t index, std::size_t piece,
         const std::function<bool(std::span<const std::uint8_t>)>& consume) const;

private:
    StagedExport() = default;
    void remove() noexcept;

    std::filesystem::path folder_;
    crypto::SecretBytes key_;
    std::string digest_;
    std::vector<File> files_;
};

}  // namespace sealtrain::core
