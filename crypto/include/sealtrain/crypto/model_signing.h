// OpenSSF model-signing signatures (github.com/sigstore/model-transparency, v1.0 predicate) for a
// folder Sealtrain exports (issue #30; docs/formats/model-export.md): an in-toto statement whose
// predicate lists every file's SHA-256 and whose subject digest is the SHA-256 over those digests
// in name order, in a DSSE envelope signed with ECDSA P-256 (SHA-256), carried in a Sigstore
// bundle (v0.3 JSON) with the signing certificate and its chain up to the platform CA. A reviewer
// with only the CA certificate checks it with `model_signing verify certificate`.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::crypto {

struct SignedModelFile {
    std::string name;  // relative to the folder, '/' between parts
    Sha256Digest digest;
};

// The paths the statement says a verifier leaves out (the signature file, git's).
[[nodiscard]] const std::vector<std::string>& modelSigningIgnoredPaths();

// SHA-256 over the files' digests in name order: the statement's subject, the folder's digest.
[[nodiscard]] Sha256Digest modelSigningRootDigest(std::vector<SignedModelFile> files);

// The in-toto statement (JSON) naming the model `modelName` (the folder's name, informative).
[[nodiscard]] std::string modelSigningStatement(std::string_view modelName,
                                                std::vector<SignedModelFile> files);

// The Sigstore bundle (JSON) of `statement` signed with the P-256 key `privateKeyPem` (PKCS#8),
// carrying `certificatePem` (that key's certificate) and then `caCertificatePem`. InvalidArgument
// when the key is not P-256 or does not match the certificate.
[[nodiscard]] Result<std::string> modelSigningBundle(std::string_view statement,
                                                     const SecretBytes& privateKeyPem,
                                                     std::string_view certificatePem,
                                                     std::string_view caCertificatePem);

}  // namespace sealtrain::crypto
