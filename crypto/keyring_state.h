// The keyring's state behind Keyring (private to crypto/): its fields, the in-memory changes
// (keyring.cpp) and the file (keyring_file.cpp: the JSON, its MAC, the generation and the folder
// lock; docs/formats/keyring.md).
#pragma once

#include "sealtrain/crypto/aead.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/keyring.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::crypto {
namespace keyring_internal {

inline constexpr std::string_view kFormat = "sealtrain-keyring-v2";
inline constexpr std::string_view kUnauthenticatedFormat = "sealtrain-keyring-v1";
inline constexpr std::string_view kMacLabel = "sealtrain-keyring-mac-v2";
inline constexpr std::string_view kCheckLabel = "sealtrain-keyring-check-v1";
inline constexpr std::string_view kWrapLabel = "sealtrain-kek-wrap-v1";
inline constexpr std::size_t kKeySize = 32;

[[nodiscard]] std::string nowRfc3339();
// AAD of a wrapped KEK: label, 0x00, id, 0x00, version as 4 bytes big-endian. Binding id and
// version means a wrapped key can not be moved to another slot of the file.
[[nodiscard]] std::vector<std::uint8_t> wrapAad(const std::string& id, std::uint32_t version);
[[nodiscard]] GcmNonce randomNonce();
[[nodiscard]] Error damaged(const std::filesystem::path& path, std::string_view what);
[[nodiscard]] bool belowFloor(const Argon2Params& params);

struct StoredKek {
    KekInfo info;
    GcmNonce nonce{};
    std::vector<std::uint8_t> wrapped;  // empty once retired
    Kek kek;                            // key empty once retired
};

}  // namespace keyring_internal

struct Keyring::State {
    using StoredKek = keyring_internal::StoredKek;

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
    // smaller one, which the audit log (core/keys/keyring_changes.h) shows up.
    std::uint64_t generation = 0;
    Sha256Digest mac{};      // as loaded; checked once the master key is known
    std::string signedText;  // what the loaded MAC covers (the canonical file without it)

    StoredKek* find(const std::string& id, std::uint32_t version);
    StoredKek* newest(const std::string& id);
    Result<void> makeCheck();
    Result<void> wrap(StoredKek& stored) const;
    Result<const Kek*> addVersion(const std::string& id, std::uint32_t version);
    nlohmann::json toJson() const;
    // HMAC-SHA-256 of `canonical`: everything the file says but the MAC itself, serialised with
    // sorted keys and no whitespace, so any member added, removed or changed fails.
    Result<Sha256Digest> macOver(std::string_view canonical) const;
    Result<void> verifyMac() const;
    // Written atomically (base/byte_io.h), so a crash leaves either the old keyring or the new
    // one, never a mix.
    Result<void> write(bool mustNotExist);
    // Saves a change as the next generation, under the folder lock, and only when the file on
    // disk is still the generation this object loaded: a change another process saved since is
    // never overwritten (the caller undoes its own change and is told to run it again).
    Result<void> saveChange();
    // A new keyring, once its master key is set: the check value, version 1 of each purpose,
    // and the first save (which refuses to replace an existing file).
    Result<void> populate(const std::vector<std::string>& purposes);
    // Checks the master key against the check value and the metadata against its MAC, then
    // unwraps every live KEK.
    Result<void> unlock(std::string_view wrongKeyMessage);

    static Result<std::unique_ptr<State>> load(const std::filesystem::path& path);
};

}  // namespace sealtrain::crypto
