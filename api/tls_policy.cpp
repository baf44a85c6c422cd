// TLS 1.3 only through the process's own OpenSSL configuration (tls_policy.h).
#include "sealtrain/api/tls_policy.h"

#include "sealtrain/base/byte_io.h"

#include <fmt/format.h>
#include <openssl/conf.h>
#include <openssl/crypto.h>

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

}  // namespace sealtrain::api
