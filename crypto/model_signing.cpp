// OpenSSF model-signing bundles (model_signing.h; docs/formats/model-export.md), written from the
// format's description: the statement, the DSSE pre-authentication encoding signed with ECDSA
// P-256 over SHA-256 (a DER signature), and the Sigstore bundle's JSON.
#include "sealtrain/crypto/model_signing.h"

#include "openssl_handles.h"
#include "pem_input.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/dsse.h"

#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <array>

namespace sealtrain::crypto {
namespace {

using nlohmann::json;
using namespace openssl;

constexpr std::string_view kPayloadType = "application/vnd.in-toto+json";
constexpr std::string_view kBundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json";
constexpr std::string_view kPredicateType = "https://model_signing/signature/v1.0";

void sortByName(std::vector<SignedModelFile>& files)
{
    std::sort(files.begin(), files.end(),
              [](const SignedModelFile& a, const SignedModelFile& b) { return a.name < b.name; });
}

// Every certificate in `pem`, DER encoded, in order.
Result<std::vector<std::vector<std::uint8_t>>> certificatesDer(std::string_view pem)
{
    const BioPtr bio = readBio(pem);
    if (!bio)
        return Error(ErrorCode::Internal, "OpenSSL could not read a certificate; check it.");
    std::vector<std::vector<std::uint8_t>> all;
    while (X509* certificate =
               PEM_read_bio_X509(bio.get(), nullptr, pem::refusePassword, nullptr)) {
        const X509Ptr owned(certificate);
        unsigned char* der = nullptr;
        const int length = i2d_X509(certificate, &der);
        if (length <= 0)
            return Error(ErrorCode::Internal, "Cannot encode a certificate as DER; this is a bug.");
        all.emplace_back(der, der + length);
        OPENSSL_free(der);
    }
    if (all.empty())
        return Error(ErrorCode::InvalidArgument,
                     "No PEM certificate was found; give 'BEGIN CERTIFICATE' blocks.");
    return all;
}

// The public key of the one certificate in `pem`.
Result<PkeyPtr> certificateKey(std::string_view pem)
{
    const BioPtr bio = readBio(pem);
    const X509Ptr certificate(
        bio ? PEM_read_bio_X509(bio.get(), nullptr, pem::refusePassword, nullptr) : nullptr);
    if (!certificate)
        return Error(ErrorCode::InvalidArgument,
                     "The signing certificate is not a PEM certificate; give its 'BEGIN "
                     "CERTIFICATE' block.");
    return PkeyPtr(X509_get_pubkey(certificate.get()));
}

Result<std::vector<std::uint8_t>> signP256(const SecretBytes& privateKeyPem,
                                           std::span<const std::uint8_t> message,
                                           std::string_view certificatePem)
{
    const std::string_view text(reinterpret_cast<const char*>(privateKeyPem.bytes().data()),
                                privateKeyPem.size());
    auto key = pem::readPrivateKey(text, "model signing key",
                                   "The model signing key is not an unencrypted PKCS#8 PEM key; "
                                   "restore it from the sealed backup.");
    if (!key)
        return key.error();
    std::array<char, 64> group{};
    std::size_t length = 0;
    if (EVP_PKEY_get_base_id(key->get()) != EVP_PKEY_EC
        || EVP_PKEY_get_group_name(key->get(), group.data(), group.size(), &length) != 1
        || std::string_view(group.data(), length) != "prime256v1")
        return Error(ErrorCode::InvalidArgument,
                     "The model signing key is not ECDSA P-256; make one with 'openssl ecparam "
                     "-name prime256v1'.");
    auto certified = certificateKey(certificatePem);
    if (!certified)
        return certified.error();
    if (!*certified || EVP_PKEY_eq(key->get(), certified->get()) != 1)
        return Error(ErrorCode::InvalidArgument,
                     "The model signing key is not the one its certificate names; issue the "
                     "certificate for this key.");
    const Owned<EVP_MD_CTX, EVP_MD_CTX_free> context(EVP_MD_CTX_new());
    std::size_t size = 0;
    if (!context
        || EVP_DigestSignInit(context.get(), nullptr, EVP_sha256(), nullptr, key->get()) != 1
        || EVP_DigestSign(context.get(), nullptr, &size, message.data(), message.size()) != 1)
        return Error(ErrorCode::Internal,
                     "OpenSSL failed to sign; check the OpenSSL installation.");
    std::vector<std::uint8_t> signature(size);
    if (EVP_DigestSign(context.get(), signature.data(), &size, message.data(), message.size()) != 1)
        return Error(ErrorCode::Internal,
                     "OpenSSL failed to sign; check the OpenSSL installation.");
    signature.resize(size);
    return signature;
}

}  // namespace

const std::vector<std::string>& modelSigningIgnoredPaths()
{
    static const std::vector<std::string> kIgnored{"model.sig", ".git", ".gitattributes", ".github",
                                                   ".gitignore"};
    return kIgnored;
}

Sha256Digest modelSigningRootDigest(std::vector<SignedModelFile> files)
{
    sortByName(files);
    std::vector<std::uint8_t> digests;
    digests.reserve(files.size() * Sha256Digest().size());
    for (const SignedModelFile& file : files)
        digests.insert(digests.end(), file.digest.begin(), file.digest.end());
    return sha256(digests);
}

std::string modelSigningStatement(std::string_view modelName, std::vector<SignedModelFile> files)
{
    sortByName(files);
    json resources = json::array();
    for (const SignedModelFile& file : files)
        resources.push_back(
            {{"name", file.name}, {"algorithm", "sha256"}, {"digest", toHex(file.digest)}});
    const json statement{
        {"_type", "https://in-toto.io/Statement/v1"},
        {"subject",
         json::array({{{"name", modelName},
                       {"digest", {{"sha256", toHex(modelSigningRootDigest(files))}}}}})},
        {"predicateType", kPredicateType},
        {"predicate",
         {{"serialization",
           {{"method", "files"},
            {"hash_type", "sha256"},
            {"allow_symlinks", false},
            {"ignore_paths", modelSigningIgnoredPaths()}}},
          {"resources", resources}}}};
    return statement.dump();
}

Result<std::string> modelSigningBundle(std::string_view statement, const SecretBytes& privateKeyPem,
                                       std::string_view certificatePem,
                                       std::string_view caCertificatePem)
{
    const std::span<const std::uint8_t> payload(
        reinterpret_cast<const std::uint8_t*>(statement.data()), statement.size());
    auto signature = signP256(privateKeyPem, dssePae(kPayloadType, payload), certificatePem);
    if (!signature)
        return signature.error();
    json chain = json::array();
    for (const std::string_view pem : {certificatePem, caCertificatePem}) {
        auto certificates = certificatesDer(pem);
        if (!certificates)
            return certificates.error();
        for (const auto& der : *certificates)
            chain.push_back({{"rawBytes", toBase64(der)}});
    }
    const json bundle{
        {"mediaType", kBundleMediaType},
        {"verificationMaterial",
         {{"x509CertificateChain", {{"certificates", chain}}}, {"tlogEntries", json::array()}}},
        {"dsseEnvelope",
         {{"payload", toBase64(payload)},
          {"payloadType", kPayloadType},
          {"signatures", json::array({{{"sig", toBase64(*signature)}, {"keyid", ""}}})}}}};
    return bundle.dump(2) + "\n";
}

}  // namespace sealtrain::crypto
