// Sealed objects: header and key block encoding, DEK wrapping, and the C2SP payload around them.
// The byte layout is specified in docs/formats/sealed.md; keep the two in step.
#include "sealtrain/crypto/sealed.h"

#include "sealtrain/base/utf8.h"
#include "sealtrain/crypto/aead.h"
#include "sealtrain/crypto/chunked.h"
#include "sealtrain/crypto/random.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace sealtrain::crypto {

namespace {

constexpr std::array<std::uint8_t, 8> kMagic{'S', 'T', 'S', 'E', 'A', 'L', 'E', 'D'};
constexpr std::string_view kDekWrapLabel = "sealtrain/sealed-dek/v1";
constexpr std::size_t kMaxKekId = 64;
constexpr std::size_t kWrappedDekSize = kAes256KeySize + kGcmTagSize;
// magic, version, suite, object id, chunk size, content type length
constexpr std::size_t kFixedHeaderSize = 8 + 2 + 2 + kSealedObjectIdSize + 4 + 1;
constexpr std::size_t kMaxHeaderSize =
    kFixedHeaderSize + kSealedMaxContentType + 2 + kSealedMaxMetadata;
// key block length, KEK id length, KEK id, KEK version, nonce, wrapped DEK
constexpr std::size_t kMaxKeyBlockSize = 2 + 1 + kMaxKekId + 4 + kGcmNonceSize + kWrappedDekSize;

void putU16(std::vector<std::uint8_t>& out, std::uint16_t value)
{
    out.push_back(static_cast<std::uint8_t>(value >> 8));
    out.push_back(static_cast<std::uint8_t>(value));
}

void putU32(std::vector<std::uint8_t>& out, std::uint32_t value)
{
    for (int shift = 24; shift >= 0; shift -= 8)
        out.push_back(static_cast<std::uint8_t>(value >> shift));
}

bool isValidKekIdText(std::string_view id)
{
    if (id.empty() || id.size() > kMaxKekId)
        return false;
    return std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    });
}

bool isValidContentType(std::string_view text)
{
    return text.size() <= kSealedMaxContentType
           && std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

// Strict UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
Error malformed(const std::string& what)
{
    return Error(ErrorCode::Integrity,
                 fmt::format("The sealed object's {} is malformed, so the file is damaged or not "
                             "a sealed object; restore it from a good copy.",
                             what));
}

// Reads big-endian fields from a byte span, refusing to run past its end.
class Cursor {
public:
    explicit Cursor(std::span<const std::uint8_t> bytes)
        : bytes_(bytes)
    {
    }
    [[nodiscard]] std::optional<std::span<const std::uint8_t>> take(std::size_t count)
    {
        if (count > bytes_.size() - position_)
            return std::nullopt;
        auto part = bytes_.subspan(position_, count);
        position_ += count;
        return part;
    }
    [[nodiscard]] std::optional<std::uint32_t> number(std::size_t width)
    {
        auto part = take(width);
        if (!part)
            return std::nullopt;
        std::uint32_t value = 0;
        for (auto b : *part)
            value = (value << 8U) | b;
        return value;
    }
    [[nodiscard]] std::size_t position() const noexcept { return position_; }

private:
    std::span<const std::uint8_t> bytes_;
    std::size_t position_ = 0;
};

std::string asText(std::span<const std::uint8_t> bytes)
{
    return {bytes.begin(), bytes.end()};
}

// The header and key block of a sealed object as read from its first bytes.
struct ParsedPrefix {
    SealedObjectInfo info;
    std::vector<std::uint8_t> headerBytes;
    GcmNonce wrapNonce{};
    std::array<std::uint8_t, kWrappedDekSize> wrappedDek{};
};

Result<ParsedPrefix> parsePrefix(const RandomAccessSource& source)
{
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(
        std::min<std::uint64_t>(source.size(), kMaxHeaderSize + kMaxKeyBlockSize)));
    SEALTRAIN_TRY(source.readAt(0, bytes));
    if (bytes.size() < kMagic.size() || !std::equal(kMagic.begin(), kMagic.end(), bytes.begin())) {
        return Error(ErrorCode::InvalidArgument,
                     "The file is not a Sealtrain sealed object (its first bytes are not "
                     "'STSEALED'); pass a sealed object.");
    }
    Cursor cursor(bytes);
    (void)cursor.take(kMagic.size());
    ParsedPrefix parsed;
    SealedObjectInfo& info = parsed.info;
    const auto version = cursor.number(2);
    const auto suite = cursor.number(2);
    if (!version || !suite)
        return malformed("header");
    info.formatVersion = static_cast<std::uint16_t>(*version);
    info.suite = static_cast<std::uint16_t>(*suite);
    if (info.formatVersion != kSealedFormatVersion) {
        return Error(ErrorCode::Unsupported,
                     fmt::format("The sealed object has format version {}, which this build does "
                                 "not read; upgrade Sealtrain.",
                                 info.formatVersion));
    }
    if (info.suite != kSealedSuiteCobblestone256) {
        return Error(ErrorCode::Unsupported,
                     fmt::format("The sealed object uses cipher suite {}, which this build does "
                                 "not know; upgrade Sealtrain.",
                                 info.suite));
    }
    const auto objectId = cursor.take(kSealedObjectIdSize);
    const auto chunkSize = cursor.number(4);
    const auto contentTypeLength = cursor.number(1);
    if (!objectId || !chunkSize || !contentTypeLength)
        return malformed("header");
    std::copy(objectId->begin(), objectId->end(), info.objectId.begin());
    info.chunkSize = *chunkSize;
    if (info.chunkSize != kChunkSize)
        return malformed("chunk size");
    const auto contentType = cursor.take(*contentTypeLength);
    const auto metadataLength = cursor.number(2);
    if (!contentType || !metadataLength)
        return malformed("header");
    const auto metadata = cursor.take(*metadataLength);
    if (!metadata)
        return malformed("header");
    info.metadata.contentType = asText(*contentType);
    info.metadata.metadata = asText(*metadata);
    if (!isValidContentType(info.metadata.contentType))
        return malformed("content type");
    if (!isValidUtf8(info.metadata.metadata))
        return malformed("metadata");
    info.headerSize = cursor.position();
    parsed.headerBytes.assign(bytes.begin(),
                              bytes.begin() + static_cast<std::ptrdiff_t>(info.headerSize));

    const auto keyBlockLength = cursor.number(2);
    if (!keyBlockLength)
        return malformed("key block");
    const auto body = cursor.take(*keyBlockLength);
    if (!body)
        return malformed("key block");
    Cursor keyBlock(*body);
    const auto kekIdLength = keyBlock.number(1);
    if (!kekIdLength)
        return malformed("key block");
    const auto kekId = keyBlock.take(*kekIdLength);
    const auto kekVersion = keyBlock.number(4);
    const auto nonce = keyBlock.take(kGcmNonceSize);
    const auto wrapped = keyBlock.take(kWrappedDekSize);
    if (!kekId || !kekVersion || !nonce || !wrapped || keyBlock.position() != body->size())
        return malformed("key block");
    info.kekId = asText(*kekId);
    info.kekVersion = *kekVersion;
    if (!isValidKekIdText(info.kekId) || info.kekVersion == 0)
        return malformed("key block");
    std::copy(nonce->begin(), nonce->end(), parsed.wrapNonce.begin());
    std::copy(wrapped->begin(), wrapped->end(), parsed.wrappedDek.begin());
    info.keyBlockSize = 2 + *keyBlockLength;
    info.payloadOffset = info.headerSize + info.keyBlockSize;
    info.payloadSize = source.size() - info.payloadOffset;

    // What the payload's length implies; authenticated only by decrypting the final chunk.
    if (info.payloadSize >= kChunkedHeaderSize + kGcmTagSize) {
        const std::uint64_t chunks = info.payloadSize - kChunkedHeaderSize;
        info.chunkCount = chunks / kEncryptedChunkSize + 1;
        const std::uint64_t last = chunks % kEncryptedChunkSize;
        info.plaintextSize =
            (info.chunkCount - 1) * kChunkSize + (last >= kGcmTagSize ? last - kGcmTagSize : 0);
    }
    return parsed;
}

std::vector<std::uint8_t> dekAad(const SealedObjectId& objectId, const std::string& kekId,
                                 std::uint32_t kekVersion)
{
    std::vector<std::uint8_t> aad(kDekWrapLabel.begin(), kDekWrapLabel.end());
    aad.insert(aad.end(), objectId.begin(), objectId.end());
    aad.push_back(static_cast<std::uint8_t>(kekId.size()));
    aad.insert(aad.end(), kekId.begin(), kekId.end());
    putU32(aad, kekVersion);
    return aad;
}

Result<void> checkKek(const Kek& kek)
{
    if (!isValidKekIdText(kek.id) || kek.version == 0 || kek.key.size() != kAes256KeySize) {
        return Error(ErrorCode::InvalidArgument,
                     "The KEK must have an id of 1 to 64 characters [a-z0-9._-], a version from "
                     "1 and a 32-byte key; load it from a keyring or key file.");
    }
    return success();
}

// The key block: length, KEK id, KEK version, nonce, and the DEK wrapped under the KEK.
Result<std::vector<std::uint8_t>> makeKeyBlock(const SealedObjectId& objectId, const Kek& kek,
                                               const SecretBytes& dek)
{
    SEALTRAIN_TRY(checkKek(kek));
    GcmNonce nonce{};
    fillRandom(nonce);
    auto wrapped =
        aes256GcmSeal(kek.key, nonce, dekAad(objectId, kek.id, kek.version), dek.bytes());
    if (!wrapped)
        return wrapped.error();
    std::vector<std::uint8_t> block;
    const std::size_t bodySize = 1 + kek.id.size() + 4 + kGcmNonceSize + kWrappedDekSize;
    putU16(block, static_cast<std::uint16_t>(bodySize));
    block.push_back(static_cast<std::uint8_t>(kek.id.size()));
    block.insert(block.end(), kek.id.begin(), kek.id.end());
    putU32(block, kek.version);
    block.insert(block.end(), nonce.begin(), nonce.end());
    block.insert(block.end(), wrapped->begin(), wrapped->end());
    return block;
}

Result<SecretBytes> unwrapDek(const ParsedPrefix& parsed, const KekResolver& resolver)
{
    const auto& info = parsed.info;
    auto kek = resolver(info.kekId, info.kekVersion);
    if (!kek) {
        return kek.error().withContext(fmt::format(
            "Cannot open the sealed object (KEK '{}' version {})", info.kekId, info.kekVersion));
    }
    if (*kek == nullptr || (*kek)->key.size() != kAes256KeySize) {
        return Error(ErrorCode::Internal,
                     "The key resolver returned no usable 32-byte KEK; check the keyring.");
    }
    auto dek =
        aes256GcmOpenSecret((*kek)->key, parsed.wrapNonce,
                            dekAad(info.objectId, info.kekId, info.kekVersion), parsed.wrappedDek);
    if (!dek) {
        return Error(ErrorCode::Unauthenticated,
                     fmt::format("Cannot unwrap the object's data key with KEK '{}' version {}: "
                                 "the key is wrong, or the header or key block was altered or "
                                 "comes from another object.",
                                 info.kekId, info.kekVersion));
    }
    return dek;
}

Result<std::vector<std::uint8_t>> makeHeader(const SealedObjectId& objectId,
                                             const SealedMetadata& metadata)
{
    if (!isValidContentType(metadata.contentType)) {
        return Error(ErrorCode::InvalidArgument,
                     "The content type must be printable ASCII of at most 255 bytes; shorten "
                     "or fix it.");
    }
    if (metadata.metadata.size() > kSealedMaxMetadata || !isValidUtf8(metadata.metadata)) {
        return Error(ErrorCode::InvalidArgument,
                     "The metadata must be UTF-8 text of at most 65535 bytes; shorten or fix "
                     "it.");
    }
    std::vector<std::uint8_t> header(kMagic.begin(), kMagic.end());
    putU16(header, kSealedFormatVersion);
    putU16(header, kSealedSuiteCobblestone256);
    header.insert(header.end(), objectId.begin(), objectId.end());
    putU32(header, static_cast<std::uint32_t>(kChunkSize));
    header.push_back(static_cast<std::uint8_t>(metadata.contentType.size()));
    header.insert(header.end(), metadata.contentType.begin(), metadata.contentType.end());
    putU16(header, static_cast<std::uint16_t>(metadata.metadata.size()));
    header.insert(header.end(), metadata.metadata.begin(), metadata.metadata.end());
    return header;
}

}  // namespace

Result<SealedObjectInfo> inspectSealedObject(const RandomAccessSource& source)
{
    auto parsed = parsePrefix(source);
    if (!parsed)
        return parsed.error();
    return std::move(parsed->info);
}

Result<SealedObjectInfo> inspectSealedObject(const std::filesystem::path& path)
{
    auto source = FileSource::open(path);
    if (!source)
        return source.error();
    return inspectSealedObject(**source);
}

// ---- writer ----------------------------------------------------------------------------------

struct SealedWriter::State {
    std::unique_ptr<AtomicFileSink> file;  // when sealing to a path
    ByteSink* sink = nullptr;
    std::optional<ChunkedWriter> payload;
    SealedObjectId objectId{};
    bool finished = false;
};

SealedWriter::SealedWriter(std::unique_ptr<State> state)
    : state_(std::move(state))
{
}
SealedWriter::SealedWriter(SealedWriter&&) noexcept = default;
SealedWriter& SealedWriter::operator=(SealedWriter&&) noexcept = default;
SealedWriter::~SealedWriter() = default;  // the AtomicFileSink removes an uncommitted file

Result<SealedWriter> SealedWriter::start(std::unique_ptr<State> state, const Kek& kek,
                                         const SealedMetadata& metadata)
{
    SEALTRAIN_TRY(checkKek(kek));
    fillRandom(state->objectId);
    auto header = makeHeader(state->objectId, metadata);
    if (!header)
        return header.error();
    auto dek = SecretBytes::random(kAes256KeySize);
    if (!dek)
        return dek.error();
    auto keyBlock = makeKeyBlock(state->objectId, kek, *dek);
    if (!keyBlock)
        return keyBlock.error();
    SEALTRAIN_TRY(state->sink->write(*header));
    SEALTRAIN_TRY(state->sink->write(*keyBlock));
    // The DEK is the payload's input key; the header bytes are its context.
    auto payload = ChunkedWriter::create(*dek, *header, *state->sink);
    if (!payload)
        return payload.error();
    state->payload.emplace(std::move(payload).value());
    return SealedWriter(std::move(state));
}

Result<SealedWriter> SealedWriter::create(const std::filesystem::path& path, const Kek& kek,
                                          const SealedMetadata& metadata,
                                          AtomicFileSink::Overwrite overwrite)
{
    SEALTRAIN_TRY(checkKek(kek));
    auto file = AtomicFileSink::create(path, overwrite);
    if (!file)
        return file.error();
    auto state = std::make_unique<State>();
    state->file = std::move(file).value();
    state->sink = state->file.get();
    return start(std::move(state), kek, metadata);
}

Result<SealedWriter> SealedWriter::create(ByteSink& sink, const Kek& kek,
                                          const SealedMetadata& metadata)
{
    auto state = std::make_unique<State>();
    state->sink = &sink;
    return start(std::move(state), kek, metadata);
}

Result<void> SealedWriter::write(std::span<const std::uint8_t> plaintext)
{
    if (state_->finished) {
        return Error(ErrorCode::Internal,
                     "The sealed object was already finished; write before finish().");
    }
    return state_->payload->write(plaintext);
}

Result<void> SealedWriter::finish()
{
    if (state_->finished) {
        return Error(ErrorCode::Internal,
                     "The sealed object was already finished; call finish() once.");
    }
    SEALTRAIN_TRY(state_->payload->finish());
    if (state_->file)
        SEALTRAIN_TRY(state_->file->commit());
    state_->finished = true;
    return success();
}

const SealedObjectId& SealedWriter::objectId() const noexcept
{
    return state_->objectId;
}

// ---- reader ----------------------------------------------------------------------------------

struct SealedReader::State {
    std::unique_ptr<FileSource> file;  // when opened from a path
    std::unique_ptr<SubrangeSource> payloadSource;
    std::optional<ChunkedReader> payload;
    SealedObjectInfo info;
};

SealedReader::SealedReader(std::unique_ptr<State> state)
    : state_(std::move(state))
{
}
SealedReader::SealedReader(SealedReader&&) noexcept = default;
SealedReader& SealedReader::operator=(SealedReader&&) noexcept = default;
SealedReader::~SealedReader() = default;

namespace {

// Everything open() and rewrapKeyBlock() check before trusting an object.
struct OpenedPayload {
    ParsedPrefix prefix;
    SecretBytes dek;
    std::unique_ptr<SubrangeSource> source;
    std::optional<ChunkedReader> reader;
};

// Where an opened object's DEK comes from: the KEK the key block names, or the caller's data key.
using DekSource = std::function<Result<SecretBytes>(const ParsedPrefix& parsed)>;

Result<OpenedPayload> openPayload(const RandomAccessSource& source, const DekSource& dekSource)
{
    auto parsed = parsePrefix(source);
    if (!parsed)
        return parsed.error();
    OpenedPayload opened;
    opened.prefix = std::move(parsed).value();
    auto dek = dekSource(opened.prefix);
    if (!dek)
        return dek.error();
    opened.dek = std::move(dek).value();
    const auto& info = opened.prefix.info;
    auto payloadSource = SubrangeSource::create(source, info.payloadOffset, info.payloadSize);
    if (!payloadSource)
        return payloadSource.error();
    opened.source = std::make_unique<SubrangeSource>(std::move(payloadSource).value());
    auto reader = ChunkedReader::open(opened.dek, opened.prefix.headerBytes, *opened.source);
    if (!reader) {
        if (reader.error().code() == ErrorCode::Unauthenticated) {
            return Error(ErrorCode::Integrity,
                         "The sealed object's payload does not belong to its header (the key "
                         "commitment fails), so the header or payload was altered; restore it "
                         "from a good copy.");
        }
        return reader.error();
    }
    opened.reader.emplace(std::move(reader).value());
    auto length = opened.reader->authenticateLength();
    if (!length) {
        return Error(ErrorCode::Integrity,
                     "The sealed object's final chunk does not authenticate, so it was "
                     "truncated, extended or altered; restore it from a good copy.");
    }
    return opened;
}

DekSource fromKek(const KekResolver& resolver)
{
    return [&resolver](const ParsedPrefix& parsed) { return unwrapDek(parsed, resolver); };
}

}  // namespace

Result<SecretBytes> unwrapDataKey(const RandomAccessSource& source, const KekResolver& resolver)
{
    auto parsed = parsePrefix(source);
    if (!parsed)
        return parsed.error();
    return unwrapDek(*parsed, resolver);
}

Result<SealedReader> SealedReader::open(const RandomAccessSource& source,
                                        const DataKeyResolver& dataKeys)
{
    auto opened = openPayload(
        source, [&dataKeys](const ParsedPrefix& parsed) { return dataKeys(parsed.info.objectId); });
    if (!opened && opened.error().code() == ErrorCode::Integrity
        && opened.error().message().find("key commitment") != std::string::npos)
        return Error(ErrorCode::Unauthenticated,
                     "The data key handed over for this sealed object does not open it (the key "
                     "is wrong, or the object was altered); ask the control plane for the keys "
                     "again, or restore the object from a good copy.");
    if (!opened)
        return opened.error();
    auto state = std::make_unique<State>();
    state->info = std::move(opened->prefix.info);
    state->payloadSource = std::move(opened->source);
    state->payload.emplace(std::move(*opened->reader));
    return SealedReader(std::move(state));
}

Result<SealedReader> SealedReader::open(const RandomAccessSource& source,
                                        const KekResolver& resolver)
{
    auto opened = openPayload(source, fromKek(resolver));
    if (!opened)
        return opened.error();
    auto state = std::make_unique<State>();
    state->info = std::move(opened->prefix.info);
    state->payloadSource = std::move(opened->source);
    state->payload.emplace(std::move(*opened->reader));
    return SealedReader(std::move(state));
}

Result<SealedReader> SealedReader::open(const std::filesystem::path& path,
                                        const KekResolver& resolver)
{
    auto file = FileSource::open(path);
    if (!file)
        return file.error();
    auto reader = open(**file, resolver);
    if (!reader)
        return reader.error();
    reader->state_->file = std::move(file).value();
    return reader;
}

const SealedObjectInfo& SealedReader::info() const noexcept
{
    return state_->info;
}

const SealedMetadata& SealedReader::metadata() const noexcept
{
    return state_->info.metadata;
}

std::uint64_t SealedReader::plaintextSize() const noexcept
{
    return state_->payload->plaintextSize();
}

std::uint64_t SealedReader::chunkCount() const noexcept
{
    return state_->payload->chunkCount();
}

std::size_t SealedReader::chunkPlaintextSize(std::uint64_t index) const noexcept
{
    return state_->payload->chunkPlaintextSize(index);
}

Result<std::size_t> SealedReader::readChunk(std::uint64_t index, std::span<std::uint8_t> out)
{
    return state_->payload->readChunk(index, out);
}

Result<void> SealedReader::read(std::uint64_t offset, std::span<std::uint8_t> out)
{
    return state_->payload->read(offset, out);
}

Result<void> SealedReader::readAll(ByteSink& sink)
{
    return state_->payload->readAll(sink);
}

// ---- rotation --------------------------------------------------------------------------------

Result<void> rewrapKeyBlock(const std::filesystem::path& path, const KekResolver& resolver,
                            const Kek& newKek)
{
    SEALTRAIN_TRY(checkKek(newKek));
    auto file = FileSource::open(path);
    if (!file)
        return file.error();
    auto opened = openPayload(**file, fromKek(resolver));
    if (!opened)
        return opened.error();
    const auto& info = opened->prefix.info;
    auto keyBlock = makeKeyBlock(info.objectId, newKek, opened->dek);
    if (!keyBlock)
        return keyBlock.error();
    auto out = AtomicFileSink::create(path, AtomicFileSink::Overwrite::Allow);
    if (!out)
        return out.error();
    SEALTRAIN_TRY((*out)->write(opened->prefix.headerBytes));
    SEALTRAIN_TRY((*out)->write(*keyBlock));
    SEALTRAIN_TRY((*out)->copyFrom(**file, info.payloadOffset, info.payloadSize));
    return (*out)->commit();
}

}  // namespace sealtrain::crypto
