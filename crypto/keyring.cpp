// The keyring: Argon2id master key, wrapped KEKs with versions, rotation, retirement and
// passphrase change, persisted as JSON (docs/formats/keyring.md).
#include "sealtrain/crypto/keyring.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/aead.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/random.h"

#include <sodium.h>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>

namespace sealtrain::crypto {
namespace {

constexpr std::string_view kFormat = "sealtrain-keyring-v1";
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
                {"master", master_},
                {"check", {{"nonce", toBase64(checkNonce)}, {"tag", toBase64(check)}}},
                {"keks", list}};
    }

    // Written atomically (base/byte_io.h), so a crash leaves either the old keyring or the new
    // one, never a mix.
    Result<void> save(bool mustNotExist) const
    {
        std::error_code ec;
        if (mustNotExist && std::filesystem::exists(path, ec)) {
            return Error(ErrorCode::AlreadyExists,
                         fmt::format("A keyring already exists at '{}'; choose another data "
                                     "directory or unlock the existing one.",
                                     path.string()));
        }
        const std::string text = toJson().dump(2) + "\n";
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

    // Verifies the master key against the check value, then unwraps every live KEK.
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
        return save(true);
    }

    static Result<std::unique_ptr<State>> load(const std::filesystem::path& path);

    Result<void> unlock(std::string_view wrongKeyMessage)
    {
        if (!aes256GcmOpen(master, checkNonce, asBytes(kCheckLabel), check))
            return Error(ErrorCode::Unauthenticated, std::string(wrongKeyMessage));
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
    if (json.value("format", "") != kFormat)
        return Error(ErrorCode::Unsupported,
                     fmt::format("The keyring '{}' has an unknown format; use the Sealtrain "
                                 "release that wrote it.",
                                 path.string()));
    try {
        auto state = std::make_unique<Keyring::State>();
        state->path = path;
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
    if (auto saved = state_->save(false); !saved) {
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
    if (auto saved = state_->save(false); !saved) {
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
    if (auto saved = state_->save(false); !saved) {
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
    SEALTRAIN_TRY(next.save(false));
    *state_ = std::move(next);
    return success();
}

}  // namespace sealtrain::crypto
