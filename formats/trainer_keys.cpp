// The trainer's key handoff (trainer_keys.h, docs/formats/trainer-keys.md).
#include "sealtrain/formats/trainer_keys.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/key_file.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace sealtrain::trainer {
namespace {

constexpr std::string_view kKekPrefix = "sealtrain-kek-v1 ";
constexpr std::string_view kDataKeyPrefix = "sealtrain-dek-v1 ";
constexpr std::string_view kPrivateBegin = "-----BEGIN PRIVATE KEY-----";
constexpr std::string_view kPrivateEnd = "-----END PRIVATE KEY-----";
constexpr std::string_view kPublicBegin = "-----BEGIN PUBLIC KEY-----";
constexpr std::string_view kPublicEnd = "-----END PUBLIC KEY-----";
// About 10,000 shards' data keys.
constexpr std::size_t kMaxHandoffBytes = std::size_t{1} << 20U;
constexpr std::size_t kKekSize = 32;

// Bytes that held key material outside SecretBytes; wiped when they go.
struct WipedBytes {
    std::vector<std::uint8_t> bytes;
    WipedBytes() = default;
    WipedBytes(const WipedBytes&) = delete;
    WipedBytes& operator=(const WipedBytes&) = delete;
    ~WipedBytes() { crypto::wipeMemory(bytes); }
    void append(std::string_view text) { bytes.insert(bytes.end(), text.begin(), text.end()); }
};

void wipeString(std::string& text)
{
    crypto::wipeMemory({reinterpret_cast<std::uint8_t*>(text.data()), text.size()});
}

Error badLine(std::size_t line, std::string_view what)
{
    return Error(ErrorCode::InvalidArgument,
                 fmt::format("Line {} of the trainer keys is not {}; write the keys as "
                             "docs/formats/trainer-keys.md says.",
                             line, what));
}

// "sealtrain-kek-v1 ID VERSION BASE64" (docs/formats/keyfile.md), without its newline.
Result<crypto::Kek> parseKekLine(std::string_view line, std::size_t number)
{
    line.remove_prefix(kKekPrefix.size());
    const auto firstSpace = line.find(' ');
    const auto secondSpace =
        firstSpace == std::string_view::npos ? firstSpace : line.find(' ', firstSpace + 1);
    if (secondSpace == std::string_view::npos || line.find(' ', secondSpace + 1) != line.npos)
        return badLine(number, "a key line 'sealtrain-kek-v1 ID VERSION BASE64KEY'");
    const std::string id(line.substr(0, firstSpace));
    const std::string_view versionText = line.substr(firstSpace + 1, secondSpace - firstSpace - 1);
    std::uint32_t version = 0;
    for (const char c : versionText) {
        if (c < '0' || c > '9' || version > 100'000'000)
            return badLine(number, "a key line with a decimal version");
        version = version * 10 + static_cast<std::uint32_t>(c - '0');
    }
    if (!crypto::isValidKekId(id) || versionText.empty() || version == 0)
        return badLine(number, "a key line with a valid key id and a version from 1");
    auto decoded = fromBase64(line.substr(secondSpace + 1));
    if (!decoded || decoded->size() != kKekSize) {
        if (decoded)
            crypto::wipeMemory(*decoded);
        return badLine(number, "a key line whose key is the base64 of 32 bytes");
    }
    auto key = crypto::SecretBytes::fromBytes(*decoded);
    crypto::wipeMemory(*decoded);
    if (!key)
        return key.error();
    return crypto::Kek{id, version, std::move(key).value()};
}

// "sealtrain-dek-v1 OBJECTID BASE64" (32 hex digits, the base64 of 32 bytes).
Result<DataKey> parseDataKeyLine(std::string_view line, std::size_t number)
{
    line.remove_prefix(kDataKeyPrefix.size());
    const auto space = line.find(' ');
    if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos)
        return badLine(number, "a data key line 'sealtrain-dek-v1 OBJECTID BASE64KEY'");
    auto id = fromHex(line.substr(0, space));
    DataKey dataKey;
    if (!id || id->size() != dataKey.objectId.size())
        return badLine(number, "a data key line whose object id is 32 hex digits");
    std::copy(id->begin(), id->end(), dataKey.objectId.begin());
    auto decoded = fromBase64(line.substr(space + 1));
    if (!decoded || decoded->size() != kKekSize) {
        if (decoded)
            crypto::wipeMemory(*decoded);
        return badLine(number, "a data key line whose key is the base64 of 32 bytes");
    }
    auto key = crypto::SecretBytes::fromBytes(*decoded);
    crypto::wipeMemory(*decoded);
    if (!key)
        return key.error();
    dataKey.key = std::move(key).value();
    return dataKey;
}

}  // namespace

crypto::DataKeyResolver TrainerKeys::dataKeyResolver() const
{
    return [this](const crypto::SealedObjectId& objectId) -> Result<crypto::SecretBytes> {
        const auto found = dataKeys.find(objectId);
        if (found == dataKeys.end())
            return Error(ErrorCode::NotFound,
                         fmt::format("The trainer was not given the data key of object {}; the "
                                     "control plane hands over the keys of the dataset's shards "
                                     "only.",
                                     toHex(objectId)));
        return found->second.copy();
    };
}

crypto::KekResolver TrainerKeys::resolver() const
{
    return [this](const std::string& id, std::uint32_t version) -> Result<const crypto::Kek*> {
        for (const auto& kek : keks) {
            if (kek.id == id && kek.version == version)
                return &kek;
        }
        return Error(ErrorCode::NotFound,
                     fmt::format("The trainer was not given KEK '{}' version {}; hand it over "
                                 "with the other keys.",
                                 id, version));
    };
}

const crypto::Kek* TrainerKeys::newest(std::string_view id) const
{
    const crypto::Kek* best = nullptr;
    for (const auto& kek : keks) {
        if (kek.id == id && (best == nullptr || kek.version > best->version))
            best = &kek;
    }
    return best;
}

Result<TrainerKeys> parseTrainerKeys(std::span<const std::uint8_t> bytes)
{
    std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    TrainerKeys keys;
    std::size_t number = 0;
    bool sawMagic = false;
    // The PEM block being collected, its kind and first line.
    std::string_view blockEnd;
    std::size_t blockStart = 0;
    std::size_t blockLine = 0;
    while (!text.empty()) {
        const auto newline = text.find('\n');
        std::string_view line = text.substr(0, newline);
        const std::size_t lineStart =
            static_cast<std::size_t>(line.data() - reinterpret_cast<const char*>(bytes.data()));
        text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
        ++number;
        if (line.ends_with('\r'))
            line.remove_suffix(1);
        if (!blockEnd.empty()) {
            if (line != blockEnd)
                continue;
            const std::string_view pem(reinterpret_cast<const char*>(bytes.data()) + blockStart,
                                       lineStart + line.size() - blockStart);
            if (blockEnd == kPrivateEnd) {
                if (keys.signingKey)
                    return badLine(blockLine, "a second signing key (give exactly one)");
                auto key = crypto::SigningKey::fromPrivatePem(pem);
                if (!key)
                    return badLine(blockLine, "the start of an Ed25519 private key in PEM");
                keys.signingKey.emplace(std::move(key).value());
            } else {
                auto key = crypto::PublicKey::fromPem(pem);
                if (!key)
                    return badLine(blockLine, "the start of an Ed25519 public key in PEM");
                keys.trusted.push_back(*key);
            }
            blockEnd = {};
            continue;
        }
        if (line.empty())
            continue;
        if (!sawMagic) {
            if (line != kTrainerKeysMagic)
                return badLine(number, fmt::format("the magic line '{}'", kTrainerKeysMagic));
            sawMagic = true;
        } else if (line.starts_with(kKekPrefix)) {
            auto kek = parseKekLine(line, number);
            if (!kek)
                return kek.error();
            if (std::any_of(keys.keks.begin(), keys.keks.end(), [&](const crypto::Kek& other) {
                    return other.id == kek->id && other.version == kek->version;
                }))
                return badLine(number, "a new key (that KEK id and version came before)");
            keys.keks.push_back(std::move(kek).value());
        } else if (line.starts_with(kDataKeyPrefix)) {
            auto dataKey = parseDataKeyLine(line, number);
            if (!dataKey)
                return dataKey.error();
            if (!keys.dataKeys.emplace(dataKey->objectId, std::move(dataKey->key)).second)
                return badLine(number, "a new data key (that object came before)");
        } else if (line == kPrivateBegin || line == kPublicBegin) {
            blockEnd = line == kPrivateBegin ? kPrivateEnd : kPublicEnd;
            blockStart = lineStart;
            blockLine = number;
        } else {
            return badLine(number, "a key line or the start of a PEM block");
        }
    }
    if (!sawMagic)
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The trainer keys are empty; the parent must write them, "
                                 "starting with '{}'.",
                                 kTrainerKeysMagic));
    if (!blockEnd.empty())
        return badLine(blockLine, "a PEM block that ends before the input does");
    if (keys.signingKey) {
        const auto& own = keys.signingKey->publicKey();
        if (std::find(keys.trusted.begin(), keys.trusted.end(), own) == keys.trusted.end())
            keys.trusted.push_back(own);
    }
    return keys;
}

Result<TrainerKeys> readTrainerKeys(int fd)
{
    struct stat info {};
    if (::fstat(fd, &info) != 0)
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The keys descriptor {} is not open; have the parent pass the "
                                 "read end of a pipe.",
                                 fd));
    if (::isatty(fd) != 0)
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The keys descriptor {} is a terminal; pipe the keys in instead "
                                 "of typing them.",
                                 fd));
    if (S_ISREG(info.st_mode) && (info.st_mode & (S_IRWXG | S_IRWXO)) != 0)
        return Error(ErrorCode::PermissionDenied,
                     fmt::format("The keys descriptor {} is a file that other users may read; "
                                 "pass a pipe, or a file with mode 0600.",
                                 fd));
    WipedBytes buffer;
    buffer.bytes.resize(kMaxHandoffBytes + 1);
    std::size_t done = 0;
    while (done < buffer.bytes.size()) {
        const ssize_t got = ::read(fd, buffer.bytes.data() + done, buffer.bytes.size() - done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return Error(ErrorCode::Io, fmt::format("Cannot read the keys from descriptor {}: {}; "
                                                    "check how the parent passes them.",
                                                    fd, std::strerror(errno)));
        if (got == 0)
            break;
        done += static_cast<std::size_t>(got);
    }
    if (done > kMaxHandoffBytes)
        return Error(ErrorCode::InvalidArgument,
                     "The trainer keys are longer than 1 MiB; hand over only the keys the run "
                     "needs.");
    return parseTrainerKeys(std::span(buffer.bytes).first(done));
}

Result<crypto::SecretBytes> formatTrainerKeys(std::span<const crypto::Kek* const> keks,
                                              const crypto::SigningKey* signingKey,
                                              std::span<const crypto::PublicKey> trusted,
                                              std::span<const DataKey> dataKeys)
{
    WipedBytes text;
    text.append(kTrainerKeysMagic);
    text.append("\n");
    for (const crypto::Kek* kek : keks) {
        std::string encoded = toBase64(kek->key.bytes());
        text.append(fmt::format("{}{} {} ", kKekPrefix, kek->id, kek->version));
        text.append(encoded);
        text.append("\n");
        wipeString(encoded);
    }
    if (signingKey != nullptr) {
        auto pem = signingKey->toPrivatePem();
        if (!pem)
            return pem.error();
        text.append(*pem);
        if (!pem->ends_with('\n'))
            text.append("\n");
        wipeString(*pem);
    }
    for (const DataKey& dataKey : dataKeys) {
        std::string encoded = toBase64(dataKey.key.bytes());
        text.append(fmt::format("{}{} ", kDataKeyPrefix, toHex(dataKey.objectId)));
        text.append(encoded);
        text.append("\n");
        wipeString(encoded);
    }
    for (const auto& key : trusted) {
        const std::string pem = key.toPem();
        text.append(pem);
        if (!pem.ends_with('\n'))
            text.append("\n");
    }
    return crypto::SecretBytes::fromBytes(text.bytes);
}

Result<crypto::SecretBytes> addSigningKey(std::span<const std::uint8_t> keys,
                                          std::span<const std::uint8_t> signingKeyPem)
{
    auto given = parseTrainerKeys(keys);
    if (!given)
        return given.error();
    if (given->signingKey)
        return Error(ErrorCode::InvalidArgument,
                     "The trainer keys already hold a signing key; a trainer signs with one key "
                     "only, so hand it the keys without one.");
    const bool keysEnd = keys.empty() || keys.back() == '\n';
    const bool pemEnds = !signingKeyPem.empty() && signingKeyPem.back() == '\n';
    const std::size_t size =
        keys.size() + (keysEnd ? 0 : 1) + signingKeyPem.size() + (pemEnds ? 0 : 1);
    auto joined = crypto::SecretBytes::allocate(size);
    if (!joined)
        return joined.error();
    auto out = joined->mutableBytes().begin();
    out = std::copy(keys.begin(), keys.end(), out);
    if (!keysEnd)
        *out++ = '\n';
    out = std::copy(signingKeyPem.begin(), signingKeyPem.end(), out);
    if (!pemEnds)
        *out = '\n';
    auto joinedKeys = parseTrainerKeys(joined->bytes());
    if (!joinedKeys || !joinedKeys->signingKey)
        return Error(ErrorCode::InvalidArgument,
                     "The signing key is not an Ed25519 private key in PEM; enroll the worker "
                     "again to make a new one.");
    return joined;
}

}  // namespace sealtrain::trainer
