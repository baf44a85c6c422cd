// Wiping memory that held secret or plaintext bytes, in a way the compiler may not remove.
#pragma once

#include <cstdint>
#include <span>

namespace sealtrain {

// Overwrites `bytes` with zeros (explicit_bzero: never optimised away).
void wipeMemory(std::span<std::uint8_t> bytes) noexcept;

}  // namespace sealtrain
