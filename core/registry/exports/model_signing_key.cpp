// The platform's model-signing key and certificate (registry/exports/model_signing_key.h).
#include "registry/exports/model_signing_key.h"

#include "sealtrain/core/store/data_layout.h"
#include "store/files.h"

#include <chrono>
#include <system_error>

namespace sealtrain::core::internal {
namespace {

constexpr std::string_view kCommonName = "Sealtrain model signing";
constexpr std::chrono::hours kValidity{24 * 365};
constexpr std::chrono::hours kRenewWithin{24 * 30};
constexpr std::string_view kArtefactRootName = "Sealtrain artefact root";
constexpr std::chrono::seconds kArtefactRootValidity{std::chrono::hours(24 * 365 * 10)};

// A new key and certificate, replacing what was there (`why`).
Result<ModelSigningIdentity> makeIdentity(const std::filesystem::path& dataDir,
                                          const crypto::Keyring& keyring,
                                          const crypto::CertificateAuthority& ca, std::string why)
{
    auto kek = keyring.activeKek("signing");
    if (!kek)
        return kek.error();
    auto keyAndCsr = crypto::makeKeyAndCsr(kCommonName);
    if (!keyAndCsr)
        return keyAndCsr.error();
    crypto::IssueRequest request;
    request.csrPem = keyAndCsr->csrPem;
    request.commonName = std::string(kCommonName);
    request.purpose = crypto::CertificatePurpose::CodeSigning;
    request.validFor = kValidity;
    auto certificate = ca.issue(request);
    if (!certificate)
        return certificate.error();
    SEALTRAIN_TRY(sealSecret(file(dataDir, datadir::kModelSigningKey), **kek,
                             "application/vnd.sealtrain.pkcs8-pem",
                             keyAndCsr->privateKeyPem.bytes(), AtomicFileSink::Overwrite::Allow));
    SEALTRAIN_TRY(writePublicFile(file(dataDir, datadir::kModelSigningCertificate), *certificate));
    return ModelSigningIdentity{std::move(keyAndCsr->privateKeyPem), std::move(*certificate),
                                std::move(why)};
}

}  // namespace

Result<crypto::CertificateAuthority> loadArtefactRoot(const std::filesystem::path& dataDir,
                                                      const crypto::Keyring& keyring, bool& created)
{
    created = false;
    std::error_code ec;
    const auto keyPath = file(dataDir, datadir::kArtefactCaKey);
    const auto certificatePath = file(dataDir, datadir::kArtefactCaCertificate);
    if (std::filesystem::exists(keyPath, ec) && std::filesystem::exists(certificatePath, ec)) {
        auto key = unsealSecret(keyPath, keyring.resolver(), "artefact root key");
        if (!key)
            return key.error();
        auto certificate = readPublicFile(certificatePath);
        if (!certificate)
            return certificate.error();
        return crypto::CertificateAuthority::load(*certificate, *key);
    }
    auto kek = keyring.activeKek("signing");
    if (!kek)
        return kek.error();
    auto root = crypto::CertificateAuthority::create(kArtefactRootName, kArtefactRootValidity);
    if (!root)
        return root.error();
    SEALTRAIN_TRY(sealSecret(keyPath, **kek, "application/vnd.sealtrain.pkcs8-pem",
                             root->privateKeyPem().bytes(), AtomicFileSink::Overwrite::Allow));
    SEALTRAIN_TRY(writePublicFile(certificatePath, root->certificatePem()));
    created = true;
    return root;
}

Result<ModelSigningIdentity> loadModelSigningIdentity(const std::filesystem::path& dataDir,
                                                      const crypto::Keyring& keyring,
                                                      const crypto::CertificateAuthority& ca)
{
    std::error_code ec;
    const auto keyPath = file(dataDir, datadir::kModelSigningKey);
    const auto certificatePath = file(dataDir, datadir::kModelSigningCertificate);
    if (!std::filesystem::exists(keyPath, ec) || !std::filesystem::exists(certificatePath, ec))
        return makeIdentity(dataDir, keyring, ca, "first");
    auto certificate = readPublicFile(certificatePath);
    if (!certificate)
        return certificate.error();
    crypto::VerifyOptions options;
    options.purpose = crypto::CertificatePurpose::CodeSigning;
    options.at = crypto::CertificateClock::now() + kRenewWithin;
    options.requireCrl = false;
    // Expiring, expired, or of another issuer (the identity CA, before issue #48): a new one.
    if (!crypto::verifyCertificate(*certificate, ca.certificatePem(), options))
        return makeIdentity(dataDir, keyring, ca, "expiring or not issued by the artefact root");
    auto key = unsealSecret(keyPath, keyring.resolver(), "model signing key");
    if (!key)
        return key.error();
    return ModelSigningIdentity{std::move(*key), std::move(*certificate), {}};
}

}  // namespace sealtrain::core::internal
