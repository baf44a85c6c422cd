// The data directory's layout (docs/operations/data-directory.md): the names of its files, and how
// its keyring is unlocked. Below every concept of core/, so that whoever writes one of these files
// (the registry's model-signing key, a backup, the data directory itself) names it the same way
// without reaching up to the data directory (issue #50).
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>

namespace sealtrain::core {

// File names inside a data directory.
namespace datadir {
inline constexpr std::string_view kKeyring = "keyring.json";
inline constexpr std::string_view kDatabase = "control.db";
inline constexpr std::string_view kSigningKey = "signing.key.sealed";
inline constexpr std::string_view kSigningPublicKey = "signing.pub.pem";
inline constexpr std::string_view kManifestsKey = "manifests.key.sealed";
inline constexpr std::string_view kManifestsPublicKey = "manifests.pub.pem";
inline constexpr std::string_view kCheckpointsKey = "checkpoints.key.sealed";
inline constexpr std::string_view kCheckpointsPublicKey = "checkpoints.pub.pem";
inline constexpr std::string_view kRegistryKey = "registry.key.sealed";
inline constexpr std::string_view kRegistryPublicKey = "registry.pub.pem";
inline constexpr std::string_view kModelSigningKey = "model-signing.key.sealed";
inline constexpr std::string_view kModelSigningCertificate = "model-signing.crt";
inline constexpr std::string_view kCaCertificate = "ca.crt";
inline constexpr std::string_view kCaKey = "ca.key.sealed";
inline constexpr std::string_view kArtefactCaCertificate = "artefact-ca.crt";
inline constexpr std::string_view kArtefactCaKey = "artefact-ca.key.sealed";
inline constexpr std::string_view kWitness = "audit.witness";
inline constexpr std::string_view kSessions = "sessions";    // one sealed token per signed-in user
inline constexpr std::string_view kDatasets = "datasets";    // one folder per dataset id
inline constexpr std::string_view kDownloads = "downloads";  // exports staged for a download
// Locked (flock, exclusive) by the process that has the directory open: one writer at a time.
inline constexpr std::string_view kLock = "lock";
// The admin's job policy (docs/formats/job-policy.md); absent: the built-in default.
inline constexpr std::string_view kJobPolicy = "job-policy.json";
// How far the audit forward target has the log (audit/forward_spool.h).
inline constexpr std::string_view kForwardCursor = "audit-forward.cursor";
// The keyring KEK that seals dataset shards.
inline constexpr std::string_view kDatasetsKekId = "datasets";
}  // namespace datadir

// How to unlock a data directory's keyring: with a master key file when one is given, else with
// a passphrase, asked for only once the directory is known to exist.
struct KeyringUnlock {
    std::optional<std::filesystem::path> masterKeyFile;
    std::function<Result<crypto::SecretBytes>()> passphrase;
};

}  // namespace sealtrain::core
