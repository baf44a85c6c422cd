// Sealed objects (docs/architecture.md; bytes in docs/formats/sealed.md): how
// Sealtrain keeps dataset shards, checkpoints and exported models at rest.
//
//   header     magic, format version, suite, random object id, chunk size, content type and
//              metadata; readable without any key (inspectSealedObject)
//   key block  KEK id and version, and the object's random 32-byte DEK wrapped with AES-256-GCM
//              under that KEK, bound to the object id, KEK id and version; replaceable on its own
//              (rewrapKeyBlock) when a KEK rotates
//   payload    C2SP chunked encryption (chunked.h) keyed by the DEK, with the exact header bytes
//              as its context, so any edit of the header fails the key commitment
//
// Writers never leave a partial file; readers verify the header and key block, the key
// commitment and the final chunk (the plaintext length) before they release any plaintext.
#pragma once

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/kek.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace sealtrain::crypto {

inline constexpr std::uint16_t kSealedFormatVersion = 1;
// Suite 1: C2SP chunked encryption with AES-256-GCM and HKDF-SHA-512 (16 KiB chunks); DEK
// wrapped with AES-256-GCM.
inline constexpr std::uint16_t kSealedSuiteCobblestone256 = 1;
inline constexpr std::size_t kSealedObjectIdSize = 16;
inline constexpr std::size_t kSealedMaxContentType = 255;
inline constexpr std::size_t kSealedMaxMetadata = 65535;

using SealedObjectId = std::array<std::uint8_t, kSealedObjectIdSize>;

// What the writer records in the header, in the clear (never put secrets here).
struct SealedMetadata {
    std::string contentType;  // printable ASCII, at most 255 bytes, e.g. "application/json"
    std::string metadata;     // UTF-8 (JSON by convention), at most 65535 bytes
};

// Everything inspectSealedObject can tell without a key. plaintextSize is what the layout
// implies; SealedReader::plaintextSize() is the authenticated one.
struct SealedObjectInfo {
    std::uint16_t formatVersion = 0;
    std::uint16_t suite = 0;
    SealedObjectId objectId{};
    std::uint32_t chunkSize = 0;
    SealedMetadata metadata;
    std::string kekId;
    std::uint32_t kekVersion = 0;
    std::uint64_t headerSize = 0;
    std::uint64_t keyBlockSize = 0;
    std::uint64_t payloadOffset = 0;
    std::uint64_t payloadSize = 0;
    std::uint64_t chunkCount = 0;
    std::uint64_t plaintextSize = 0;
};

// Parses the header and key block without any key. Integrity or Unsupported when the bytes are
// not a sealed object this build can read.
[[nodiscard]] Result<SealedObjectInfo> inspectSealedObject(const RandomAccessSource& source);
[[nodiscard]] Result<SealedObjectInfo> inspectSealedObject(const std::filesystem::path& path);

class SealedWriter final {
public:
    // Seals into a new file at `path` (written beside it under a temporary name; finish()
    // syncs and renames it into place). Refuses to replace an existing file unless `overwrite`.
    [[nodiscard]] static Result<SealedWriter>
    create(const std::filesystem::path& path, const Kek& kek, const SealedMetadata& metadata,
           AtomicFileSink::Overwrite overwrite = AtomicFileSink::Overwrite::Refuse);
    // Seals into `sink` (e.g. a MemorySink), which must outlive the writer.
    [[nodiscard]] static Result<SealedWriter> create(ByteSink& sink, const Kek& kek,
                                                     const SealedMetadata& metadata);

    SealedWriter(SealedWriter&&) noexcept;
    SealedWriter& operator=(SealedWriter&&) noexcept;
    SealedWriter(const SealedWriter&) = delete;
    SealedWriter& operator=(const SealedWriter&) = delete;
    // Without a successful finish(), a file writer removes its temporary file.
    ~SealedWriter();

    [[nodiscard]] Result<void> write(std::span<const std::uint8_t> plaintext);
    [[nodiscard]] Result<void> finish();
    [[nodiscard]] const SealedObjectId& objectId() const noexcept;

private:
    struct State;
    explicit SealedWriter(std::unique_ptr<State> state);
    [[nodiscard]] static Result<SealedWriter> start(std::unique_ptr<State> state, const Kek& kek,
                                                    const SealedMetadata& metadata);
    std::unique_ptr<State> state_;
};

// The data key (DEK) of one sealed object, by its object id, for a reader that was handed the
// keys of exactly the objects it may open instead of a KEK (a trainer gets the shards' keys of
// one dataset: docs/formats/trainer-keys.md). NotFound when it holds none for that object.
using DataKeyResolver = std::function<Result<SecretBytes>(const SealedObjectId& objectId)>;

// Unwraps the DEK of the sealed object in `source` with the KEK its key block names, without
// reading the payload: what the control plane hands a reader in place of the KEK. The reader's
// key commitment check still proves the key belongs to the object.
[[nodiscard]] Result<SecretBytes> unwrapDataKey(const RandomAccessSource& source,
                                                const KekResolver& resolver);

class SealedReader final {
public:
    // Opens a sealed object: parses the header, asks `resolver` for the KEK the key block names
    // (PermissionDenied for a retired version, NotFound for an unknown one), unwraps the DEK
    // (Unauthenticated for a wrong key or a key block from elsewhere), checks the payload's key
    // commitment and authenticates the plaintext length. `source` must outlive the reader.
    [[nodiscard]] static Result<SealedReader> open(const RandomAccessSource& source,
                                                   const KekResolver& resolver);
    [[nodiscard]] static Result<SealedReader> open(const std::filesystem::path& path,
                                                   const KekResolver& resolver);
    // The same with the object's DEK from `dataKeys` (no KEK involved). A DEK that is not the
    // object's fails the key commitment: Unauthenticated.
    [[nodiscard]] static Result<SealedReader> open(const RandomAccessSource& source,
                                                   const DataKeyResolver& dataKeys);

    SealedReader(SealedReader&&) noexcept;
    SealedReader& operator=(SealedReader&&) noexcept;
    SealedReader(const SealedReader&) = delete;
    SealedReader& operator=(const SealedReader&) = delete;
    ~SealedReader();

    [[nodiscard]] const SealedObjectInfo& info() const noexcept;
    [[nodiscard]] const SealedMetadata& metadata() const noexcept;
    [[nodiscard]] std::uint64_t plaintextSize() const noexcept;
    [[nodiscard]] std::uint64_t chunkCount() const noexcept;
    [[nodiscard]] std::size_t chunkPlaintextSize(std::uint64_t index) const noexcept;

    // Verifies and decrypts chunk `index` into `out` (at least 16384 bytes, or the chunk's
    // size); on failure `out` holds no plaintext.
    [[nodiscard]] Result<std::size_t> readChunk(std::uint64_t index, std::span<std::uint8_t> out);
    [[nodiscard]] Result<void> read(std::uint64_t offset, std::span<std::uint8_t> out);
    // Streams every chunk into `sink`; on failure the sink got only chunks before the bad one.
    // Write to an AtomicFileSink and commit only on success to release nothing at all.
    [[nodiscard]] Result<void> readAll(ByteSink& sink);

private:
    struct State;
    explicit SealedReader(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

// KEK rotation: re-wraps the object's DEK under `newKek` (after checking that the DEK the old
// key block gives opens the payload) and replaces the key block. The payload bytes are copied
// unchanged, never decrypted; the file is replaced atomically, so on any failure the old file is
// left as it was.
[[nodiscard]] Result<void> rewrapKeyBlock(const std::filesystem::path& path,
                                          const KekResolver& resolver, const Kek& newKek);

}  // namespace sealtrain::crypto
