// The RFC 6962 Merkle tree over the audit log's leaf hashes.
//
// CompactRange is the log's frontier: the roots of the perfect subtrees that cover [0, size),
// one per set bit of size. It appends in O(log n) hashes (amortised O(1)) and gives the root in
// O(log n), with O(log n) memory, so a log of any length can be re-hashed while streaming.
//
// MerkleTree keeps every perfect subtree root (about 2n hashes) so that it can also produce
// inclusion and consistency proofs (RFC 9162 sections 2.1.3.1 and 2.1.4.1) for any earlier size.
#pragma once

#include "sealtrain/audit/merkle_hash.h"
#include "sealtrain/base/result.h"

#include <cstdint>
#include <vector>

namespace sealtrain::audit {

class CompactRange final {
public:
    void append(const Hash& leafHash);
    [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
    // The tree head hash of [0, size): emptyTreeRoot() when nothing was appended.
    [[nodiscard]] Hash root() const;

private:
    std::uint64_t size_ = 0;
    // nodes_[i] is the root of a perfect subtree; larger subtrees first, one per set bit of size_.
    std::vector<Hash> nodes_;
};

class MerkleTree final {
public:
    void append(const Hash& leafHash);
    [[nodiscard]] std::uint64_t size() const noexcept;
    [[nodiscard]] const Hash& leaf(std::uint64_t index) const { return levels_.front()[index]; }

    // The root of the tree of the first `treeSize` leaves; treeSize <= size().
    [[nodiscard]] Result<Hash> rootAt(std::uint64_t treeSize) const;
    // The audit path of leaf `index` in the tree of the first `treeSize` leaves, lowest first.
    [[nodiscard]] Result<std::vector<Hash>> inclusionProof(std::uint64_t index,
                                                           std::uint64_t treeSize) const;
    // The proof that the tree of size `size1` is a prefix of the tree of size `size2`
    // (0 < size1 <= size2 <= size()).
    [[nodiscard]] Result<std::vector<Hash>> consistencyProof(std::uint64_t size1,
                                                             std::uint64_t size2) const;

private:
    // The root of leaves [begin, end), where [begin, end) is a node of an RFC 6962 tree:
    // begin is a multiple of the largest power of two below end - begin, or of end - begin.
    [[nodiscard]] Hash subtreeRoot(std::uint64_t begin, std::uint64_t end) const;
    void appendPath(std::uint64_t index, std::uint64_t begin, std::uint64_t end,
                    std::vector<Hash>& proof) const;
    void appendSubproof(std::uint64_t size1, std::uint64_t begin, std::uint64_t end,
                        bool wholeOldTree, std::vector<Hash>& proof) const;

    // levels_[k][j] is the root of the perfect subtree of leaves [j * 2^k, (j + 1) * 2^k).
    std::vector<std::vector<Hash>> levels_{1};
};

}  // namespace sealtrain::audit
