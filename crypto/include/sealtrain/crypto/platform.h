// Facts about the crypto libraries and the CPU that `sealtrainctl doctor` reports.
#pragma once

#include <string>

namespace sealtrain::crypto {

[[nodiscard]] std::string openSslVersion();    // e.g. "OpenSSL 3.0.19 ..."
[[nodiscard]] std::string libsodiumVersion();  // e.g. "1.0.18"

struct CpuCryptoFeatures {
    bool aes = false;     // AES-NI (x86) or the ARMv8 AES extension
    bool pclmul = false;  // carry-less multiply, which GCM's GHASH needs to be fast
    bool vaes = false;    // vector AES (AVX-512/AVX2 wide AES), faster still
};
[[nodiscard]] CpuCryptoFeatures cpuCryptoFeatures();

}  // namespace sealtrain::crypto
