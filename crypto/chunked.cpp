// C2SP chunked encryption with AES-256-GCM and HKDF-SHA-512 (Cobblestone-256). The comments
// quote the spec's terms: input key, salt, context, key, base nonce, commitment.
#include "sealtrain/crypto/chunked.h"

#include "sealtrain/crypto/hkdf.h"
#include "sealtrain/crypto/random.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <string_view>
#include <vector>

namespace sealtrain::crypto {

namespace {

constexpr std::string_view kInfoPrefix = "c2sp.org/chunked-encryption@v1+";
constexpr std::string_view kAeadName = "AEAD_AES_256_GCM";
// Chunks read or written per I/O call: about 1 MiB, few system calls, bounded memory.
constexpr std::size_t kBatchChunks = 64;

// Small messages get buffers for the chunks they have, not a whole batch.
std::size_t batchChunks(std::uint64_t chunkCount)
{
    return static_cast<std::size_t>(std::min<std::uint64_t>(kBatchChunks, chunkCount));
}

struct DerivedKeys {
    SecretBytes key;
    GcmNonce baseNonce{};
    std::array<std::uint8_t, kChunkedCommitmentSize> commitment{};
};

Result<DerivedKeys> deriveKeys(const SecretBytes& inputKey, const ChunkedSalt& salt,
                               std::span<const std::uint8_t> context)
{
    if (inputKey.size() != kAes256KeySize) {
        return Error(ErrorCode::InvalidArgument,
                     "A chunked-encryption input key must be 32 bytes; use a key made for "
                     "AES-256.");
    }
    // info = "c2sp.org/chunked-encryption@v1+" || aead || 0x00 || salt || context
    std::vector<std::uint8_t> info;
    info.reserve(kInfoPrefix.size() + kAeadName.size() + 1 + salt.size() + context.size());
    info.insert(info.end(), kInfoPrefix.begin(), kInfoPrefix.end());
    info.insert(info.end(), kAeadName.begin(), kAeadName.end());
    info.push_back(0x00);
    info.insert(info.end(), salt.begin(), salt.end());
    info.insert(info.end(), context.begin(), context.end());

    auto expanded = hkdfExpand(HkdfHash::Sha512, inputKey.bytes(), info,
                               kAes256KeySize + kGcmNonceSize + kChunkedCommitmentSize);
    if (!expanded)
        return expanded.error();
    const auto bytes = expanded->bytes();
    auto key = SecretBytes::fromBytes(bytes.first(kAes256KeySize));
    if (!key)
        return key.error();
    DerivedKeys keys;
    keys.key = std::move(key).value();
    std::copy_n(bytes.begin() + kAes256KeySize, kGcmNonceSize, keys.baseNonce.begin());
    std::copy_n(bytes.begin() + kAes256KeySize + kGcmNonceSize, kChunkedCommitmentSize,
                keys.commitment.begin());
    return keys;
}

Error stickyError()
{
    return Error(ErrorCode::Integrity,
                 "An earlier error stopped this message; start again with a new reader or "
                 "writer.");
}

Error chunkFailed(std::uint64_t index)
{
    return Error(ErrorCode::Integrity,
                 "Chunk " + std::to_string(index)
                     + " does not authenticate: the data was altered, reordered, truncated or "
                       "mixed with another object, so restore it from a good copy.");
}

// Wipes a buffer that held plaintext when it goes away.
struct PlaintextBuffer {
    explicit PlaintextBuffer(std::size_t size)
        : bytes(size)
    {
    }
    PlaintextBuffer(PlaintextBuffer&&) noexcept = default;
    PlaintextBuffer& operator=(PlaintextBuffer&&) noexcept = default;
    PlaintextBuffer(const PlaintextBuffer&) = delete;
    PlaintextBuffer& operator=(const PlaintextBuffer&) = delete;
    ~PlaintextBuffer() { wipeMemory(bytes); }
    std::vector<std::uint8_t> bytes;
};

}  // namespace

GcmNonce chunkNonce(const GcmNonce& baseNonce, std::uint64_t index) noexcept
{
    GcmNonce nonce = baseNonce;
    for (std::size_t i = 0; i < 8; ++i)
        nonce[kGcmNonceSize - 1 - i] ^= static_cast<std::uint8_t>(index >> (8 * i));
    return nonce;
}

std::uint64_t chunkedCiphertextSize(std::uint64_t plaintextSize) noexcept
{
    const std::uint64_t fullChunks = plaintextSize / kChunkSize;
    return kChunkedHeaderSize + fullChunks * kEncryptedChunkSize + (plaintextSize % kChunkSize)
           + kGcmTagSize;
}

// ---- writer ----------------------------------------------------------------------------------

struct ChunkedWriter::State {
    State(Aes256Gcm cipherIn, const GcmNonce& nonce, ByteSink& sinkIn)
        : cipher(std::move(cipherIn))
        , baseNonce(nonce)
        , sink(&sinkIn)
        , pending(kChunkSize)
        , batch(kBatchChunks * kEncryptedChunkSize)
    {
    }

    Result<void> sealChunk(std::span<const std::uint8_t> plaintext)
    {
        if (nextIndex >= kMaxChunkCount) {
            return Error(ErrorCode::ResourceExhausted,
                         "The message reached the chunked-encryption limit of 2^38 chunks; split "
                         "it into several objects.");
        }
        const std::span<std::uint8_t> out(batch.bytes.data() + batchUsed,
                                          plaintext.size() + kGcmTagSize);
        SEALTRAIN_TRY(cipher.seal(chunkNonce(baseNonce, nextIndex), {}, plaintext, out));
        ++nextIndex;
        batchUsed += out.size();
        if (batchUsed + kEncryptedChunkSize > batch.bytes.size())
            return flush();
        return success();
    }

    Result<void> flush()
    {
        if (batchUsed == 0)
            return success();
        const std::span<const std::uint8_t> out(batch.bytes.data(), batchUsed);
        batchUsed = 0;
        return sink->write(out);
    }

    Aes256Gcm cipher;
    GcmNonce baseNonce;
    ByteSink* sink;
    PlaintextBuffer pending;  // the chunk being filled
    std::size_t pendingUsed = 0;
    PlaintextBuffer batch;  // sealed chunks waiting for one sink write (ciphertext only)
    std::size_t batchUsed = 0;
    std::uint64_t nextIndex = 0;
    std::uint64_t plaintextSize = 0;
    bool failed = false;
    bool finished = false;
};

ChunkedWriter::ChunkedWriter(std::unique_ptr<State> state)
    : state_(std::move(state))
{
}
ChunkedWriter::ChunkedWriter(ChunkedWriter&&) noexcept = default;
ChunkedWriter& ChunkedWriter::operator=(ChunkedWriter&&) noexcept = default;
ChunkedWriter::~ChunkedWriter() = default;

Result<ChunkedWriter> ChunkedWriter::create(const SecretBytes& inputKey,
                                            std::span<const std::uint8_t> context, ByteSink& sink,
                                            const std::optional<ChunkedSalt>& salt)
{
    ChunkedSalt actualSalt{};
    if (salt)
        actualSalt = *salt;
    else
        fillRandom(actualSalt);
    auto keys = deriveKeys(inputKey, actualSalt, context);
    if (!keys)
        return keys.error();
    auto cipher = Aes256Gcm::create(keys->key);
    if (!cipher)
        return cipher.error();
    std::array<std::uint8_t, kChunkedHeaderSize> header{};
    std::copy(actualSalt.begin(), actualSalt.end(), header.begin());
    std::copy(keys->commitment.begin(), keys->commitment.end(), header.begin() + kChunkedSaltSize);
    SEALTRAIN_TRY(sink.write(header));
    return ChunkedWriter(std::make_unique<State>(std::move(cipher).value(), keys->baseNonce, sink));
}

Result<ChunkedWriter> ChunkedWriter::createRaw(const SecretBytes& key, const GcmNonce& baseNonce,
                                               ByteSink& sink)
{
    auto cipher = Aes256Gcm::create(key);
    if (!cipher)
        return cipher.error();
    return ChunkedWriter(std::make_unique<State>(std::move(cipher).value(), baseNonce, sink));
}

Result<void> ChunkedWriter::write(std::span<const std::uint8_t> plaintext)
{
    State& s = *state_;
    if (s.failed || s.finished)
        return stickyError();
    auto result = [&]() -> Result<void> {
        while (!plaintext.empty()) {
            // A full chunk is never the last one, so it can be sealed as soon as it is complete;
            // seal straight from the caller's buffer when nothing is pending.
            if (s.pendingUsed == 0 && plaintext.size() >= kChunkSize) {
                SEALTRAIN_TRY(s.sealChunk(plaintext.first(kChunkSize)));
                plaintext = plaintext.subspan(kChunkSize);
                s.plaintextSize += kChunkSize;
                continue;
            }
            const std::size_t take = std::min(kChunkSize - s.pendingUsed, plaintext.size());
            std::copy_n(plaintext.begin(), take,
                        s.pending.bytes.begin() + static_cast<std::ptrdiff_t>(s.pendingUsed));
            s.pendingUsed += take;
            s.plaintextSize += take;
            plaintext = plaintext.subspan(take);
            if (s.pendingUsed == kChunkSize) {
                SEALTRAIN_TRY(s.sealChunk(s.pending.bytes));
                s.pendingUsed = 0;
            }
        }
        return success();
    }();
    if (!result)
        s.failed = true;
    return result;
}

Result<void> ChunkedWriter::finish()
{
    State& s = *state_;
    if (s.failed || s.finished)
        return stickyError();
    auto result = [&]() -> Result<void> {
        SEALTRAIN_TRY(
            s.sealChunk(std::span<const std::uint8_t>(s.pending.bytes.data(), s.pendingUsed)));
        wipeMemory(s.pending.bytes);
        s.pendingUsed = 0;
        return s.flush();
    }();
    if (!result)
        s.failed = true;
    else
        s.finished = true;
    return result;
}

std::uint64_t ChunkedWriter::plaintextSize() const noexcept
{
    return state_->plaintextSize;
}

// ---- reader ----------------------------------------------------------------------------------

struct ChunkedReader::State {
    State(Aes256Gcm cipherIn, const GcmNonce& nonce, const RandomAccessSource& sourceIn,
          std::uint64_t payloadOffsetIn, std::uint64_t chunkCountIn, std::size_t lastSizeIn)
        : cipher(std::move(cipherIn))
        , baseNonce(nonce)
        , source(&sourceIn)
        , payloadOffset(payloadOffsetIn)
        , chunkCount(chunkCountIn)
        , lastPlaintextSize(lastSizeIn)
    {
    }
    Aes256Gcm cipher;
    GcmNonce baseNonce;
    const RandomAccessSource* source;
    std::uint64_t payloadOffset;
    std::uint64_t chunkCount;
    std::size_t lastPlaintextSize;
    // One chunk's buffers, made on first use and kept: readChunk and read run once per chunk
    // (the dataset reader's path), where allocating, zeroing and freeing 16 KiB each time cost
    // a tenth of the decryption. The ciphertext is public; the plaintext is wiped after each use.
    std::vector<std::uint8_t> chunkCiphertext;
    std::optional<PlaintextBuffer> chunkPlaintext;
};

ChunkedReader::ChunkedReader(std::unique_ptr<State> state)
    : state_(std::move(state))
{
}
ChunkedReader::ChunkedReader(ChunkedReader&&) noexcept = default;
ChunkedReader& ChunkedReader::operator=(ChunkedReader&&) noexcept = default;
ChunkedReader::~ChunkedReader() = default;

namespace {

struct Layout {
    std::uint64_t chunkCount = 0;
    std::size_t lastPlaintextSize = 0;
};

// Only one chunking fits each length: full chunks, then one shorter final chunk.
Result<Layout> layoutFor(std::uint64_t chunksLength)
{
    const std::uint64_t fullChunks = chunksLength / kEncryptedChunkSize;
    const auto lastEncrypted = static_cast<std::size_t>(chunksLength % kEncryptedChunkSize);
    if (lastEncrypted < kGcmTagSize) {
        return Error(ErrorCode::Integrity,
                     "The encrypted message has no valid final chunk, so it was truncated or "
                     "extended; restore it from a good copy.");
    }
    if (fullChunks + 1 > kMaxChunkCount) {
        return Error(ErrorCode::Integrity,
                     "The encrypted message is longer than chunked encryption allows, so it is "
                     "not a valid message.");
    }
    return Layout{fullChunks + 1, lastEncrypted - kGcmTagSize};
}

}  // namespace

Result<ChunkedReader> ChunkedReader::open(const SecretBytes& inputKey,
                                          std::span<const std::uint8_t> context,
                                          const RandomAccessSource& source)
{
    if (inputKey.size() != kAes256KeySize) {
        return Error(ErrorCode::InvalidArgument,
                     "A chunked-encryption input key must be 32 bytes; use a key made for "
                     "AES-256.");
    }
    if (source.size() < kChunkedHeaderSize) {
        return Error(ErrorCode::Integrity,
                     "The encrypted message is shorter than its 56-byte header, so it was "
                     "truncated.");
    }
    std::array<std::uint8_t, kChunkedHeaderSize> header{};
    SEALTRAIN_TRY(source.readAt(0, header));
    ChunkedSalt salt{};
    std::copy_n(header.begin(), kChunkedSaltSize, salt.begin());
    auto keys = deriveKeys(inputKey, salt, context);
    if (!keys)
        return keys.error();
    if (CRYPTO_memcmp(keys->commitment.data(), header.data() + kChunkedSaltSize,
                      kChunkedCommitmentSize)
        != 0) {
        return Error(ErrorCode::Unauthenticated,
                     "The key commitment does not match: the key or context is wrong, or the "
                     "header was altered.");
    }
    auto layout = layoutFor(source.size() - kChunkedHeaderSize);
    if (!layout)
        return layout.error();
    auto cipher = Aes256Gcm::create(keys->key);
    if (!cipher)
        return cipher.error();
    return ChunkedReader(std::make_unique<State>(std::move(cipher).value(), keys->baseNonce, source,
                                                 kChunkedHeaderSize, layout->chunkCount,
                                                 layout->lastPlaintextSize));
}

Result<ChunkedReader> ChunkedReader::openRaw(const SecretBytes& key, const GcmNonce& baseNonce,
                                             const RandomAccessSource& source)
{
    auto layout = layoutFor(source.size());
    if (!layout)
        return layout.error();
    auto cipher = Aes256Gcm::create(key);
    if (!cipher)
        return cipher.error();
    return ChunkedReader(std::make_unique<State>(std::move(cipher).value(), baseNonce, source, 0,
                                                 layout->chunkCount, layout->lastPlaintextSize));
}

std::uint64_t ChunkedReader::chunkCount() const noexcept
{
    return state_->chunkCount;
}

std::uint64_t ChunkedReader::plaintextSize() const noexcept
{
    return (state_->chunkCount - 1) * kChunkSize + state_->lastPlaintextSize;
}

std::size_t ChunkedReader::chunkPlaintextSize(std::uint64_t index) const noexcept
{
    if (index + 1 < state_->chunkCount)
        return kChunkSize;
    return index + 1 == state_->chunkCount ? state_->lastPlaintextSize : 0;
}

std::span<std::uint8_t> ChunkedReader::chunkScratch(State& state)
{
    if (!state.chunkPlaintext)
        state.chunkPlaintext.emplace(kChunkSize);
    return state.chunkPlaintext->bytes;
}

Result<std::size_t> ChunkedReader::readPiece(std::uint64_t index, std::size_t within,
                                             std::span<std::uint8_t> out)
{
    const std::size_t size = chunkPlaintextSize(index);
    // A whole chunk that fits goes straight into `out`, with no copy through the scratch.
    if (within == 0 && out.size() >= size)
        return readChunk(index, out);
    const auto scratch = chunkScratch(*state_);
    auto got = readChunk(index, scratch);
    if (got) {
        const std::size_t take = std::min(*got - within, out.size());
        std::copy_n(scratch.begin() + static_cast<std::ptrdiff_t>(within), take, out.begin());
        got = take;
    }
    wipeMemory(scratch.first(size));
    return got;
}

Result<std::uint64_t> ChunkedReader::authenticateLength()
{
    const auto scratch = chunkScratch(*state_);
    auto verified = readChunk(state_->chunkCount - 1, scratch);
    wipeMemory(scratch);
    if (!verified)
        return verified.error();
    return plaintextSize();
}

std::pair<std::size_t, std::optional<Error>>
ChunkedReader::readBatch(std::uint64_t first, std::size_t count, std::span<std::uint8_t> ciphertext,
                         std::span<std::uint8_t> plaintext)
{
    State& s = *state_;
    // Chunks in [first, first + count) lie back to back; only the last may be short.
    std::size_t encryptedLength = 0;
    for (std::size_t i = 0; i < count; ++i)
        encryptedLength += chunkPlaintextSize(first + i) + kGcmTagSize;
    const std::uint64_t start = s.payloadOffset + first * kEncryptedChunkSize;
    std::span<const std::uint8_t> input;
    if (auto view = s.source->viewAt(start, encryptedLength)) {
        input = *view;  // already in memory: decrypt in place of a copy
    } else {
        if (auto read = s.source->readAt(start, ciphertext.first(encryptedLength)); !read)
            return {0, read.error()};
        input = ciphertext.first(encryptedLength);
    }
    std::size_t inOffset = 0;
    std::size_t outOffset = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const std::size_t size = chunkPlaintextSize(first + i);
        auto opened = s.cipher.open(chunkNonce(s.baseNonce, first + i), {},
                                    input.subspan(inOffset, size + kGcmTagSize),
                                    plaintext.subspan(outOffset, size));
        if (!opened)
            return {i, chunkFailed(first + i)};
        inOffset += size + kGcmTagSize;
        outOffset += size;
    }
    return {count, std::nullopt};
}

Result<std::size_t> ChunkedReader::readChunk(std::uint64_t index, std::span<std::uint8_t> out)
{
    if (index >= state_->chunkCount) {
        return Error(ErrorCode::InvalidArgument,
                     "The chunk index is past the end of the message; ask for a chunk below the "
                     "chunk count.");
    }
    const std::size_t size = chunkPlaintextSize(index);
    if (out.size() < size) {
        return Error(ErrorCode::InvalidArgument,
                     "The buffer is smaller than the chunk; pass a buffer of 16384 bytes.");
    }
    State& s = *state_;
    if (s.chunkCiphertext.empty())
        s.chunkCiphertext.resize(kEncryptedChunkSize);
    auto [verified, error] = readBatch(index, 1, s.chunkCiphertext, out.first(size));
    if (error)
        return *error;
    return size;
}

Result<void> ChunkedReader::read(std::uint64_t offset, std::span<std::uint8_t> out)
{
    const std::uint64_t total = plaintextSize();
    if (offset > total || out.size() > total - offset) {
        return Error(ErrorCode::InvalidArgument,
                     "The requested range runs past the end of the message; ask for a range "
                     "within its plaintext size.");
    }
    std::size_t done = 0;
    while (done < out.size()) {
        const std::uint64_t position = offset + done;
        const std::uint64_t index = position / kChunkSize;
        const auto within = static_cast<std::size_t>(position % kChunkSize);
        auto got = readPiece(index, within, out.subspan(done));
        if (!got) {
            wipeMemory(out.first(done));
            return got.error();
        }
        done += *got;
    }
    // A read that reaches the end of the message also proves where it ends, even when the final
    // chunk is empty and holds none of the bytes asked for.
    if (offset + out.size() == total
        && (out.empty() || (total - 1) / kChunkSize + 1 < state_->chunkCount)) {
        if (auto length = authenticateLength(); !length) {
            wipeMemory(out);
            return length.error();
        }
    }
    return success();
}

Result<void> ChunkedReader::readAll(ByteSink& sink)
{
    const std::size_t batch = batchChunks(state_->chunkCount);
    std::vector<std::uint8_t> ciphertext(batch * kEncryptedChunkSize);
    PlaintextBuffer plaintext(batch * kChunkSize);
    for (std::uint64_t first = 0; first < state_->chunkCount; first += batch) {
        const auto count =
            static_cast<std::size_t>(std::min<std::uint64_t>(batch, state_->chunkCount - first));
        auto [verified, error] = readBatch(first, count, ciphertext, plaintext.bytes);
        // The verified chunks before a failing one are authentic; release them, nothing more.
        std::size_t released = 0;
        for (std::size_t i = 0; i < verified; ++i)
            released += chunkPlaintextSize(first + i);
        if (released > 0)
            SEALTRAIN_TRY(
                sink.write(std::span<const std::uint8_t>(plaintext.bytes.data(), released)));
        if (error) {
            wipeMemory(plaintext.bytes);
            return *error;
        }
    }
    return success();
}

// ---- stream ----------------------------------------------------------------------------------

struct ChunkedStream::State {
    explicit State(ChunkedReader& readerIn)
        : reader(&readerIn)
        , batch(batchChunks(readerIn.chunkCount()))
        , ciphertext(batch * kEncryptedChunkSize)
        , plaintext(batch * kChunkSize)
    {
    }
    ChunkedReader* reader;
    std::size_t batch;
    std::vector<std::uint8_t> ciphertext;
    PlaintextBuffer plaintext;
    std::size_t available = 0;  // verified bytes in `plaintext`
    std::size_t consumed = 0;
    std::uint64_t nextChunk = 0;
    std::optional<Error> failure;
};

ChunkedStream::ChunkedStream(ChunkedReader& reader)
    : state_(std::make_unique<State>(reader))
{
}
ChunkedStream::ChunkedStream(ChunkedStream&&) noexcept = default;
ChunkedStream& ChunkedStream::operator=(ChunkedStream&&) noexcept = default;
ChunkedStream::~ChunkedStream() = default;

Result<std::size_t> ChunkedStream::read(std::span<std::uint8_t> out)
{
    State& s = *state_;
    if (s.consumed == s.available) {
        if (s.failure)
            return *s.failure;
        const std::uint64_t chunkCount = s.reader->chunkCount();
        if (s.nextChunk == chunkCount)
            return std::size_t{0};
        const auto count =
            static_cast<std::size_t>(std::min<std::uint64_t>(s.batch, chunkCount - s.nextChunk));
        auto [verified, error] =
            s.reader->readBatch(s.nextChunk, count, s.ciphertext, s.plaintext.bytes);
        s.available = 0;
        for (std::size_t i = 0; i < verified; ++i)
            s.available += s.reader->chunkPlaintextSize(s.nextChunk + i);
        s.consumed = 0;
        s.nextChunk += verified;
        if (error)
            s.failure = *error;
        if (s.available == 0) {
            if (s.failure)
                return *s.failure;
            // Only an empty final chunk verifies to nothing; the message is complete.
            return std::size_t{0};
        }
    }
    const std::size_t take = std::min(out.size(), s.available - s.consumed);
    std::copy_n(s.plaintext.bytes.begin() + static_cast<std::ptrdiff_t>(s.consumed), take,
                out.begin());
    s.consumed += take;
    return take;
}

}  // namespace sealtrain::crypto
