// Library versions and CPU crypto extensions, for `sealtrainctl doctor`.
#include "sealtrain/crypto/platform.h"

#include "sealtrain/crypto/random.h"

#include <openssl/crypto.h>
#include <sodium.h>

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace sealtrain::crypto {

std::string openSslVersion()
{
    return OpenSSL_version(OPENSSL_VERSION);
}

std::string libsodiumVersion()
{
    ensureInitialized();
    return sodium_version_string();
}

CpuCryptoFeatures cpuCryptoFeatures()
{
    CpuCryptoFeatures features;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    features.aes = __builtin_cpu_supports("aes") != 0;
    features.pclmul = __builtin_cpu_supports("pclmul") != 0;
    features.vaes = __builtin_cpu_supports("vaes") != 0;
#elif defined(__aarch64__) && defined(__linux__)
    const unsigned long hwcap = getauxval(AT_HWCAP);
    features.aes = (hwcap & HWCAP_AES) != 0;
    features.pclmul = (hwcap & HWCAP_PMULL) != 0;
#endif
    return features;
}

}  // namespace sealtrain::crypto
