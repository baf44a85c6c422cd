// The data directory's keys as it makes them (keys.h).
#include "keys.h"

#include "registry/exports/model_signing_key.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/core/identity/password.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "sealtrain/crypto/hkdf.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/signing.h"
#include "store/files.h"

#include <fmt/format.h>

#include <chrono>
#include <utility>

namespace sealtrain::core::internal {
namespace {

constexpr std::string_view kCaName = "Sealtrain platform CA";
constexpr std::chrono::seconds kCaValidity{std::chrono::hours(24 * 365 * 10)};
constexpr std::string_view kAuditKeyLabel = "sealtrain audit hmac key v1";
constexpr std::string_view kSigningKekId = "signing";
constexpr std::string_view kAuditKekId = "audit";

}  // namespace

Result<audit::AuditKey> deriveAuditKey(const crypto::Keyring& keyring)
{
    auto kek = keyring.activeKek(std::string(kAuditKekId));
    if (!kek)
        return kek.error();
    auto key = crypto::hkdf(crypto::HkdfHash::Sha256, (*kek)->key.bytes(), {},
                            asBytes(kAuditKeyLabel), 32);
    if (!key)
        return key.error();
    return audit::AuditKey::create(std::move(*key), fmt::format("audit-hmac-v{}", (*kek)->version));
}

// A new keyring at `path`, from a passphrase or a master key file.
Result<crypto::Keyring> createKeyring(const std::filesystem::path& path,
                                      const NewDataDirectory& request)
{
    if (request.masterKeyFile) {
        auto master = crypto::readKekFile(*request.masterKeyFile);
        if (!master)
            return master.error();
        return crypto::Keyring::createWithMasterKey(path, *master);
    }
    if (request.passphrase) {
        SEALTRAIN_TRY(checkPassphrasePolicy(*request.passphrase));
        return crypto::Keyring::createWithPassphrase(path, *request.passphrase, request.argon2);
    }
    return Error(ErrorCode::InvalidArgument, "No key was given.");
}

// A new Ed25519 key sealed under the `signing` KEK at `keyFile`, its public key at `publicFile`.
Result<void> createSigningKey(const std::filesystem::path& dir, const crypto::Keyring& keyring,
                              std::string_view keyFile, std::string_view publicFile)
{
    auto signingKek = keyring.activeKek(std::string(kSigningKekId));
    if (!signingKek)
        return signingKek.error();
    auto signingKey = crypto::SigningKey::generate();
    if (!signingKey)
        return signingKey.error();
    SEALTRAIN_TRY(sealSecret(file(dir, keyFile), **signingKek,
                             "application/vnd.sealtrain.ed25519-seed", signingKey->seed().bytes(),
                             AtomicFileSink::Overwrite::Refuse));
    return writePublicFile(file(dir, publicFile), signingKey->publicKey().toPem());
}

// The signing keys of the purposes that came after the audit log's (manifests, checkpoints),
// made when missing: at creation, and once when a data directory from before them is opened.
Result<void> createPurposeKeys(const std::filesystem::path& dir, const crypto::Keyring& keyring)
{
    for (const auto& [keyFile, publicFile] :
         {std::pair{datadir::kManifestsKey, datadir::kManifestsPublicKey},
          std::pair{datadir::kCheckpointsKey, datadir::kCheckpointsPublicKey},
          std::pair{datadir::kRegistryKey, datadir::kRegistryPublicKey}}) {
        std::error_code ec;
        if (!std::filesystem::exists(file(dir, keyFile), ec))
            SEALTRAIN_TRY(createSigningKey(dir, keyring, keyFile, publicFile));
    }
    return success();
}

// The platform's signing keys and CA: generated, sealed under the `signing` KEK, their public
// halves beside them.
Result<void> createPlatformKeys(const std::filesystem::path& dir, const crypto::Keyring& keyring)
{
    SEALTRAIN_TRY(createSigningKey(dir, keyring, datadir::kSigningKey, datadir::kSigningPublicKey));
    SEALTRAIN_TRY(createPurposeKeys(dir, keyring));
    auto signingKek = keyring.activeKek(std::string(kSigningKekId));
    if (!signingKek)
        return signingKek.error();
    auto ca = crypto::CertificateAuthority::create(kCaName, kCaValidity);
    if (!ca)
        return ca.error();
    SEALTRAIN_TRY(sealSecret(file(dir, datadir::kCaKey), **signingKek,
                             "application/vnd.sealtrain.pkcs8-pem", ca->privateKeyPem().bytes(),
                             AtomicFileSink::Overwrite::Refuse));
    SEALTRAIN_TRY(writePublicFile(file(dir, datadir::kCaCertificate), ca->certificatePem()));
    // The artefact root, apart from the identity CA (issue #48).
    bool created = false;
    auto artefactRoot = internal::loadArtefactRoot(dir, keyring, created);
    if (!artefactRoot)
        return artefactRoot.error();
    return success();
}

}  // namespace sealtrain::core::internal
