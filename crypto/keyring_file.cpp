// The keyring's file (keyring_state.h): canonical JSON under an HMAC-SHA-256 of a key derived
// from the master key, a generation counter, atomic saves under a folder lock, and the strict
// parser (docs/formats/keyring.md).
#include "keyring_state.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hkdf.h"
#include "sealtrain/crypto/key_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <utility>

namespace sealtrain::crypto {

using namespace keyring_internal;

namespace {

Error unknownFormat(const std::filesystem::path& path, const std::string& format)
{
    if (format == kUnauthenticatedFormat)
        return Error(ErrorCode::Unsupported,
                     fmt::format("The keyring '{}' is in format v1, which has no integrity check, "
                                 "and this release refuses it; create a new data directory with "
                                 "'sealtrainctl init' (or use the release that wrote it).",
                                 path.string()));
    return Error(ErrorCode::Unsupported,
                 fmt::format("The keyring '{}' has an unknown format; use the Sealtrain release "
                             "that wrote it.",
                             path.string()));
}

// The key of the metadata MAC: HKDF-SHA-256 of the master key with a context of its own, so it
// is never the key that wraps KEKs.
Result<SecretBytes> deriveMacKey(const SecretBytes& master)
{
    return hkdf(HkdfHash::Sha256, master.bytes(), {}, asBytes(kMacLabel), kKeySize);
}

// Holds an exclusive flock on the keyring's folder while a change is checked and written, so
// two processes (or two Keyring objects) can not both save over the same generation. The file
// itself is replaced by rename, so the lock is on the folder, which stays.
class FolderLock final {
public:
    static Result<FolderLock> acquire(const std::filesystem::path& folder)
    {
        const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || ::flock(fd, LOCK_EX) != 0) {
            if (fd >= 0)
                ::close(fd);
            return Error(ErrorCode::Io,
                         fmt::format("Cannot lock the folder '{}' to save the keyring; check its "
                                     "permissions.",
                                     folder.string()));
        }
        return FolderLock(fd);
    }
    FolderLock(FolderLock&& other) noexcept
        : fd_(std::exchange(other.fd_, -1))
    {
    }
    FolderLock& operator=(FolderLock&&) = delete;
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;
    ~FolderLock()
    {
        if (fd_ >= 0)
            ::close(fd_);  // releases the lock
    }

private:
    explicit FolderLock(int fd)
        : fd_(fd)
    {
    }
    int fd_ = -1;
};

// The generation of the keyring file as it is on disk now (0 when it can not be read): only
// compared with the one this process loaded, so it needs no MAC check of its own.
std::uint64_t generationOnDisk(const std::filesystem::path& path)
{
    const auto text = readWholeFile(path);
    if (!text)
        return 0;
    const auto json = nlohmann::json::parse(*text, nullptr, false);
    if (!json.is_object() || !json.contains("generation")
        || !json["generation"].is_number_unsigned())
        return 0;
    return json["generation"].get<std::uint64_t>();
}

std::optional<KekState> parseState(const std::string& name)
{
    for (auto state : {KekState::Active, KekState::DecryptOnly, KekState::Retired}) {
        if (name == kekStateName(state))
            return state;
    }
    return std::nullopt;
}

template <std::size_t N>
bool decodeFixed(const nlohmann::json& value, std::array<std::uint8_t, N>& out)
{
    if (!value.is_string())
        return false;
    const auto bytes = fromBase64(value.get<std::string>());
    if (!bytes || bytes->size() != N)
        return false;
    std::copy(bytes->begin(), bytes->end(), out.begin());
    return true;
}

}  // namespace

nlohmann::json Keyring::State::toJson() const
{
    nlohmann::json master_;
    if (fromPassphrase) {
        master_ = {{"source", "passphrase"},
                   {"kdf", "argon2id13"},
                   {"ops_limit", params.opsLimit},
                   {"mem_limit_bytes", params.memLimitBytes},
                   {"salt", toBase64(salt)}};
    } else {
        master_ = {
            {"source", "key-file"}, {"key_id", masterKeyId}, {"key_version", masterKeyVersion}};
    }
    nlohmann::json list = nlohmann::json::array();
    for (const auto& stored : keks) {
        nlohmann::json entry{{"id", stored->info.id},
                             {"version", stored->info.version},
                             {"state", kekStateName(stored->info.state)},
                             {"created", stored->info.created}};
        if (stored->info.state == KekState::Retired) {
            entry["retired"] = stored->info.retired;
        } else {
            entry["nonce"] = toBase64(stored->nonce);
            entry["wrapped"] = toBase64(stored->wrapped);
        }
        list.push_back(std::move(entry));
    }
    return {{"format", kFormat},
            {"generation", generation},
            {"master", master_},
            {"check", {{"nonce", toBase64(checkNonce)}, {"tag", toBase64(check)}}},
            {"keks", list}};
}

// HMAC-SHA-256 of `canonical`: everything the file says but the MAC itself, serialised with
// sorted keys and no whitespace, so any member added, removed or changed fails.
Result<Sha256Digest> Keyring::State::macOver(std::string_view canonical) const
{
    auto key = deriveMacKey(master);
    if (!key)
        return key.error();
    return hmacSha256(*key, asBytes(canonical));
}

Result<void> Keyring::State::verifyMac() const
{
    auto expected = macOver(signedText);
    if (!expected)
        return expected.error();
    if (!digestsEqual(*expected, mac))
        return Error(ErrorCode::Integrity,
                     fmt::format("The keyring '{}' was changed outside Sealtrain (its "
                                 "integrity check fails); restore keyring.json from a backup.",
                                 path.string()));
    return success();
}

// Written atomically (base/byte_io.h), so a crash leaves either the old keyring or the new
// one, never a mix.
Result<void> Keyring::State::write(bool mustNotExist)
{
    std::error_code ec;
    if (mustNotExist && std::filesystem::exists(path, ec)) {
        return Error(ErrorCode::AlreadyExists,
                     fmt::format("A keyring already exists at '{}'; choose another data "
                                 "directory or unlock the existing one.",
                                 path.string()));
    }
    auto json = toJson();
    auto sealedMac = macOver(json.dump());
    if (!sealedMac)
        return sealedMac.error();
    mac = *sealedMac;
    json["mac"] = toBase64(mac);
    const std::string text = json.dump(2) + "\n";
    const auto saved = writeFileAtomically(path, asBytes(text),
                                           mustNotExist ? AtomicFileSink::Overwrite::Refuse
                                                        : AtomicFileSink::Overwrite::Allow);
    if (!saved) {
        return Error(saved.error().code(),
                     fmt::format("Cannot save the keyring '{}'; check free disk space (the "
                                 "previous keyring is unchanged).",
                                 path.string()));
    }
    return success();
}

// Saves a change as the next generation, under the folder lock, and only when the file on
// disk is still the generation this object loaded: a change another process saved since is
// never overwritten (the caller undoes its own change and is told to run it again).
Result<void> Keyring::State::saveChange()
{
    auto lock = FolderLock::acquire(path.parent_path());
    if (!lock)
        return lock.error();
    const std::uint64_t onDisk = generationOnDisk(path);
    if (onDisk != generation) {
        return Error(ErrorCode::AlreadyExists,
                     fmt::format("The keyring '{}' was changed by another process since it was "
                                 "opened (generation {} on disk, {} here); nothing was saved, "
                                 "run the command again.",
                                 path.string(), onDisk, generation));
    }
    ++generation;
    if (auto written = write(false); !written) {
        --generation;
        return written;
    }
    return success();
}

// Parses the file strictly; nothing is unwrapped here.
Result<std::unique_ptr<Keyring::State>> Keyring::State::load(const std::filesystem::path& path)
{
    const auto text = readWholeFile(path);
    if (!text) {
        return Error(ErrorCode::NotFound,
                     fmt::format("No keyring at '{}'; run 'sealtrainctl init' first or pass the "
                                 "right --data-dir.",
                                 path.string()));
    }
    const auto json = nlohmann::json::parse(*text, nullptr, false);
    if (json.is_discarded() || !json.is_object())
        return damaged(path, "not JSON");
    if (const auto format = json.value("format", ""); format != kFormat)
        return unknownFormat(path, format);
    try {
        auto state = std::make_unique<Keyring::State>();
        state->path = path;
        state->generation = json.at("generation").get<std::uint64_t>();
        if (state->generation == 0 || !decodeFixed(json.at("mac"), state->mac))
            return damaged(path, "bad generation or MAC");
        auto covered = json;
        covered.erase("mac");
        state->signedText = covered.dump();
        const auto& master = json.at("master");
        const auto source = master.at("source").get<std::string>();
        if (source == "passphrase") {
            state->fromPassphrase = true;
            if (master.at("kdf").get<std::string>() != "argon2id13")
                return damaged(path, "unknown key derivation");
            state->params.opsLimit = master.at("ops_limit").get<std::uint64_t>();
            state->params.memLimitBytes = master.at("mem_limit_bytes").get<std::uint64_t>();
            if (!decodeFixed(master.at("salt"), state->salt))
                return damaged(path, "bad salt");
            if (belowFloor(state->params))
                return damaged(path, "Argon2id parameters below the floor");
        } else if (source == "key-file") {
            state->fromPassphrase = false;
            state->masterKeyId = master.at("key_id").get<std::string>();
            state->masterKeyVersion = master.at("key_version").get<std::uint32_t>();
        } else {
            return damaged(path, "unknown master key source");
        }
        if (!decodeFixed(json.at("check").at("nonce"), state->checkNonce))
            return damaged(path, "bad check nonce");
        const auto check = fromBase64(json.at("check").at("tag").get<std::string>());
        if (!check || check->size() != kGcmTagSize)
            return damaged(path, "bad check value");
        state->check = *check;

        for (const auto& entry : json.at("keks")) {
            auto stored = std::make_unique<StoredKek>();
            stored->info.id = entry.at("id").get<std::string>();
            stored->info.version = entry.at("version").get<std::uint32_t>();
            stored->info.created = entry.at("created").get<std::string>();
            const auto state_ = parseState(entry.at("state").get<std::string>());
            if (!state_ || !isValidKekId(stored->info.id) || stored->info.version == 0)
                return damaged(path, "bad KEK entry");
            stored->info.state = *state_;
            if (stored->info.state == KekState::Retired) {
                stored->info.retired = entry.at("retired").get<std::string>();
            } else {
                if (!decodeFixed(entry.at("nonce"), stored->nonce))
                    return damaged(path, "bad KEK nonce");
                const auto wrapped = fromBase64(entry.at("wrapped").get<std::string>());
                if (!wrapped || wrapped->size() != kKeySize + kGcmTagSize)
                    return damaged(path, "bad wrapped KEK");
                stored->wrapped = *wrapped;
            }
            if (state->find(stored->info.id, stored->info.version) != nullptr)
                return damaged(path, "duplicate KEK version");
            state->keks.push_back(std::move(stored));
        }
        return state;
    } catch (const nlohmann::json::exception&) {
        return damaged(path, "a field is missing or has the wrong type");
    }
}

}  // namespace sealtrain::crypto
