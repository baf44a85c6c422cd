// The platform CA for gRPC mutual TLS: a self-signed ECDSA P-256 root that issues worker and
// operator certificates from CSRs, publishes revocations as CRLs, and verifies chains with time,
// purpose and revocation checks. OpenSSL 3's X.509 API behind PEM strings; private keys are PEM
// held in SecretBytes. docs/decisions/0003-platform-ca.md says why P-256 and what is checked.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sealtrain::crypto {

using CertificateClock = std::chrono::system_clock;

enum class CertificatePurpose {
    Server,           // extendedKeyUsage serverAuth (the control plane)
    Client,           // clientAuth (workers, operators)
    ServerAndClient,  // both (a node that serves and calls)
    CodeSigning,      // codeSigning (the key that signs exported models, never TLS)
};

struct SubjectAltNames {
    std::vector<std::string> dns;  // host names, e.g. "worker-3.example"
    std::vector<std::string> ip;   // IPv4 or IPv6 text, e.g. "10.0.0.3"
    std::vector<std::string> uri;  // e.g. "spiffe://sealtrain/worker/3"
};

// A new P-256 key and a CSR for it, signed with it: what a worker sends at enrollment.
struct KeyAndCsr {
    SecretBytes privateKeyPem;  // PKCS#8 "PRIVATE KEY"
    std::string csrPem;         // "CERTIFICATE REQUEST"
};
[[nodiscard]] Result<KeyAndCsr> makeKeyAndCsr(std::string_view commonName);

// Whether `csrPem` is a CSR the CA would issue for: it parses, its signature verifies under its
// own key, and that key is P-256 (Unsupported otherwise). For a sign-in, checked before the
// password and the TOTP code are spent on a request that could never get a certificate.
[[nodiscard]] Result<void> checkCertificateRequest(std::string_view csrPem);

// What the CA puts in a certificate. Identity comes from here, never from the CSR: the CSR
// contributes only its public key (and must prove possession of it with its signature).
struct IssueRequest {
    std::string csrPem;
    std::string commonName;
    SubjectAltNames subjectAltNames;
    CertificatePurpose purpose = CertificatePurpose::Client;
    std::chrono::seconds validFor{std::chrono::hours(24 * 30)};
    // Defaults to five minutes ago, allowing for clock skew between machines.
    std::optional<CertificateClock::time_point> validFrom;
};

struct RevokedCertificate {
    std::string serialHex;  // lowercase hex of the serial number
    CertificateClock::time_point revokedAt;
};

class CertificateAuthority final {
public:
    // A new self-signed root with a fresh P-256 key, valid from now for `validFor`.
    [[nodiscard]] static Result<CertificateAuthority> create(std::string_view commonName,
                                                             std::chrono::seconds validFor);
    // A CA whose certificate and PKCS#8 private key PEM were stored earlier; they must match.
    [[nodiscard]] static Result<CertificateAuthority> load(std::string_view certificatePem,
                                                           const SecretBytes& privateKeyPem);

    CertificateAuthority(CertificateAuthority&&) noexcept = default;
    CertificateAuthority& operator=(CertificateAuthority&&) noexcept = default;
    CertificateAuthority(const CertificateAuthority&) = delete;
    CertificateAuthority& operator=(const CertificateAuthority&) = delete;
    ~CertificateAuthority() = default;

    [[nodiscard]] const std::string& certificatePem() const { return certificatePem_; }
    // For sealing at rest only; never logged.
    [[nodiscard]] const SecretBytes& privateKeyPem() const { return privateKeyPem_; }

    // The signed certificate (PEM) with a random 128-bit serial. InvalidArgument for a CSR
    // that does not parse, whose signature does not verify, or whose key is not P-256, and
    // when the CA's own certificate has expired. A leaf never outlives the CA: its notAfter is
    // capped at the CA's.
    [[nodiscard]] Result<std::string> issue(const IssueRequest& request) const;

    // A CRL (PEM, v2, with a CRL number) listing `revoked`, valid for `validFor` from now.
    // The caller keeps the list of revocations; each new CRL replaces the previous one.
    [[nodiscard]] Result<std::string> issueCrl(std::span<const RevokedCertificate> revoked,
                                               std::uint64_t crlNumber,
                                               std::chrono::seconds validFor) const;

private:
    CertificateAuthority(std::string certificatePem, SecretBytes privateKeyPem)
        : certificatePem_(std::move(certificatePem))
        , privateKeyPem_(std::move(privateKeyPem))
    {
    }

    std::string certificatePem_;
    SecretBytes privateKeyPem_;
};

// The serial number of a certificate, to revoke it.
[[nodiscard]] Result<RevokedCertificate> revocationFor(std::string_view certificatePem,
                                                       CertificateClock::time_point revokedAt);

// "sha256:" and the lowercase hex SHA-256 of the certificate's DER encoding (what `openssl x509
// -noout -fingerprint -sha256` prints, without the colons): how an administrator tells a client
// which CA to trust.
[[nodiscard]] Result<std::string> certificateFingerprint(std::string_view certificatePem);

// When a certificate stops being valid (its notAfter), read without checking who issued it:
// for saying how long a worker's or the CA's certificate has left, never for trusting one.
[[nodiscard]] Result<CertificateClock::time_point>
certificateExpiry(std::string_view certificatePem);

struct VerifyOptions {
    CertificatePurpose purpose = CertificatePurpose::Client;
    // The moment to check validity at; now when unset.
    std::optional<CertificateClock::time_point> at;
    // The CA's current CRL. Required unless requireCrl is false (only while bootstrapping,
    // before the CA has published one).
    std::string crlPem;
    bool requireCrl = true;
};

struct CertificateInfo {
    std::string commonName;
    std::string serialHex;
    CertificateClock::time_point notAfter;
    SubjectAltNames subjectAltNames;
};

// Verifies `chainPem` (the leaf first, then any intermediates) up to `caCertificatePem` as the
// only trust anchor. Unauthenticated with a sentence naming the reason (another CA, expired,
// not yet valid, revoked, wrong purpose, bad signature) when it does not verify.
[[nodiscard]] Result<CertificateInfo> verifyCertificate(std::string_view chainPem,
                                                        std::string_view caCertificatePem,
                                                        const VerifyOptions& options);

}  // namespace sealtrain::crypto
