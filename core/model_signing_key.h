// The platform's model-signing identity (issue #30; docs/formats/model-export.md): a P-256 key,
// sealed under the `signing` KEK, and its certificate from the platform CA (codeSigning only),
// with which the control plane signs the folders it exports in the OpenSSF model-signing format.
// Made when missing and made anew when its certificate has less than 30 days left: a signature
// made earlier carries its own certificate and still verifies. Not installed.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <filesystem>
#include <string>

namespace sealtrain::core::internal {

struct ModelSigningIdentity {
    crypto::SecretBytes privateKeyPem;  // PKCS#8
    std::string certificatePem;
};

[[nodiscard]] Result<ModelSigningIdentity>
loadModelSigningIdentity(const std::filesystem::path& dataDir, const crypto::Keyring& keyring,
                         const crypto::CertificateAuthority& ca);

}  // namespace sealtrain::core::internal
