// RFC 6962 tree hashing over a frontier (CompactRange) and over all perfect subtrees
// (MerkleTree), with the proofs of RFC 9162 sections 2.1.3.1 and 2.1.4.1.
#include "sealtrain/audit/merkle_tree.h"

#include <bit>

namespace sealtrain::audit {
namespace {

// The largest power of two strictly below n (n >= 2): RFC 6962's split point k.
std::uint64_t splitPoint(std::uint64_t n)
{
    return std::bit_floor(n - 1);
}

}  // namespace

void CompactRange::append(const Hash& leafHash)
{
    Hash carry = leafHash;
    for (std::uint64_t bits = size_; (bits & 1U) != 0; bits >>= 1U) {
        carry = nodeHash(nodes_.back(), carry);
        nodes_.pop_back();
    }
    nodes_.push_back(carry);
    ++size_;
}

Hash CompactRange::root() const
{
    if (nodes_.empty())
        return emptyTreeRoot();
    Hash root = nodes_.back();
    for (auto it = nodes_.rbegin() + 1; it != nodes_.rend(); ++it)
        root = nodeHash(*it, root);
    return root;
}

void MerkleTree::append(const Hash& leafHash)
{
    levels_.front().push_back(leafHash);
    for (std::size_t level = 0; levels_[level].size() % 2 == 0; ++level) {
        const auto& nodes = levels_[level];
        Hash parent = nodeHash(nodes[nodes.size() - 2], nodes.back());
        if (levels_.size() == level + 1)
            levels_.emplace_back();
        levels_[level + 1].push_back(parent);
    }
}

std::uint64_t MerkleTree::size() const noexcept
{
    return levels_.front().size();
}

Hash MerkleTree::subtreeRoot(std::uint64_t begin, std::uint64_t end) const
{
    const std::uint64_t count = end - begin;
    if (std::has_single_bit(count)) {
        const auto level = static_cast<std::size_t>(std::countr_zero(count));
        return levels_[level][begin >> level];
    }
    const std::uint64_t split = splitPoint(count);
    return nodeHash(subtreeRoot(begin, begin + split), subtreeRoot(begin + split, end));
}

Result<Hash> MerkleTree::rootAt(std::uint64_t treeSize) const
{
    if (treeSize > size())
        return Error(ErrorCode::InvalidArgument,
                     "The requested tree size is larger than the log; ask for a smaller one.");
    if (treeSize == 0)
        return emptyTreeRoot();
    return subtreeRoot(0, treeSize);
}

void MerkleTree::appendPath(std::uint64_t index, std::uint64_t begin, std::uint64_t end,
                            std::vector<Hash>& proof) const
{
    if (end - begin == 1)
        return;
    const std::uint64_t middle = begin + splitPoint(end - begin);
    if (index < middle) {
        appendPath(index, begin, middle, proof);
        proof.push_back(subtreeRoot(middle, end));
    } else {
        appendPath(index, middle, end, proof);
        proof.push_back(subtreeRoot(begin, middle));
    }
}

Result<std::vector<Hash>> MerkleTree::inclusionProof(std::uint64_t index,
                                                     std::uint64_t treeSize) const
{
    if (treeSize > size() || index >= treeSize)
        return Error(ErrorCode::InvalidArgument,
                     "An inclusion proof needs a leaf inside a tree size the log has reached.");
    std::vector<Hash> proof;
    appendPath(index, 0, treeSize, proof);
    return proof;
}

void MerkleTree::appendSubproof(std::uint64_t size1, std::uint64_t begin, std::uint64_t end,
                                bool wholeOldTree, std::vector<Hash>& proof) const
{
    if (size1 == end) {
        if (!wholeOldTree)
            proof.push_back(subtreeRoot(begin, end));
        return;
    }
    const std::uint64_t middle = begin + splitPoint(end - begin);
    if (size1 <= middle) {
        appendSubproof(size1, begin, middle, wholeOldTree, proof);
        proof.push_back(subtreeRoot(middle, end));
    } else {
        appendSubproof(size1, middle, end, false, proof);
        proof.push_back(subtreeRoot(begin, middle));
    }
}

Result<std::vector<Hash>> MerkleTree::consistencyProof(std::uint64_t size1,
                                                       std::uint64_t size2) const
{
    if (size1 == 0 || size1 > size2 || size2 > size())
        return Error(ErrorCode::InvalidArgument,
                     "A consistency proof needs 0 < size1 <= size2 <= the log's size.");
    std::vector<Hash> proof;
    if (size1 < size2)
        appendSubproof(size1, 0, size2, true, proof);
    return proof;
}

}  // namespace sealtrain::audit
