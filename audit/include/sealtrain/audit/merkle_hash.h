// RFC 6962 section 2.1 hashing, with its domain separation: leaves are hashed as
// SHA-256(0x00 || entry) and interior nodes as SHA-256(0x01 || left || right), so that a leaf
// can never be passed off as a node.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace sealtrain::audit {

using Hash = std::array<std::uint8_t, 32>;

[[nodiscard]] Hash leafHash(std::span<const std::uint8_t> entry);
[[nodiscard]] Hash nodeHash(const Hash& left, const Hash& right);
// The root of the empty tree: SHA-256 of the empty string.
[[nodiscard]] Hash emptyTreeRoot();

}  // namespace sealtrain::audit
