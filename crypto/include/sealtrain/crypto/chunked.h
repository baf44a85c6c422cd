// C2SP chunked encryption (c2sp.org/chunked-encryption, "Cobblestone-256"): a message of any
// length as 16 KiB chunks sealed with AES-256-GCM under a key, base nonce and key commitment
// that HKDF-SHA-512 expands from an input key, a random 24-byte salt and a context.
//
// Layout: salt (24) || commitment (32) || chunk 0 || chunk 1 || ... where every chunk but the
// last holds 16384 plaintext bytes plus a 16-byte tag and the last holds fewer than 16384 (it
// may be empty), which marks the end. Chunk i's nonce is the base nonce XOR i (big-endian).
//
// The reader checks the commitment before it decrypts anything, and a chunk's plaintext is
// released only after its tag verified. Nothing holds the whole message in memory: the writer
// buffers at most a batch of chunks and the reader reads a batch at a time.
#pragma once

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/aead.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

namespace sealtrain::crypto {

inline constexpr std::size_t kChunkSize = 16384;
inline constexpr std::size_t kEncryptedChunkSize = kChunkSize + kGcmTagSize;
inline constexpr std::size_t kChunkedSaltSize = 24;
inline constexpr std::size_t kChunkedCommitmentSize = 32;
inline constexpr std::size_t kChunkedHeaderSize = kChunkedSaltSize + kChunkedCommitmentSize;
inline constexpr std::uint64_t kMaxChunkCount = std::uint64_t{1} << 38;

using ChunkedSalt = std::array<std::uint8_t, kChunkedSaltSize>;

// Chunk `index`'s nonce: `baseNonce` with its last five bytes XOR'd with the 38-bit index.
[[nodiscard]] GcmNonce chunkNonce(const GcmNonce& baseNonce, std::uint64_t index) noexcept;

// Length of the ciphertext (with the 56-byte header) for a message of `plaintextSize` bytes.
[[nodiscard]] std::uint64_t chunkedCiphertextSize(std::uint64_t plaintextSize) noexcept;

class ChunkedWriter final {
public:
    // Writes the salt and commitment to `sink` at once. `inputKey` must be 32 uniformly random
    // bytes. `salt` is for conformance tests only: a real message takes a fresh random one.
    [[nodiscard]] static Result<ChunkedWriter>
    create(const SecretBytes& inputKey, std::span<const std::uint8_t> context, ByteSink& sink,
           const std::optional<ChunkedSalt>& salt = std::nullopt);
    // Raw mode (the spec's appendix): no salt or commitment, `key` and `baseNonce` used as they
    // are. Hazardous: for conformance tests and for protocols that derive both themselves.
    [[nodiscard]] static Result<ChunkedWriter> createRaw(const SecretBytes& key,
                                                         const GcmNonce& baseNonce, ByteSink& sink);

    ChunkedWriter(ChunkedWriter&&) noexcept;
    ChunkedWriter& operator=(ChunkedWriter&&) noexcept;
    ChunkedWriter(const ChunkedWriter&) = delete;
    ChunkedWriter& operator=(const ChunkedWriter&) = delete;
    ~ChunkedWriter();

    // After any error the writer refuses every further call.
    [[nodiscard]] Result<void> write(std::span<const std::uint8_t> plaintext);
    // Seals the short final chunk (empty when the message is a multiple of 16 KiB) and flushes.
    [[nodiscard]] Result<void> finish();
    [[nodiscard]] std::uint64_t plaintextSize() const noexcept;

private:
    struct State;
    explicit ChunkedWriter(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

class ChunkedReader;

// Reads a message front to back, one verified chunk at a time. The reader must stay where it is
// (not moved) while a stream reads from it. Once it reported an error it
// reports that error on every later call, never a clean end.
class ChunkedStream final {
public:
    explicit ChunkedStream(ChunkedReader& reader);
    ChunkedStream(ChunkedStream&&) noexcept;
    ChunkedStream& operator=(ChunkedStream&&) noexcept;
    ChunkedStream(const ChunkedStream&) = delete;
    ChunkedStream& operator=(const ChunkedStream&) = delete;
    ~ChunkedStream();

    // Copies up to out.size() verified plaintext bytes into `out`; 0 means the whole message
    // was read and authenticated.
    [[nodiscard]] Result<std::size_t> read(std::span<std::uint8_t> out);

private:
    struct State;
    std::unique_ptr<State> state_;
};

class ChunkedReader final {
public:
    // Checks the ciphertext length and the key commitment; decrypts nothing yet. Unauthenticated
    // for a wrong key or context (or an altered salt or commitment), Integrity for a length no
    // message can have. `source` must outlive the reader.
    [[nodiscard]] static Result<ChunkedReader> open(const SecretBytes& inputKey,
                                                    std::span<const std::uint8_t> context,
                                                    const RandomAccessSource& source);
    // Raw mode: no salt or commitment at the start of `source`.
    [[nodiscard]] static Result<ChunkedReader>
    openRaw(const SecretBytes& key, const GcmNonce& baseNonce, const RandomAccessSource& source);

    ChunkedReader(ChunkedReader&&) noexcept;
    ChunkedReader& operator=(ChunkedReader&&) noexcept;
    ChunkedReader(const ChunkedReader&) = delete;
    ChunkedReader& operator=(const ChunkedReader&) = delete;
    ~ChunkedReader();

    [[nodiscard]] std::uint64_t chunkCount() const noexcept;
    // The length the layout implies; authentic once authenticateLength() succeeded.
    [[nodiscard]] std::uint64_t plaintextSize() const noexcept;
    [[nodiscard]] std::size_t chunkPlaintextSize(std::uint64_t index) const noexcept;

    // Decrypts the final chunk at its index, which proves the message length.
    [[nodiscard]] Result<std::uint64_t> authenticateLength();

    // Decrypts chunk `index` into the start of `out` (at least chunkPlaintextSize(index) bytes)
    // and returns its size. On any failure `out` holds no plaintext.
    [[nodiscard]] Result<std::size_t> readChunk(std::uint64_t index, std::span<std::uint8_t> out);
    // Fills `out` with the plaintext from `offset`; every chunk it touches is verified, and a
    // range that reaches the end of the message also verifies the final chunk.
    [[nodiscard]] Result<void> read(std::uint64_t offset, std::span<std::uint8_t> out);
    // Streams the whole message into `sink`, a batch of verified chunks at a time. On an error
    // the sink has received only verified chunks, all before the failing one.
    [[nodiscard]] Result<void> readAll(ByteSink& sink);

private:
    friend class ChunkedStream;
    struct State;
    explicit ChunkedReader(std::unique_ptr<State> state);
    // The reader's one-chunk plaintext buffer (wiped by whoever fills it).
    static std::span<std::uint8_t> chunkScratch(State& state);
    // Decrypts chunk `index` and copies its plaintext from `within` into the start of `out`, as
    // much as fits; returns how much it copied.
    [[nodiscard]] Result<std::size_t> readPiece(std::uint64_t index, std::size_t within,
                                                std::span<std::uint8_t> out);
    // Decrypts chunks [first, first + count) into `plaintext`, stopping at the first failure;
    // returns how many verified, plus the error if one did not.
    [[nodiscard]] std::pair<std::size_t, std::optional<Error>>
    readBatch(std::uint64_t first, std::size_t count, std::span<std::uint8_t> ciphertext,
              std::span<std::uint8_t> plaintext);
    std::unique_ptr<State> state_;
};

}  // namespace sealtrain::crypto
