// Files over a gRPC stream of FileChunk messages (control.proto, "Workers"): the sealed files a
// worker fetches (a dataset's shards, a checkpoint to resume from) and the checkpoints it
// uploads. Each file starts with a chunk that carries its plain name and whole size; its bytes
// follow in chunks of at most 1 MiB. The receiver writes each file atomically under its folder
// and accepts a file only when exactly `size` bytes arrived. Only sealed bytes travel this way:
// nothing here is secret. Internal to api/ (the server and the client library).
#pragma once

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/result.h"

#include "sealtrain/v1/control.pb.h"

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace sealtrain::api::transfer {

inline constexpr std::size_t kChunkBytes = std::size_t{1} << 20U;

// Whether `name` may name a transferred file: a plain name, no folder, not hidden.
[[nodiscard]] inline bool isPlainFileName(const std::string& name)
{
    if (name.empty() || name.size() > 200 || name.front() == '.')
        return false;
    for (const char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                        || c == '.' || c == '_' || c == '-';
        if (!ok)
            return false;
    }
    return true;
}

// Sends the files at `paths` (their own names) through `write(chunk) -> bool`; `first` is copied
// into the first chunk (the attempt an upload belongs to).
template <typename Write>
[[nodiscard]] Result<void> sendFiles(const std::vector<std::filesystem::path>& paths,
                                     const sealtrain::v1::FileChunk& first, const Write& write)
{
    bool isFirst = true;
    std::vector<std::uint8_t> buffer(kChunkBytes);
    for (const auto& path : paths) {
        auto source = FileSource::open(path);
        if (!source)
            return source.error();
        const std::uint64_t size = (*source)->size();
        std::uint64_t offset = 0;
        do {
            const auto length =
                static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, size - offset));
            SEALTRAIN_TRY((*source)->readAt(offset, {buffer.data(), length}));
            sealtrain::v1::FileChunk chunk;
            if (isFirst)
                chunk = first;
            isFirst = false;
            if (offset == 0) {
                chunk.set_name(path.filename().string());
                chunk.set_size(size);
            }
            chunk.set_data(buffer.data(), length);
            if (!write(chunk))
                return Error(ErrorCode::Io, fmt::format("The connection closed while '{}' was "
                                                        "being sent; try again.",
                                                        path.filename().string()));
            offset += length;
        } while (offset < size);
    }
    return success();
}

// Receives files into `folder` (which must exist) from `read(chunk) -> bool` until the stream
// ends; at most `maxFiles` files and `maxBytes` bytes in all. Returns the files' paths, each
// committed only once complete (a file cut short is never committed); callers receive into a
// fresh folder and remove it on failure. `onFirst` sees the first chunk (for its attempt) before
// anything is written.
template <typename Read, typename OnFirst>
[[nodiscard]] Result<std::vector<std::filesystem::path>>
receiveFiles(const std::filesystem::path& folder, std::size_t maxFiles, std::uint64_t maxBytes,
             const Read& read, const OnFirst& onFirst)
{
    std::vector<std::filesystem::path> received;
    std::unique_ptr<AtomicFileSink> sink;
    std::uint64_t expected = 0;
    std::uint64_t got = 0;
    std::uint64_t total = 0;
    bool first = true;
    const auto incomplete = [&] {
        return Error(ErrorCode::Integrity,
                     fmt::format("The file '{}' arrived incomplete ({} of {} bytes); try again.",
                                 sink ? sink->path().filename().string() : std::string("?"), got,
                                 expected));
    };
    sealtrain::v1::FileChunk chunk;
    while (read(chunk)) {
        if (first)
            SEALTRAIN_TRY(onFirst(chunk));
        first = false;
        if (!chunk.name().empty()) {
            if (sink && got != expected)
                return incomplete();
            if (sink) {
                SEALTRAIN_TRY(sink->commit());
                received.push_back(sink->path());
                sink.reset();
            }
            if (!isPlainFileName(chunk.name()) || received.size() >= maxFiles)
                return Error(ErrorCode::InvalidArgument,
                             fmt::format("The transfer named an unexpected file '{}'; only "
                                         "plain names, at most {} files.",
                                         chunk.name().substr(0, 64), maxFiles));
            auto created =
                AtomicFileSink::create(folder / chunk.name(), AtomicFileSink::Overwrite::Allow);
            if (!created)
                return created.error();
            sink = std::move(created).value();
            expected = chunk.size();
            got = 0;
        }
        if (!sink)
            return Error(ErrorCode::InvalidArgument,
                         "The transfer sent bytes before naming their file; update the sender.");
        got += chunk.data().size();
        total += chunk.data().size();
        if (got > expected || total > maxBytes)
            return Error(ErrorCode::InvalidArgument,
                         fmt::format("The transfer is larger than it said or than {} bytes in "
                                     "all; nothing was kept.",
                                     maxBytes));
        SEALTRAIN_TRY(sink->write(
            {reinterpret_cast<const std::uint8_t*>(chunk.data().data()), chunk.data().size()}));
    }
    if (sink) {
        if (got != expected)
            return incomplete();
        SEALTRAIN_TRY(sink->commit());
        received.push_back(sink->path());
    }
    return received;
}

}  // namespace sealtrain::api::transfer
