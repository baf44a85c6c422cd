// The platform CA over OpenSSL 3's X.509 API. Every OpenSSL object lives in a unique_ptr with
// its free function; private keys travel as PKCS#8 PEM in SecretBytes and are parsed straight
// from that protected memory.
#include "sealtrain/crypto/certificate_authority.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/random.h"

#include "certificate_internal.h"
#include "openssl_handles.h"
#include "pem_input.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <memory>

namespace sealtrain::crypto {
namespace ca_internal {

using namespace openssl;

Error internal(const char* what)
{
    return Error(ErrorCode::Internal,
                 std::string("OpenSSL failed to ") + what + "; check the OpenSSL installation.");
}

std::time_t toTimeT(CertificateClock::time_point when)
{
    return CertificateClock::to_time_t(when);
}

PkeyPtr generateP256()
{
    char group[] = "P-256";
    return PkeyPtr(EVP_EC_gen(group));
}

bool isP256(EVP_PKEY* key)
{
    if (EVP_PKEY_get_base_id(key) != EVP_PKEY_EC)
        return false;
    std::array<char, 64> group{};
    std::size_t length = 0;
    return EVP_PKEY_get_group_name(key, group.data(), group.size(), &length) == 1
           && std::string_view(group.data(), length) == "prime256v1";
}

Result<SecretBytes> writePrivateKeyPem(EVP_PKEY* key)
{
    // The secure-memory BIO is cleansed when freed; the PEM then lives only in SecretBytes.
    const BioPtr bio(BIO_new(BIO_s_secmem()));
    if (!bio
        || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1)
        return internal("write a private key");
    char* data = nullptr;
    const long length = BIO_get_mem_data(bio.get(), &data);
    if (length <= 0 || data == nullptr)
        return internal("write a private key");
    return SecretBytes::fromBytes(
        {reinterpret_cast<const std::uint8_t*>(data), static_cast<std::size_t>(length)});
}

// Parsed straight from the protected memory: the view is never copied.
Result<PkeyPtr> readPrivateKey(const SecretBytes& pem)
{
    const std::string_view text(reinterpret_cast<const char*>(pem.bytes().data()), pem.size());
    return pem::readPrivateKey(text, "CA private key",
                               "The CA private key is not an unencrypted PKCS#8 PEM key; restore "
                               "it from the sealed backup.");
}

Result<X509Ptr> readCertificate(BIO* bio, std::string_view what)
{
    X509Ptr certificate(PEM_read_bio_X509(bio, nullptr, pem::refusePassword, nullptr));
    if (!certificate) {
        return Error(ErrorCode::InvalidArgument, "The " + std::string(what)
                                                     + " is not a PEM certificate; give a 'BEGIN "
                                                       "CERTIFICATE' block.");
    }
    return certificate;
}

// A certificate alone: refused when anything follows its block.
Result<X509Ptr> readCertificate(std::string_view pem, std::string_view what)
{
    auto bio = pem::singleBlock(pem, what);
    if (!bio)
        return bio.error();
    return readCertificate(bio->get(), what);
}

Result<std::string> certificateText(X509* certificate)
{
    const BioPtr bio(BIO_new(BIO_s_mem()));
    if (!bio || PEM_write_bio_X509(bio.get(), certificate) != 1)
        return internal("write a certificate");
    return bioText(bio.get());
}

std::string serialHex(const ASN1_INTEGER* serial)
{
    const BnPtr number(ASN1_INTEGER_to_BN(serial, nullptr));
    if (!number)
        return {};
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(BN_num_bytes(number.get())));
    BN_bn2bin(number.get(), bytes.data());
    return toHex(bytes);
}

Result<Asn1IntPtr> randomSerial()
{
    // 128 random bits, top bit clear so the DER INTEGER stays positive and 16 bytes long at most.
    auto bytes = randomBytes(16);
    bytes[0] &= 0x7f;
    bytes[0] |= 0x40;  // never a leading zero byte: every serial has the same length
    const BnPtr number(BN_bin2bn(bytes.data(), static_cast<int>(bytes.size()), nullptr));
    Asn1IntPtr serial(number ? BN_to_ASN1_INTEGER(number.get(), nullptr) : nullptr);
    if (!serial)
        return internal("make a serial number");
    return serial;
}

Result<NamePtr> commonNameOnly(std::string_view commonName)
{
    if (commonName.empty() || commonName.size() > 64) {
        return Error(ErrorCode::InvalidArgument,
                     "A certificate's common name must have 1 to 64 characters; choose a shorter "
                     "name.");
    }
    NamePtr name(X509_NAME_new());
    if (!name
        || X509_NAME_add_entry_by_NID(name.get(), NID_commonName, MBSTRING_UTF8,
                                      reinterpret_cast<const unsigned char*>(commonName.data()),
                                      static_cast<int>(commonName.size()), -1, 0)
               != 1)
        return internal("build a certificate name");
    return name;
}

// Adds an extension written in OpenSSL's configuration syntax. Only fixed strings of ours go
// through this parser; names supplied by callers are built as GENERAL_NAMEs instead.
Result<void> addExtension(X509* certificate, X509* issuer, int nid, const char* value)
{
    X509V3_CTX context;
    X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
    const ExtPtr extension(X509V3_EXT_nconf_nid(nullptr, &context, nid, value));
    if (!extension || X509_add_ext(certificate, extension.get(), -1) != 1)
        return internal("add a certificate extension");
    return success();
}

bool isDnsName(std::string_view name)
{
    if (name.empty() || name.size() > 253)
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
               || c == '-' || c == '.' || c == '*';
    });
}

bool isUri(std::string_view uri)
{
    if (uri.find(':') == std::string_view::npos || uri.size() > 1024)
        return false;
    return std::all_of(uri.begin(), uri.end(), [](char c) { return c > ' ' && c < 127; });
}

Error badName(const std::string& kind, const std::string& value)
{
    return Error(ErrorCode::InvalidArgument, "The subject alternative name " + kind + " '" + value
                                                 + "' is not valid; correct it.");
}

Result<void> addIa5Name(GENERAL_NAMES* names, int type, std::string_view value)
{
    GENERAL_NAME* name = GENERAL_NAME_new();
    ASN1_IA5STRING* text = ASN1_IA5STRING_new();
    if (name == nullptr || text == nullptr
        || ASN1_STRING_set(text, value.data(), static_cast<int>(value.size())) != 1) {
        GENERAL_NAME_free(name);
        ASN1_IA5STRING_free(text);
        return internal("build a subject alternative name");
    }
    GENERAL_NAME_set0_value(name, type, text);
    if (sk_GENERAL_NAME_push(names, name) == 0) {
        GENERAL_NAME_free(name);
        return internal("build a subject alternative name");
    }
    return success();
}

Result<void> addSubjectAltNames(X509* certificate, const SubjectAltNames& sans)
{
    if (sans.dns.empty() && sans.ip.empty() && sans.uri.empty())
        return success();
    NamesPtr names(sk_GENERAL_NAME_new_null());
    if (!names)
        return internal("build subject alternative names");
    for (const auto& dns : sans.dns) {
        if (!isDnsName(dns))
            return badName("DNS name", dns);
        SEALTRAIN_TRY(addIa5Name(names.get(), GEN_DNS, dns));
    }
    for (const auto& uri : sans.uri) {
        if (!isUri(uri))
            return badName("URI", uri);
        SEALTRAIN_TRY(addIa5Name(names.get(), GEN_URI, uri));
    }
    for (const auto& ip : sans.ip) {
        ASN1_OCTET_STRING* address = a2i_IPADDRESS(ip.c_str());
        if (address == nullptr)
            return badName("IP address", ip);
        GENERAL_NAME* name = GENERAL_NAME_new();
        if (name == nullptr) {
            ASN1_OCTET_STRING_free(address);
            return internal("build a subject alternative name");
        }
        GENERAL_NAME_set0_value(name, GEN_IPADD, address);
        if (sk_GENERAL_NAME_push(names.get(), name) == 0) {
            GENERAL_NAME_free(name);
            return internal("build a subject alternative name");
        }
    }
    if (X509_add1_ext_i2d(certificate, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT)
        != 1)
        return internal("add subject alternative names");
    return success();
}

SubjectAltNames readSubjectAltNames(X509* certificate)
{
    SubjectAltNames sans;
    NamesPtr names(static_cast<GENERAL_NAMES*>(
        X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr)));
    if (!names)
        return sans;
    for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
        const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
        int type = 0;
        void* raw = GENERAL_NAME_get0_value(name, &type);
        // DNS, URI and IP names are ASN.1 strings; other kinds (directory names, other names)
        // are different structures that Sealtrain never issues.
        if (raw == nullptr || (type != GEN_DNS && type != GEN_URI && type != GEN_IPADD))
            continue;
        const auto* value = static_cast<const ASN1_STRING*>(raw);
        const auto* data = ASN1_STRING_get0_data(value);
        const auto length = static_cast<std::size_t>(ASN1_STRING_length(value));
        if (type == GEN_DNS)
            sans.dns.emplace_back(reinterpret_cast<const char*>(data), length);
        else if (type == GEN_URI)
            sans.uri.emplace_back(reinterpret_cast<const char*>(data), length);
        else if (type == GEN_IPADD && (length == 4 || length == 16)) {
            std::array<char, INET6_ADDRSTRLEN> text{};
            if (inet_ntop(length == 4 ? AF_INET : AF_INET6, data, text.data(),
                          static_cast<socklen_t>(text.size()))
                != nullptr)
                sans.ip.emplace_back(text.data());
        }
    }
    return sans;
}

const char* purposeUsage(CertificatePurpose purpose)
{
    switch (purpose) {
    case CertificatePurpose::Server: return "serverAuth";
    case CertificatePurpose::Client: return "clientAuth";
    case CertificatePurpose::ServerAndClient: return "serverAuth,clientAuth";
    case CertificatePurpose::CodeSigning: return "codeSigning";
    }
    return "clientAuth";
}

// Fills in what every certificate of ours has: version 3, serial, validity and the subject.
Result<X509Ptr> newCertificate(std::string_view commonName, CertificateClock::time_point from,
                               CertificateClock::time_point until)
{
    if (until <= from) {
        return Error(ErrorCode::InvalidArgument,
                     "A certificate must end after it starts; give a positive validity.");
    }
    X509Ptr certificate(X509_new());
    auto serial = randomSerial();
    if (!serial)
        return serial.error();
    auto name = commonNameOnly(commonName);
    if (!name)
        return name.error();
    if (!certificate || X509_set_version(certificate.get(), X509_VERSION_3) != 1
        || X509_set_serialNumber(certificate.get(), serial->get()) != 1
        || ASN1_TIME_set(X509_getm_notBefore(certificate.get()), toTimeT(from)) == nullptr
        || ASN1_TIME_set(X509_getm_notAfter(certificate.get()), toTimeT(until)) == nullptr
        || X509_set_subject_name(certificate.get(), name->get()) != 1)
        return internal("build a certificate");
    return certificate;
}

CertificateClock::time_point notAfter(const X509* certificate)
{
    std::tm when{};
    if (ASN1_TIME_to_tm(X509_get0_notAfter(certificate), &when) != 1)
        return CertificateClock::time_point::min();  // unreadable: treated as expired
    return CertificateClock::from_time_t(timegm(&when));
}

// When a leaf issued now by `ca` may be valid until: what was asked, but never past the CA's
// own expiry (a chain is only as valid as its CA). InvalidArgument when the CA has expired.
Result<CertificateClock::time_point> leafExpiry(const X509* ca,
                                                CertificateClock::time_point requested)
{
    const auto caExpiry = notAfter(ca);
    if (caExpiry <= CertificateClock::now()) {
        return Error(ErrorCode::InvalidArgument,
                     "The platform CA's certificate has expired, so it issues nothing more; "
                     "replace the platform CA before enrolling or renewing certificates.");
    }
    return std::min(requested, caExpiry);
}

Result<X509Ptr> loadCaCertificate(std::string_view pem)
{
    auto certificate = readCertificate(pem, "CA certificate");
    if (!certificate)
        return certificate;
    if (X509_check_ca(certificate->get()) == 0) {
        return Error(ErrorCode::InvalidArgument,
                     "The CA certificate is not marked as a certificate authority; give the "
                     "platform CA's certificate.");
    }
    return certificate;
}

// The CA's certificate and private key, parsed and checked to belong together.
struct CaMaterial {
    X509Ptr certificate;
    PkeyPtr key;
};

Result<CaMaterial> loadCaMaterial(std::string_view certificatePem, const SecretBytes& keyPem)
{
    auto certificate = loadCaCertificate(certificatePem);
    if (!certificate)
        return certificate.error();
    auto key = readPrivateKey(keyPem);
    if (!key)
        return key.error();
    if (X509_check_private_key(certificate->get(), key->get()) != 1) {
        return Error(ErrorCode::InvalidArgument,
                     "The CA private key does not belong to the CA certificate; restore the pair "
                     "from the same backup.");
    }
    return CaMaterial{std::move(*certificate), std::move(*key)};
}

// The CSR parsed, its signature verified under its own key, and that key P-256.
Result<ReqPtr> checkedRequest(std::string_view csrPem)
{
    auto csrBio = pem::singleBlock(csrPem, "certificate request");
    if (!csrBio)
        return csrBio.error();
    ReqPtr csr(PEM_read_bio_X509_REQ(csrBio->get(), nullptr, pem::refusePassword, nullptr));
    if (!csr) {
        return Error(ErrorCode::InvalidArgument,
                     "The certificate request is not a PEM CSR; give a 'BEGIN CERTIFICATE "
                     "REQUEST' block.");
    }
    EVP_PKEY* subjectKey = X509_REQ_get0_pubkey(csr.get());
    if (subjectKey == nullptr || X509_REQ_verify(csr.get(), subjectKey) != 1) {
        return Error(ErrorCode::InvalidArgument,
                     "The certificate request's signature does not verify; the request was "
                     "altered, so make a new one.");
    }
    if (!isP256(subjectKey)) {
        return Error(ErrorCode::Unsupported,
                     "The certificate request's key is not ECDSA P-256; generate the key with "
                     "'sealtrainctl' or 'openssl ecparam -name prime256v1'.");
    }
    return csr;
}

}  // namespace ca_internal

using namespace ca_internal;

Result<KeyAndCsr> makeKeyAndCsr(std::string_view commonName)
{
    const auto key = generateP256();
    if (!key)
        return internal("generate a P-256 key");
    auto name = commonNameOnly(commonName);
    if (!name)
        return name.error();
    const ReqPtr request(X509_REQ_new());
    if (!request || X509_REQ_set_version(request.get(), X509_REQ_VERSION_1) != 1
        || X509_REQ_set_subject_name(request.get(), name->get()) != 1
        || X509_REQ_set_pubkey(request.get(), key.get()) != 1
        || X509_REQ_sign(request.get(), key.get(), EVP_sha256()) <= 0)
        return internal("sign a certificate request");
    const BioPtr bio(BIO_new(BIO_s_mem()));
    if (!bio || PEM_write_bio_X509_REQ(bio.get(), request.get()) != 1)
        return internal("write a certificate request");
    auto keyPem = writePrivateKeyPem(key.get());
    if (!keyPem)
        return keyPem.error();
    return KeyAndCsr{std::move(*keyPem), bioText(bio.get())};
}

Result<CertificateAuthority> CertificateAuthority::create(std::string_view commonName,
                                                          std::chrono::seconds validFor)
{
    const auto key = generateP256();
    if (!key)
        return internal("generate a P-256 key");
    const auto now = CertificateClock::now();
    auto certificate = newCertificate(commonName, now - std::chrono::minutes(5), now + validFor);
    if (!certificate)
        return certificate.error();
    X509* cert = certificate->get();
    if (X509_set_issuer_name(cert, X509_get_subject_name(cert)) != 1
        || X509_set_pubkey(cert, key.get()) != 1)
        return internal("build the CA certificate");
    SEALTRAIN_TRY(addExtension(cert, cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0"));
    SEALTRAIN_TRY(addExtension(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign"));
    SEALTRAIN_TRY(addExtension(cert, cert, NID_subject_key_identifier, "hash"));
    SEALTRAIN_TRY(addExtension(cert, cert, NID_authority_key_identifier, "keyid:always"));
    if (X509_sign(cert, key.get(), EVP_sha256()) <= 0)
        return internal("sign the CA certificate");
    auto pem = certificateText(cert);
    if (!pem)
        return pem.error();
    auto keyPem = writePrivateKeyPem(key.get());
    if (!keyPem)
        return keyPem.error();
    return CertificateAuthority(std::move(*pem), std::move(*keyPem));
}

Result<CertificateAuthority> CertificateAuthority::load(std::string_view certificatePem,
                                                        const SecretBytes& privateKeyPem)
{
    SEALTRAIN_TRY(loadCaMaterial(certificatePem, privateKeyPem));
    auto keyCopy = privateKeyPem.copy();
    if (!keyCopy)
        return keyCopy.error();
    return CertificateAuthority(std::string(certificatePem), std::move(*keyCopy));
}

Result<void> checkCertificateRequest(std::string_view csrPem)
{
    auto csr = checkedRequest(csrPem);
    return csr ? success() : Result<void>(csr.error());
}

Result<std::string> CertificateAuthority::issue(const IssueRequest& request) const
{
    auto csr = checkedRequest(request.csrPem);
    if (!csr)
        return csr.error();
    EVP_PKEY* subjectKey = X509_REQ_get0_pubkey(csr->get());
    auto ca = loadCaMaterial(certificatePem_, privateKeyPem_);
    if (!ca)
        return ca.error();

    const auto from = request.validFrom.value_or(CertificateClock::now() - std::chrono::minutes(5));
    auto until = leafExpiry(ca->certificate.get(), from + request.validFor);
    if (!until)
        return until.error();
    auto certificate = newCertificate(request.commonName, from, *until);
    if (!certificate)
        return certificate.error();
    X509* cert = certificate->get();
    X509* issuer = ca->certificate.get();
    if (X509_set_issuer_name(cert, X509_get_subject_name(issuer)) != 1
        || X509_set_pubkey(cert, subjectKey) != 1)
        return internal("build a certificate");
    SEALTRAIN_TRY(addExtension(cert, issuer, NID_basic_constraints, "critical,CA:FALSE"));
    // ECDSA keys in TLS 1.3 only sign; keyEncipherment would be for RSA key transport.
    SEALTRAIN_TRY(addExtension(cert, issuer, NID_key_usage, "critical,digitalSignature"));
    SEALTRAIN_TRY(addExtension(cert, issuer, NID_ext_key_usage, purposeUsage(request.purpose)));
    SEALTRAIN_TRY(addExtension(cert, issuer, NID_subject_key_identifier, "hash"));
    SEALTRAIN_TRY(addExtension(cert, issuer, NID_authority_key_identifier, "keyid:always"));
    SEALTRAIN_TRY(addSubjectAltNames(cert, request.subjectAltNames));
    if (X509_sign(cert, ca->key.get(), EVP_sha256()) <= 0)
        return internal("sign a certificate");
    return certificateText(cert);
}

Result<std::string> CertificateAuthority::issueCrl(std::span<const RevokedCertificate> revoked,
                                                   std::uint64_t crlNumber,
                                                   std::chrono::seconds validFor) const
{
    auto ca = loadCaMaterial(certificatePem_, privateKeyPem_);
    if (!ca)
        return ca.error();
    const CrlPtr crl(X509_CRL_new());
    const auto now = CertificateClock::now();
    const TimePtr lastUpdate(ASN1_TIME_set(nullptr, toTimeT(now)));
    const TimePtr nextUpdate(ASN1_TIME_set(nullptr, toTimeT(now + validFor)));
    if (!crl || !lastUpdate || !nextUpdate
        || X509_CRL_set_version(crl.get(), X509_CRL_VERSION_2) != 1
        || X509_CRL_set_issuer_name(crl.get(), X509_get_subject_name(ca->certificate.get())) != 1
        || X509_CRL_set1_lastUpdate(crl.get(), lastUpdate.get()) != 1
        || X509_CRL_set1_nextUpdate(crl.get(), nextUpdate.get()) != 1)
        return internal("build a CRL");
    for (const auto& entry : revoked) {
        const auto serialBytes = fromHex(entry.serialHex);
        if (!serialBytes || serialBytes->empty()) {
            return Error(ErrorCode::InvalidArgument,
                         "A revoked serial number '" + entry.serialHex
                             + "' is not hexadecimal; take it from revocationFor().");
        }
        const BnPtr number(
            BN_bin2bn(serialBytes->data(), static_cast<int>(serialBytes->size()), nullptr));
        const Asn1IntPtr serial(number ? BN_to_ASN1_INTEGER(number.get(), nullptr) : nullptr);
        const TimePtr when(ASN1_TIME_set(nullptr, toTimeT(entry.revokedAt)));
        RevokedPtr item(X509_REVOKED_new());
        if (!serial || !when || !item
            || X509_REVOKED_set_serialNumber(item.get(), serial.get()) != 1
            || X509_REVOKED_set_revocationDate(item.get(), when.get()) != 1
            || X509_CRL_add0_revoked(crl.get(), item.get()) != 1)
            return internal("add a CRL entry");
        static_cast<void>(item.release());  // the CRL owns it now
    }
    const Asn1IntPtr number(ASN1_INTEGER_new());
    if (!number || ASN1_INTEGER_set_uint64(number.get(), crlNumber) != 1
        || X509_CRL_add1_ext_i2d(crl.get(), NID_crl_number, number.get(), 0, X509V3_ADD_DEFAULT)
               != 1)
        return internal("number a CRL");
    X509V3_CTX context;
    X509V3_set_ctx(&context, ca->certificate.get(), nullptr, nullptr, crl.get(), 0);
    const ExtPtr authorityKeyId(
        X509V3_EXT_nconf_nid(nullptr, &context, NID_authority_key_identifier, "keyid:always"));
    if (!authorityKeyId || X509_CRL_add_ext(crl.get(), authorityKeyId.get(), -1) != 1)
        return internal("add the CRL's authority key id");
    if (X509_CRL_sort(crl.get()) != 1 || X509_CRL_sign(crl.get(), ca->key.get(), EVP_sha256()) <= 0)
        return internal("sign a CRL");
    const BioPtr bio(BIO_new(BIO_s_mem()));
    if (!bio || PEM_write_bio_X509_CRL(bio.get(), crl.get()) != 1)
        return internal("write a CRL");
    return bioText(bio.get());
}

Result<RevokedCertificate> revocationFor(std::string_view certificatePem,
                                         CertificateClock::time_point revokedAt)
{
    auto certificate = readCertificate(certificatePem, "certificate to revoke");
    if (!certificate)
        return certificate.error();
    return RevokedCertificate{serialHex(X509_get0_serialNumber(certificate->get())), revokedAt};
}

Result<std::string> certificateFingerprint(std::string_view certificatePem)
{
    auto certificate = readCertificate(certificatePem, "certificate");
    if (!certificate)
        return certificate.error();
    unsigned char* der = nullptr;
    const int length = i2d_X509(certificate->get(), &der);
    if (length <= 0)
        return Error(ErrorCode::Internal, "Cannot encode the certificate as DER; this is a bug.");
    const Sha256Digest digest =
        sha256(std::span<const std::uint8_t>(der, static_cast<std::size_t>(length)));
    OPENSSL_free(der);
    return "sha256:" + toHex(digest);
}

Result<CertificateClock::time_point> certificateExpiry(std::string_view certificatePem)
{
    auto certificate = readCertificate(certificatePem, "certificate");
    if (!certificate)
        return certificate.error();
    return notAfter(certificate->get());
}

}  // namespace sealtrain::crypto
