// The data directory's small files (data_directory/data_directory.cpp,
// registry/exports/model_signing_key.cpp, backups): secrets sealed under a KEK, public keys and
// certificates, each written atomically. Not installed.
#pragma once

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/result.h"
#include "sealtrain/core/store/data_layout.h"
#include "sealtrain/crypto/kek.h"
#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace sealtrain::core::internal {

[[nodiscard]] inline std::filesystem::path file(const std::filesystem::path& dataDir,
                                                std::string_view name)
{
    return dataDir / std::string(name);
}

// A small secret as a sealed object under `kek` (written atomically, mode 0600).
[[nodiscard]] Result<void> sealSecret(const std::filesystem::path& path, const crypto::Kek& kek,
                                      std::string_view contentType,
                                      std::span<const std::uint8_t> secret,
                                      AtomicFileSink::Overwrite overwrite);
// The plaintext of a small sealed object (one chunk), only ever in SecretBytes.
[[nodiscard]] Result<crypto::SecretBytes> unsealSecret(const std::filesystem::path& path,
                                                       const crypto::KekResolver& resolver,
                                                       const char* what);
// Public keys and certificates are readable by everyone (0644); they are written atomically.
[[nodiscard]] Result<void> writePublicFile(const std::filesystem::path& path,
                                           const std::string& text);
// NotFound, saying to restore the data directory, when it can not be read.
[[nodiscard]] Result<std::string> readPublicFile(const std::filesystem::path& path);

// A new, empty folder of mode 0700 beside `target`, to be renamed into place:
// "PARENT/.<target name>.<purpose>-<random>".
[[nodiscard]] Result<std::filesystem::path>
makeTemporarySibling(const std::filesystem::path& target, std::string_view purpose);
// The keyring in `keyringFile`, unlocked with the master key file or the passphrase `unlock`
// gives.
[[nodiscard]] Result<crypto::Keyring> unlockKeyringFile(const std::filesystem::path& keyringFile,
                                                        const KeyringUnlock& unlock);

}  // namespace sealtrain::core::internal
