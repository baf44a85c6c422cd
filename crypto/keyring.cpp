// The keyring: Argon2id master key, wrapped KEKs with versions, rotation, retirement and
// passphrase change, persisted as JSON under a MAC and a generation counter
// (docs/formats/keyring.md).
#include "sealtrain/crypto/keyring.h"

#include "keyring_state.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/aead.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/random.h"

#include <sodium.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <utility>

namespace sealtrain::crypto {
namespace keyring_internal {

std::string nowRfc3339()
{
    const auto now =
        std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now());
    return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now);
}

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

}  // namespace keyring_internal

using namespace keyring_internal;

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

StoredKek* Keyring::State::find(const std::string& id, std::uint32_t version)
{
    for (auto& stored : keks) {
        if (stored->info.id == id && stored->info.version == version)
            return stored.get();
    }
    return nullptr;
}

StoredKek* Keyring::State::newest(const std::string& id)
{
    StoredKek* best = nullptr;
    for (auto& stored : keks) {
        if (stored->info.id == id && (best == nullptr || stored->info.version > best->info.version))
            best = stored.get();
    }
    return best;
}

Result<void> Keyring::State::makeCheck()
{
    checkNonce = randomNonce();
    auto sealed = aes256GcmSeal(master, checkNonce, asBytes(kCheckLabel), {});
    if (!sealed)
        return sealed.error();
    check = std::move(sealed).value();
    return success();
}

Result<void> Keyring::State::wrap(StoredKek& stored) const
{
    stored.nonce = randomNonce();
    auto sealed = aes256GcmSeal(master, stored.nonce, wrapAad(stored.info.id, stored.info.version),
                                stored.kek.key.bytes());
    if (!sealed)
        return sealed.error();
    stored.wrapped = std::move(sealed).value();
    return success();
}

Result<const Kek*> Keyring::State::addVersion(const std::string& id, std::uint32_t version)
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

// A new keyring, once its master key is set: the check value, version 1 of each purpose,
// and the first save (which refuses to replace an existing file).
Result<void> Keyring::State::populate(const std::vector<std::string>& purposes)
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

// Checks the master key against the check value and the metadata against its MAC, then
// unwraps every live KEK.
Result<void> Keyring::State::unlock(std::string_view wrongKeyMessage)
{
    if (!aes256GcmOpen(master, checkNonce, asBytes(kCheckLabel), check))
        return Error(ErrorCode::Unauthenticated, std::string(wrongKeyMessage));
    SEALTRAIN_TRY(verifyMac());
    for (auto& stored : keks) {
        if (stored->info.state == KekState::Retired)
            continue;
        auto key = aes256GcmOpenSecret(
            master, stored->nonce, wrapAad(stored->info.id, stored->info.version), stored->wrapped);
        if (!key || key->size() != kKeySize) {
            return damaged(path, fmt::format("KEK '{}' version {} does not unwrap", stored->info.id,
                                             stored->info.version));
        }
        stored->kek = Kek{stored->info.id, stored->info.version, std::move(key).value()};
    }
    return success();
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
