// Library versions and CPU crypto extensions, for `sealtrainctl doctor`.
#include "sealtrain/crypto/platform.h"

#include "sealtrain/crypto/random.h"

#include <openssl/crypto.h>
#include <sodium.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
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
    unsigned int eax = 0;
    unsigned int ebx = 0;
    unsigned int ecx = 0;
    unsigned int edx = 0;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0) {
        features.aes = (ecx & bit_AES) != 0;
        features.pclmul = (ecx & bit_PCLMUL) != 0;
    }
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0)
        features.vaes = (ecx & bit_VAES) != 0;
#elif defined(__aarch64__) && defined(__linux__)
    const unsigned long hwcap = getauxval(AT_HWCAP);
    features.aes = (hwcap & HWCAP_AES) != 0;
    features.pclmul = (hwcap & HWCAP_PMULL) != 0;
#endif
    return features;
}

}  // namespace sealtrain::crypto
