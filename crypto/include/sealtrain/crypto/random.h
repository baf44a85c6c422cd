// The CSPRNG: libsodium's randombytes (getrandom(2) on Linux).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sealtrain::crypto {

// Makes libsodium ready; every crypto entry point calls it, so callers need not.
// Aborts the process if the library can not initialise (no safe way to go on without a CSPRNG).
void ensureInitialized();

void fillRandom(std::span<std::uint8_t> out);
[[nodiscard]] std::vector<std::uint8_t> randomBytes(std::size_t size);
// Uniform in [0, upperBound).
[[nodiscard]] std::uint32_t randomUniform(std::uint32_t upperBound);

}  // namespace sealtrain::crypto
