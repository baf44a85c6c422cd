// The keys a data directory makes (data_directory.cpp): its keyring, the platform's signing keys
// and CA sealed under the `signing` KEK, and the audit log's HMAC key derived from the `audit` KEK.
#pragma once

#include "sealtrain/audit/entry.h"
#include "sealtrain/base/result.h"
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/crypto/keyring.h"

#include <filesystem>
#include <string_view>

namespace sealtrain::core::internal {

// The audit log's HMAC key: HKDF-SHA-256 of the active `audit` KEK.
[[nodiscard]] Result<audit::AuditKey> deriveAuditKey(const crypto::Keyring& keyring);
// A new keyring at `path`, from a passphrase or a master key file.
[[nodiscard]] Result<crypto::Keyring> createKeyring(const std::filesystem::path& path,
                                                    const NewDataDirectory& request);
// A new Ed25519 key sealed under the `signing` KEK at `keyFile`, its public key at `publicFile`.
[[nodiscard]] Result<void> createSigningKey(const std::filesystem::path& dir,
                                            const crypto::Keyring& keyring,
                                            std::string_view keyFile, std::string_view publicFile);
// The signing keys of the purposes that came after the audit log's (manifests, checkpoints,
// registry), made when missing: at creation, and once when an older data directory is opened.
[[nodiscard]] Result<void> createPurposeKeys(const std::filesystem::path& dir,
                                             const crypto::Keyring& keyring);
// The platform's signing keys, CA and artefact root: generated, sealed under the `signing` KEK,
// their public halves beside them.
[[nodiscard]] Result<void> createPlatformKeys(const std::filesystem::path& dir,
                                              const crypto::Keyring& keyring);

}  // namespace sealtrain::core::internal
