// Verifying a certificate against the platform CA (certificate_authority.h, verifyCertificate):
// the chain, its validity at a time, the CRL when given, and the purpose.
#include "certificate_internal.h"
#include "openssl_handles.h"
#include "pem_input.h"
#include "sealtrain/crypto/certificate_authority.h"

#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <array>
#include <string>

namespace sealtrain::crypto {

using namespace ca_internal;
using namespace openssl;

namespace {

Error verifyFailure(int code)
{
    std::string reason;
    switch (code) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
        reason = "The certificate has expired; issue a new one";
        break;
    case X509_V_ERR_CERT_NOT_YET_VALID:
        reason = "The certificate is not valid yet; check the clocks of both machines";
        break;
    case X509_V_ERR_CERT_REVOKED:
        reason = "The certificate was revoked; do not accept this identity";
        break;
    case X509_V_ERR_INVALID_PURPOSE:
        reason = "The certificate is not issued for this use (server or client); issue one with "
                 "the right purpose";
        break;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
        reason = "The certificate was not issued by the platform CA; enroll with this control "
                 "plane";
        break;
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
        reason = "The certificate's signature does not verify; it was altered";
        break;
    case X509_V_ERR_UNABLE_TO_GET_CRL:
        reason = "No CRL from the platform CA was given; pass its current CRL";
        break;
    case X509_V_ERR_CRL_HAS_EXPIRED:
        reason = "The CA's CRL is out of date; publish a new CRL";
        break;
    case X509_V_ERR_CRL_SIGNATURE_FAILURE:
    case X509_V_ERR_UNABLE_TO_DECRYPT_CRL_SIGNATURE:
        reason = "The CRL's signature does not verify; fetch the CA's CRL again";
        break;
    default:
        reason = std::string("The certificate does not verify (")
                 + X509_verify_cert_error_string(code) + "); check it was issued by this CA";
        break;
    }
    return Error(ErrorCode::Unauthenticated, reason + ".");
}

}  // namespace

Result<CertificateInfo> verifyCertificate(std::string_view chainPem,
                                          std::string_view caCertificatePem,
                                          const VerifyOptions& options)
{
    auto anchor = loadCaCertificate(caCertificatePem);
    if (!anchor)
        return anchor.error();
    const auto chainBio = readBio(chainPem);
    if (!chainBio)
        return internal("read a certificate chain");
    auto leaf = readCertificate(chainBio.get(), "certificate");
    if (!leaf)
        return leaf.error();
    CertificateStackPtr intermediates(sk_X509_new_null());
    if (!intermediates)
        return internal("read a certificate chain");
    while (X509* next = PEM_read_bio_X509(chainBio.get(), nullptr, pem::refusePassword, nullptr)) {
        if (sk_X509_push(intermediates.get(), next) == 0) {
            X509_free(next);
            return internal("read a certificate chain");
        }
    }

    const StorePtr store(X509_STORE_new());
    if (!store || X509_STORE_add_cert(store.get(), anchor->get()) != 1)
        return internal("set up certificate verification");
    unsigned long flags = X509_V_FLAG_X509_STRICT;
    if (!options.crlPem.empty()) {
        const auto crlBio = readBio(options.crlPem);
        const CrlPtr crl(
            crlBio ? PEM_read_bio_X509_CRL(crlBio.get(), nullptr, pem::refusePassword, nullptr)
                   : nullptr);
        if (!crl) {
            return Error(ErrorCode::InvalidArgument,
                         "The CRL is not a PEM 'X509 CRL' block; give the CA's published CRL.");
        }
        if (X509_STORE_add_crl(store.get(), crl.get()) != 1)
            return internal("add a CRL");
        flags |= X509_V_FLAG_CRL_CHECK;
    } else if (options.requireCrl) {
        return Error(ErrorCode::InvalidArgument,
                     "Verifying a certificate needs the CA's current CRL; pass it.");
    }
    const StoreCtxPtr context(X509_STORE_CTX_new());
    if (!context
        || X509_STORE_CTX_init(context.get(), store.get(), leaf->get(), intermediates.get()) != 1)
        return internal("set up certificate verification");
    X509_VERIFY_PARAM* params = X509_STORE_CTX_get0_param(context.get());
    X509_VERIFY_PARAM_set_flags(params, flags);
    X509_VERIFY_PARAM_set_time(params, toTimeT(options.at.value_or(CertificateClock::now())));
    // OpenSSL 3.0 has no code-signing purpose: such a certificate's extended key usage is read
    // below instead.
    const bool codeSigning = options.purpose == CertificatePurpose::CodeSigning;
    const int purpose = options.purpose == CertificatePurpose::Server ? X509_PURPOSE_SSL_SERVER
                        : codeSigning                                 ? X509_PURPOSE_ANY
                                                                      : X509_PURPOSE_SSL_CLIENT;
    if (X509_STORE_CTX_set_purpose(context.get(), purpose) != 1)
        return internal("set the verification purpose");
    if (X509_verify_cert(context.get()) != 1)
        return verifyFailure(X509_STORE_CTX_get_error(context.get()));
    if (options.purpose == CertificatePurpose::ServerAndClient
        && X509_check_purpose(leaf->get(), X509_PURPOSE_SSL_SERVER, 0) != 1)
        return verifyFailure(X509_V_ERR_INVALID_PURPOSE);
    if (codeSigning && (X509_get_extended_key_usage(leaf->get()) & XKU_CODE_SIGN) == 0)
        return verifyFailure(X509_V_ERR_INVALID_PURPOSE);

    CertificateInfo info;
    std::array<char, 256> commonName{};
    const int length =
        X509_NAME_get_text_by_NID(X509_get_subject_name(leaf->get()), NID_commonName,
                                  commonName.data(), static_cast<int>(commonName.size()));
    if (length > 0)
        info.commonName.assign(commonName.data(), static_cast<std::size_t>(length));
    info.serialHex = serialHex(X509_get0_serialNumber(leaf->get()));
    info.notAfter = notAfter(leaf->get());
    info.subjectAltNames = readSubjectAltNames(leaf->get());
    return info;
}

}  // namespace sealtrain::crypto
