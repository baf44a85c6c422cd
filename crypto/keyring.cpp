// The keyring: Argon2id master key, wrapped KEKs with versions, rotation, retirement and
// passphrase change, persisted as JSON under a MAC and a generation counter
// (docs/formats/keyring.md).
#include "sealtrain/crypto/keyring.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/aead.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/hkdf.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/random.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <utility>

namespace sealtrain::crypto {
namespace {

constexpr std::string_view kFormat = "sealtrain-keyring-v2";
constexpr std::string_view kUnauthenticatedFormat = "sealtrain-keyring-v1";
constexpr std::string_view kMacLabel = "sealtrain-keyring-mac-v2";
constexpr std::string_view kCheckLabel = "sealtrain-keyring-check-v1";
constexpr std::string_view kWrapLabel = "sealtrain-kek-wrap-v1";
constexpr std::size_t kKeySize = 32;

std::string nowRfc3339()
{
    const auto now =
        std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now());
    return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now);
}

// AAD of a wrapped KEK: label, 0x00, id, 0x00, version as 4 bytes big-endian. Binding id and
// version means a wrapped key can not be moved to another slot of the file.
std::vector<std::uint8_t> wrapAad(const std::string& id, std::uint32_t version)
{
    std::vector<std::uint8_t> aad(kWrapLabel.begin(), kWrapLabel.end());
    aad.push_back(0);
    aad.insert(aad.end(), id.begin(), id.end());
    aad.push_back(0);
    for (int shift = 24; shift >= 0; shift -= 8)
        aad.push_back(static_cast<std::uint8_t>((version >> shift) & 0xff));
    return aad;
}

GcmNonce randomNonce()
{
    GcmNonce nonce{};
    fillRandom(nonce);
    return nonce;
}

Error damaged(const std::filesystem::path& path, std::string_view what)
{
    return Error(ErrorCode::Integrity,
                 fmt::format("The keyring '{}' is damaged ({}); restore it from a backup.",
                             path.string(), what));
}

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

bool belowFloor(const Argon2Params& params)
{
    return params.opsLimit < kArgon2Floor.opsLimit
           || params.memLimitBytes < kArgon2Floor.memLimitBytes;
}

struct StoredKek {
    KekInfo info;
    GcmNonce nonce{};
    std::vector<std::uint8_t> wrapped;  // empty once retired
    Kek kek;                            // key empty once retired
};

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

const char* kekStateName(KekState state)
{
    switch (state) {
    case KekState::Active: return "active";
    case KekState::DecryptOnly: return "decrypt-only";
    case KekState::Retired: return "retired";
    }
    return "unknown";
}

Result<SecretBytes> deriveArgon2id(const SecretBytes& passphrase, const Argon2Salt& salt,
                                   Argon2Params params)
{
    ensureInitialized();
    if (passphrase.empty())
        return Error(ErrorCode::InvalidArgument, "The passphrase is empty; choose a passphrase.");
    if (belowFloor(params)) {
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("Argon2id parameters below the floor of {} passes over {} MiB "
                                 "are refused; raise them.",
                                 kArgon2Floor.opsLimit, kArgon2Floor.memLimitBytes >> 20));
    }
    if (params.memLimitBytes % 1024 != 0 || params.opsLimit > crypto_pwhash_OPSLIMIT_MAX
        || params.memLimitBytes > crypto_pwhash_MEMLIMIT_MAX) {
        return Error(ErrorCode::InvalidArgument,
                     "Argon2id memory must be a whole number of KiB within libsodium's limits.");
    }
    auto key = SecretBytes::allocate(kKeySize);
    if (!key)
        return key.error();
    const auto pass = passphrase.bytes();
    if (crypto_pwhash(key->mutableBytes().data(), kKeySize,
                      reinterpret_cast<const char*>(pass.data()), pass.size(), salt.data(),
                      params.opsLimit, static_cast<std::size_t>(params.memLimitBytes),
                      crypto_pwhash_ALG_ARGON2ID13)
        != 0) {
        return Error(ErrorCode::ResourceExhausted,
                     fmt::format("Argon2id could not get {} MiB of memory; free memory and retry.",
                                 params.memLimitBytes >> 20));
    }
    return key;
}

struct Keyring::State {
    std::filesystem::path path;
    bool fromPassphrase = true;
    Argon2Params params{};
    Argon2Salt salt{};
    std::string masterKeyId;  // key-file mode: the key file's id and version, for messages
    std::uint32_t masterKeyVersion = 0;
    SecretBytes master;
    GcmNonce checkNonce{};
    std::vector<std::uint8_t> check;
    std::vector<std::unique_ptr<StoredKek>> keks;  // pointers stay valid as the list grows
    // Counts the saves since creation (1 for a new keyring); a copy of an older file has a
    // smaller one, which the audit log (core/keyring_changes.h) shows up.
    std::uint64_t generation = 0;
    Sha256Digest mac{};      // as loaded; checked once the master key is known
    std::string signedText;  // what the loaded MAC covers (the canonical file without it)

    StoredKek* find(const std::string& id, std::uint32_t version)
    {
        for (auto& stored : keks) {
            if (stored->info.id == id && stored->info.version == version)
                return stored.get();
        }
        return nullptr;
    }

    StoredKek* newest(const std::string& id)
    {
        StoredKek* best = nullptr;
        for (auto& stored : keks) {
            if (stored->info.id == id
                && (best == nullptr || stored->info.version > best->info.version))
                best = stored.get();
        }
        return best;
    }

    Result<void> makeCheck()
    {
        checkNonce = randomNonce();
        auto sealed = aes256GcmSeal(master, checkNonce, asBytes(kCheckLabel), {});
        if (!sealed)
            return sealed.error();
        check = std::move(sealed).value();
        return success();
    }

    Result<void> wrap(StoredKek& stored) const
    {
        stored.nonce = randomNonce();
        auto sealed =
            aes256GcmSeal(master, stored.nonce, wrapAad(stored.info.id, stored.info.version),
                          stored.kek.key.bytes());
        if (!sealed)
            return sealed.error();
        stored.wrapped = std::move(sealed).value();
        return success();
    }

    Result<const Kek*> addVersion(const std::string& id, std::uint32_t version)
    {
        auto kek = generateKek(id, version);
        if (!kek)
            return kek.error();
        auto stored = std::make_unique<StoredKek>();
        stored->info = {id, version, KekState::Active, nowRfc3339(), {}};
        stored->kek = std::move(kek).value();
        SEALTRAIN_TRY(wrap(*stored));
        keks.push_back(std::move(stored));
        return &keks.back()->kek;
    }

    nlohmann::json toJson() const
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
    Result<Sha256Digest> macOver(std::string_view canonical) const
    {
        auto key = deriveMacKey(master);
        if (!key)
            return key.error();
        return hmacSha256(*key, asBytes(canonical));
    }

    Result<void> verifyMac() const
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
    Result<void> write(bool mustNotExist)
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
    Result<void> saveChange()
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

    // A new keyring, once its master key is set: the check value, version 1 of each purpose,
    // and the first save (which refuses to replace an existing file).
    Result<void> populate(const std::vector<std::string>& purposes)
    {
        SEALTRAIN_TRY(makeCheck());
        for (const auto& id : purposes) {
            auto added = addVersion(id, 1);
            if (!added)
                return added.error();
        }
        generation = 1;
        return write(true);
    }

    static Result<std::unique_ptr<State>> load(const std::filesystem::path& path);

    // Checks the master key against the check value and the metadata against its MAC, then
    // unwraps every live KEK.
    Result<void> unlock(std::string_view wrongKeyMessage)
    {
        if (!aes256GcmOpen(master, checkNonce, asBytes(kCheckLabel), check))
            return Error(ErrorCode::Unauthenticated, std::string(wrongKeyMessage));
        SEALTRAIN_TRY(verifyMac());
        for (auto& stored : keks) {
            if (stored->info.state == KekState::Retired)
                continue;
            auto key = aes256GcmOpenSecret(master, stored->nonce,
                                           wrapAad(stored->info.id, stored->info.version),
                                           stored->wrapped);
            if (!key || key->size() != kKeySize) {
                return damaged(path, fmt::format("KEK '{}' version {} does not unwrap",
                                                 stored->info.id, stored->info.version));
            }
            stored->kek = Kek{stored->info.id, stored->info.version, std::move(key).value()};
        }
        return success();
    }
};

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

Keyring::Keyring(std::unique_ptr<State> state)
    : state_(std::move(state))
{
}
Keyring::Keyring(Keyring&&) noexcept = default;
Keyring& Keyring::operator=(Keyring&&) noexcept = default;
Keyring::~Keyring() = default;

const std::filesystem::path& Keyring::path() const
{
    return state_->path;
}

std::uint64_t Keyring::generation() const
{
    return state_->generation;
}

Result<Keyring> Keyring::createWithPassphrase(const std::filesystem::path& path,
                                              const SecretBytes& passphrase, Argon2Params params,
                                              const std::vector<std::string>& purposes)
{
    auto state = std::make_unique<State>();
    state->path = path;
    state->fromPassphrase = true;
    state->params = params;
    fillRandom(state->salt);
    auto master = deriveArgon2id(passphrase, state->salt, params);
    if (!master)
        return master.error();
    state->master = std::move(master).value();
    SEALTRAIN_TRY(state->populate(purposes));
    return Keyring(std::move(state));
}

Result<Keyring> Keyring::createWithMasterKey(const std::filesystem::path& path,
                                             const Kek& masterKey,
                                             const std::vector<std::string>& purposes)
{
    if (masterKey.key.size() != kKeySize)
        return Error(
            ErrorCode::InvalidArgument,
            "The master key must be 32 bytes; generate it with 'sealtrainctl keyfile generate'.");
    auto state = std::make_unique<State>();
    state->path = path;
    state->fromPassphrase = false;
    state->masterKeyId = masterKey.id;
    state->masterKeyVersion = masterKey.version;
    auto master = masterKey.key.copy();
    if (!master)
        return master.error();
    state->master = std::move(master).value();
    SEALTRAIN_TRY(state->populate(purposes));
    return Keyring(std::move(state));
}

Result<Keyring> Keyring::unlockWithPassphrase(const std::filesystem::path& path,
                                              const SecretBytes& passphrase)
{
    auto loaded = State::load(path);
    if (!loaded)
        return loaded.error();
    auto state = std::move(loaded).value();
    if (!state->fromPassphrase) {
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The keyring '{}' is unlocked with a master key file, not a "
                                 "passphrase; pass --master-key-file.",
                                 path.string()));
    }
    auto master = deriveArgon2id(passphrase, state->salt, state->params);
    if (!master)
        return master.error();
    state->master = std::move(master).value();
    SEALTRAIN_TRY(state->unlock(
        fmt::format("The passphrase is wrong for the keyring '{}'; try again.", path.string())));
    return Keyring(std::move(state));
}

Result<Keyring> Keyring::unlockWithMasterKey(const std::filesystem::path& path,
                                             const Kek& masterKey)
{
    auto loaded = State::load(path);
    if (!loaded)
        return loaded.error();
    auto state = std::move(loaded).value();
    if (state->fromPassphrase) {
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The keyring '{}' is unlocked with a passphrase, not a key file; "
                                 "pass the passphrase.",
                                 path.string()));
    }
    auto master = masterKey.key.copy();
    if (!master)
        return master.error();
    state->master = std::move(master).value();
    SEALTRAIN_TRY(state->unlock(fmt::format("The master key file is wrong for the keyring '{}'; "
                                            "pass the key file it was created with.",
                                            path.string())));
    return Keyring(std::move(state));
}

Result<const Kek*> Keyring::activeKek(const std::string& id) const
{
    StoredKek* stored = state_->newest(id);
    if (stored == nullptr || stored->info.state != KekState::Active) {
        return Error(ErrorCode::NotFound,
                     fmt::format("The keyring has no active key for '{}'; add it with "
                                 "'sealtrainctl keyring add'.",
                                 id));
    }
    return &stored->kek;
}

Result<const Kek*> Keyring::findKek(const std::string& id, std::uint32_t version) const
{
    StoredKek* stored = state_->find(id, version);
    if (stored == nullptr) {
        return Error(ErrorCode::NotFound,
                     fmt::format("The keyring has no key '{}' version {}; the object was sealed "
                                 "under another keyring.",
                                 id, version));
    }
    if (stored->info.state == KekState::Retired) {
        return Error(ErrorCode::PermissionDenied,
                     fmt::format("Key '{}' version {} was retired on {} and can no longer unwrap; "
                                 "the object should have been re-wrapped before retirement.",
                                 id, version, stored->info.retired));
    }
    return &stored->kek;
}

KekResolver Keyring::resolver() const
{
    return [this](const std::string& id, std::uint32_t version) { return findKek(id, version); };
}

std::vector<KekInfo> Keyring::list() const
{
    std::vector<KekInfo> infos;
    for (const auto& stored : state_->keks)
        infos.push_back(stored->info);
    std::sort(infos.begin(), infos.end(), [](const KekInfo& a, const KekInfo& b) {
        return a.id != b.id ? a.id < b.id : a.version < b.version;
    });
    return infos;
}

Result<const Kek*> Keyring::addPurpose(const std::string& id)
{
    if (state_->newest(id) != nullptr) {
        return Error(ErrorCode::AlreadyExists,
                     fmt::format("The keyring already has keys for '{}'; rotate it instead.", id));
    }
    auto added = state_->addVersion(id, 1);
    if (!added)
        return added;
    if (auto saved = state_->saveChange(); !saved) {
        state_->keks.pop_back();
        return saved.error();
    }
    return added;
}

Result<const Kek*> Keyring::rotate(const std::string& id)
{
    StoredKek* current = state_->newest(id);
    if (current == nullptr) {
        return Error(ErrorCode::NotFound,
                     fmt::format("The keyring has no key '{}' to rotate; add it first.", id));
    }
    const KekState previous = current->info.state;
    auto added = state_->addVersion(id, current->info.version + 1);
    if (!added)
        return added;
    if (previous == KekState::Active)
        current->info.state = KekState::DecryptOnly;
    if (auto saved = state_->saveChange(); !saved) {
        state_->keks.pop_back();
        current->info.state = previous;
        return saved.error();
    }
    return added;
}

Result<void> Keyring::retire(const std::string& id, std::uint32_t version)
{
    StoredKek* stored = state_->find(id, version);
    if (stored == nullptr)
        return Error(ErrorCode::NotFound,
                     fmt::format("The keyring has no key '{}' version {}.", id, version));
    if (stored->info.state == KekState::Retired)
        return success();
    if (stored->info.state == KekState::Active) {
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("Key '{}' version {} is the active one; rotate it before retiring "
                                 "it.",
                                 id, version));
    }
    // Keep what is needed to undo until the file is saved.
    auto wrapped = std::move(stored->wrapped);
    stored->info.state = KekState::Retired;
    stored->info.retired = nowRfc3339();
    stored->wrapped.clear();
    if (auto saved = state_->saveChange(); !saved) {
        stored->wrapped = std::move(wrapped);
        stored->info.state = KekState::DecryptOnly;
        stored->info.retired.clear();
        return saved;
    }
    stored->kek.key.wipe();
    return success();
}

Result<void> Keyring::changePassphrase(const SecretBytes& newPassphrase, Argon2Params params)
{
    if (!state_->fromPassphrase) {
        return Error(ErrorCode::InvalidArgument,
                     "This keyring is unlocked with a master key file and has no passphrase.");
    }
    Argon2Salt salt{};
    fillRandom(salt);
    auto master = deriveArgon2id(newPassphrase, salt, params);
    if (!master)
        return master.error();

    // Build the re-wrapped state aside; the live one changes only once the file is saved.
    State next;
    next.path = state_->path;
    next.generation = state_->generation;
    next.fromPassphrase = true;
    next.params = params;
    next.salt = salt;
    next.master = std::move(master).value();
    SEALTRAIN_TRY(next.makeCheck());
    for (const auto& stored : state_->keks) {
        auto copy = std::make_unique<StoredKek>();
        copy->info = stored->info;
        if (stored->info.state != KekState::Retired) {
            auto key = stored->kek.key.copy();
            if (!key)
                return key.error();
            copy->kek = Kek{stored->kek.id, stored->kek.version, std::move(key).value()};
            SEALTRAIN_TRY(next.wrap(*copy));
        }
        next.keks.push_back(std::move(copy));
    }
    SEALTRAIN_TRY(next.saveChange());
    *state_ = std::move(next);
    return success();
}

}  // namespace sealtrain::crypto
