// The platform's model-signing identity (issue #30; docs/formats/model-export.md): a P-256 key,
// sealed under the `signing` KEK, and its certificate from the artefact root (codeSigning only,
// issue #48), with which the control plane signs the folders it exports in the OpenSSF
// model-signing format. Made when missing, and made anew when its certificate has less than 30
// days left or is not the artefact root's (a data directory from before issue #48, whose signing
// certificate the identity CA issued): a signature made earlier carries its own certificate.
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
    std::string replaced;  // why a new one was made now: "first", or why the old one went; empty
};

// `artefactRoot` issues it.
[[nodiscard]] Result<ModelSigningIdentity>
loadModelSigningIdentity(const std::filesystem::path& dataDir, const crypto::Keyring& keyring,
                         const crypto::CertificateAuthority& artefactRoot);

// The artefact root of `dataDir`, made (and its key sealed under the `signing` KEK) when missing:
// `created` says so.
[[nodiscard]] Result<crypto::CertificateAuthority>
loadArtefactRoot(const std::filesystem::path& dataDir, const crypto::Keyring& keyring,
                 bool& created);

}  // namespace sealtrain::core::internal
