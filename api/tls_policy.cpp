// TLS 1.3 only through the process's own OpenSSL configuration (tls_policy.h).
#include "sealtrain/api/tls_policy.h"

#include "sealtrain/base/byte_io.h"

#include <fmt/format.h>
#include <openssl/conf.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>

#include <cstdlib>

namespace sealtrain::api {

std::string tls13OnlyOpensslConfig()
{
    return "# Written by Sealtrain (api/tls_policy.cpp): TLS 1.3 only for this process.\n"
           "openssl_conf = sealtrain_openssl\n"
           "\n"
           "[sealtrain_openssl]\n"
           "ssl_conf = sealtrain_ssl\n"
           "\n"
           "[sealtrain_ssl]\n"
           "system_default = sealtrain_tls\n"
           "\n"
           "[sealtrain_tls]\n"
           "MinProtocol = TLSv1.3\n"
           "Protocol = -ALL, TLSv1.3\n";
}

Result<void> requireTls13(const std::filesystem::path& file)
{
    const std::string text = tls13OnlyOpensslConfig();
    SEALTRAIN_TRY(
        writeFileAtomically(file, {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()},
                            AtomicFileSink::Overwrite::Allow));
    if (::setenv("OPENSSL_CONF", file.c_str(), 1) != 0)
        return Error(ErrorCode::Internal,
                     "Cannot set OPENSSL_CONF for the TLS 1.3 policy; this is a bug.");
    // Load it now, so nothing later can load the system's configuration first.
    if (OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, nullptr) != 1)
        return Error(ErrorCode::Internal,
                     fmt::format("OpenSSL refused the TLS policy configuration '{}'; check that "
                                 "the file is readable.",
                                 file.string()));
    return success();
}

std::string lowestAcceptedTlsVersion()
{
    SSL_CTX* context = SSL_CTX_new(TLS_server_method());
    if (context == nullptr)
        return {};
    const std::uint64_t off = SSL_CTX_get_options(context);
    const long minimum = SSL_CTX_get_min_proto_version(context);
    SSL_CTX_free(context);
    struct Version {
        long number;
        std::uint64_t disabled;
        const char* name;
    };
    const Version versions[] = {{TLS1_VERSION, SSL_OP_NO_TLSv1, "TLSv1"},
                                {TLS1_1_VERSION, SSL_OP_NO_TLSv1_1, "TLSv1.1"},
                                {TLS1_2_VERSION, SSL_OP_NO_TLSv1_2, "TLSv1.2"},
                                {TLS1_3_VERSION, SSL_OP_NO_TLSv1_3, "TLSv1.3"}};
    for (const Version& version : versions)
        if ((minimum == 0 || version.number >= minimum) && (off & version.disabled) == 0)
            return version.name;
    return "none";
}

}  // namespace sealtrain::api
