// Verification of RFC 9162 inclusion and consistency proofs (sections 2.1.3.2 and 2.1.4.2),
// and of the subtree inclusion proofs of transparency-dev/merkle. Each returns success or an
// Integrity error (InvalidArgument for sizes or indices that can not describe a proof).
#pragma once

#include "sealtrain/audit/merkle_hash.h"
#include "sealtrain/base/result.h"

#include <cstdint>
#include <span>
#include <string_view>

namespace sealtrain::audit {

// A hash written as standard padded base64 (as in checkpoints and bundles); refused unless it
// decodes to exactly 32 bytes.
[[nodiscard]] Result<Hash> hashFromBase64(std::string_view text);

// The root that `proof` leads to from leaf `index` (hash `leafHash`) in a tree of `treeSize`.
[[nodiscard]] Result<Hash> rootFromInclusionProof(std::uint64_t index, std::uint64_t treeSize,
                                                  const Hash& leafHash,
                                                  std::span<const Hash> proof);

[[nodiscard]] Result<void> verifyInclusion(std::uint64_t index, std::uint64_t treeSize,
                                           const Hash& leafHash, std::span<const Hash> proof,
                                           const Hash& root);

// Leaf `index` in the subtree of leaves [start, end), which must be a node of some RFC 6962
// tree: start a multiple of the smallest power of two at least end - start.
[[nodiscard]] Result<void> verifySubtreeInclusion(std::uint64_t index, std::uint64_t start,
                                                  std::uint64_t end, const Hash& leafHash,
                                                  std::span<const Hash> proof, const Hash& root);

// The tree of `size1` with `root1` is a prefix of the tree of `size2` with `root2`.
// Requires 0 < size1 <= size2: nothing can be proven about the empty tree.
[[nodiscard]] Result<void> verifyConsistency(std::uint64_t size1, std::uint64_t size2,
                                             std::span<const Hash> proof, const Hash& root1,
                                             const Hash& root2);

}  // namespace sealtrain::audit
