// Files over a gRPC stream (control.proto, "Workers"; registry.proto's DownloadExport; the import
// streams): the one upload helper (sendEach) and the one download helper (receiveFiles) of api/,
// for the sealed files a worker fetches and the checkpoints it uploads, a checkpoint or an export
// a client downloads, and the files of a dataset or model import. Each file starts with a chunk
// that carries its plain name and whole size; its bytes follow in chunks of at most 1 MiB. The
// receiver writes each file atomically under its folder and accepts a file only when exactly
// `size` bytes arrived. Internal to api/ (the server and the client library).
#pragma once

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/result.h"

#include "sealtrain/v1/control.pb.h"

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
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

// A file to send: read from `path`, named `name` to the receiver. `declaredSize`: the size the
// sender announces, when it measured the file before (an import lists its files first); a file
// that changed since arrives with another size than announced, and the receiver keeps nothing.
// Without it, the file's size when it is opened.
struct OutgoingFile {
    std::filesystem::path path;
    std::string name;
    std::optional<std::uint64_t> declaredSize;
};

// Sends each of `files` through `write(chunk) -> bool`: first a chunk that `begin(chunk, name,
// size)` fills (the file's name and whole size, and for the stream's first chunk whatever else it
// carries), then its bytes in chunks of at most kChunkBytes, `progress(sent)` told after each. The
// one upload helper of api/: FileChunk streams (a worker's checkpoint, the files a worker or a
// client fetches) and the import streams (ImportChunk, ImportModelChunk). Ok(false) when `write`
// failed: the receiver ended the call, and its status says why; NotFound, PermissionDenied or Io,
// naming the file, when one can not be read.
template <typename Chunk, typename Begin, typename Write>
[[nodiscard]] Result<bool> sendEach(const std::vector<OutgoingFile>& files, const Begin& begin,
                                    const Write& write,
                                    const std::function<void(std::uint64_t sent)>& progress = {})
{
    std::vector<std::uint8_t> buffer(kChunkBytes);
    std::uint64_t sent = 0;
    for (const OutgoingFile& file : files) {
        auto source = FileSource::open(file.path);
        if (!source)
            return source.error();
        const std::uint64_t size = (*source)->size();
        Chunk chunk;
        begin(chunk, file.name, file.declaredSize.value_or(size));
        if (!write(chunk))
            return false;
        for (std::uint64_t offset = 0; offset < size;) {
            const auto length =
                static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, size - offset));
            SEALTRAIN_TRY((*source)->readAt(offset, {buffer.data(), length}));
            chunk.Clear();
            chunk.set_data(buffer.data(), length);
            if (!write(chunk))
                return false;
            offset += length;
            sent += length;
            if (progress)
                progress(sent);
        }
    }
    return true;
}

// The files at `paths` by their own names over a FileChunk stream, `first` copied into the first
// chunk (the attempt an upload belongs to); Io when the receiver went away.
template <typename Write>
[[nodiscard]] Result<void> sendFiles(const std::vector<std::filesystem::path>& paths,
                                     const sealtrain::v1::FileChunk& first, const Write& write)
{
    std::vector<OutgoingFile> files;
    files.reserve(paths.size());
    for (const auto& path : paths)
        files.push_back({path, path.filename().string(), std::nullopt});
    bool isFirst = true;
    auto sent = sendEach<sealtrain::v1::FileChunk>(
        files,
        [&](sealtrain::v1::FileChunk& chunk, const std::string& name, std::uint64_t size) {
            if (isFirst)
                chunk = first;
            isFirst = false;
            chunk.set_name(name);
            chunk.set_size(size);
        },
        write);
    if (!sent)
        return sent.error();
    if (!*sent)
        return Error(ErrorCode::Io,
                     "The connection closed while the files were being sent; try again.");
    return success();
}

// Receives files into `folder` (which must exist) from `read(chunk) -> bool` until the stream
// ends; each file named once, by a plain name, at most `maxFiles` files and `maxBytes` bytes in
// all. Returns the files' paths, each committed only once complete (a file cut short is never
// committed); callers receive into a fresh folder and remove it on failure. `onFirst` sees the
// first chunk (its attempt, an export's digest) before anything is written. The one download
// helper of api/: `Chunk` is any message with a name and size on each file's first chunk and the
// bytes in `data` (FileChunk, registry.proto's ExportChunk).
template <typename Chunk = sealtrain::v1::FileChunk, typename Read, typename OnFirst>
[[nodiscard]] Result<std::vector<std::filesystem::path>>
receiveFiles(const std::filesystem::path& folder, std::size_t maxFiles, std::uint64_t maxBytes,
             const Read& read, const OnFirst& onFirst)
{
    std::vector<std::filesystem::path> received;
    std::set<std::string> names;
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
    Chunk chunk;
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
            if (!isPlainFileName(chunk.name()) || received.size() >= maxFiles
                || !names.insert(chunk.name()).second)
                return Error(ErrorCode::InvalidArgument,
                             fmt::format("The transfer named an unexpected file '{}'; only "
                                         "plain names, each once, at most {} files.",
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
