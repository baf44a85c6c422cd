// The key hierarchy (docs/architecture.md, "Keys and where they flow"): a master key from the admin
// passphrase through Argon2id, or from a key file for headless daemons; KEKs by purpose, each with
// a version history; the per-object DEKs are wrapped under KEKs by sealed objects.
//
// The keyring file (docs/formats/keyring.md) holds only wrapped KEKs and the Argon2id
// parameters: the master key itself is never written. Rotation adds a KEK version that becomes
// the one new objects use; older versions still unwrap until retired, after which their key
// material is erased from the file and can never unwrap again. Changing the passphrase re-wraps
// only the KEKs. Every change is saved atomically (temporary file, fsync, rename) as the next
// generation, under a lock, and only over the generation this object loaded (a concurrent change
// is refused, never overwritten). The file's metadata (versions, states, generation) carries an
// HMAC-SHA-256 under a key derived from the master key: an edited file does not unlock.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/kek.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sealtrain::crypto {

struct Argon2Params {
    std::uint64_t opsLimit = 0;       // passes over memory (Argon2 t)
    std::uint64_t memLimitBytes = 0;  // memory (Argon2 m, in bytes; a multiple of 1 KiB)
};

// Below this nothing derives a key, whatever is configured or stored: libsodium's
// "interactive" level, 2 passes over 64 MiB.
inline constexpr Argon2Params kArgon2Floor{2, std::uint64_t{64} << 20};
// What new keyrings use unless told otherwise: 3 passes over 256 MiB (libsodium "moderate").
inline constexpr Argon2Params kArgon2Default{3, std::uint64_t{256} << 20};

inline constexpr std::size_t kArgon2SaltSize = 16;
using Argon2Salt = std::array<std::uint8_t, kArgon2SaltSize>;

// Argon2id (version 1.3, one lane) of `passphrase` into a 32-byte key. Refuses parameters below
// kArgon2Floor and an empty passphrase.
[[nodiscard]] Result<SecretBytes> deriveArgon2id(const SecretBytes& passphrase,
                                                 const Argon2Salt& salt, Argon2Params params);

enum class KekState { Active, DecryptOnly, Retired };
[[nodiscard]] const char* kekStateName(KekState state);

struct KekInfo {
    std::string id;
    std::uint32_t version = 0;
    KekState state = KekState::Active;
    std::string created;  // RFC 3339 UTC
    std::string retired;  // RFC 3339 UTC, when retired
};

// The purposes the design names (docs/architecture.md); init creates one KEK for each.
inline const std::vector<std::string>& defaultKekPurposes()
{
    static const std::vector<std::string> kPurposes{"database", "datasets", "checkpoints",
                                                    "signing", "audit"};
    return kPurposes;
}

class Keyring final {
public:
    // Creates a new keyring file (refusing to overwrite one) with one KEK per purpose.
    [[nodiscard]] static Result<Keyring>
    createWithPassphrase(const std::filesystem::path& path, const SecretBytes& passphrase,
                         Argon2Params params = kArgon2Default,
                         const std::vector<std::string>& purposes = defaultKekPurposes());
    [[nodiscard]] static Result<Keyring>
    createWithMasterKey(const std::filesystem::path& path, const Kek& masterKey,
                        const std::vector<std::string>& purposes = defaultKekPurposes());

    // Opens a keyring; a wrong passphrase or master key is reported as Unauthenticated, metadata
    // that fails its MAC as Integrity, a format-v1 keyring (no MAC) as Unsupported.
    [[nodiscard]] static Result<Keyring> unlockWithPassphrase(const std::filesystem::path& path,
                                                              const SecretBytes& passphrase);
    [[nodiscard]] static Result<Keyring> unlockWithMasterKey(const std::filesystem::path& path,
                                                             const Kek& masterKey);

    Keyring(Keyring&&) noexcept;
    Keyring& operator=(Keyring&&) noexcept;
    Keyring(const Keyring&) = delete;
    Keyring& operator=(const Keyring&) = delete;
    ~Keyring();

    // The version new objects of this purpose are sealed under.
    [[nodiscard]] Result<const Kek*> activeKek(const std::string& id) const;
    // Finds any version that can still unwrap: PermissionDenied when retired, NotFound when
    // unknown. The resolver refers to this keyring and must not outlive it.
    [[nodiscard]] Result<const Kek*> findKek(const std::string& id, std::uint32_t version) const;
    [[nodiscard]] KekResolver resolver() const;

    [[nodiscard]] std::vector<KekInfo> list() const;

    // Each change below is saved as the next generation; AlreadyExists when another process
    // saved a change since this keyring was opened (this one's change is then undone).
    // Adds a purpose with its first KEK version.
    [[nodiscard]] Result<const Kek*> addPurpose(const std::string& id);
    // Adds version n+1 of `id` and makes it active; version n becomes decrypt-only.
    [[nodiscard]] Result<const Kek*> rotate(const std::string& id);
    // Erases a decrypt-only version's key material for good. The active version can not be
    // retired (rotate first).
    [[nodiscard]] Result<void> retire(const std::string& id, std::uint32_t version);
    // Re-wraps every KEK under a master key from the new passphrase, with a fresh salt.
    [[nodiscard]] Result<void> changePassphrase(const SecretBytes& newPassphrase,
                                                Argon2Params params = kArgon2Default);

    [[nodiscard]] const std::filesystem::path& path() const;
    // 1 for a new keyring, one more for every saved change.
    [[nodiscard]] std::uint64_t generation() const;

private:
    struct State;
    explicit Keyring(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

}  // namespace sealtrain::crypto
