// The CA's helpers that its verifier (certificate_verify.cpp) shares with
// certificate_authority.cpp. Internal to crypto/.
#pragma once

#include "openssl_handles.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/certificate_authority.h"

#include <ctime>
#include <string>
#include <string_view>

namespace sealtrain::crypto::ca_internal {

// OpenSSL failed at `what`: an Internal error in one sentence.
[[nodiscard]] Error internal(const char* what);
[[nodiscard]] std::time_t toTimeT(CertificateClock::time_point when);
[[nodiscard]] Result<openssl::X509Ptr> readCertificate(BIO* bio, std::string_view what);
[[nodiscard]] std::string serialHex(const ASN1_INTEGER* serial);
[[nodiscard]] SubjectAltNames readSubjectAltNames(X509* certificate);
// The platform CA's certificate, checked to be one (a CA, P-256).
[[nodiscard]] Result<openssl::X509Ptr> loadCaCertificate(std::string_view pem);
[[nodiscard]] CertificateClock::time_point notAfter(const X509* certificate);

}  // namespace sealtrain::crypto::ca_internal
