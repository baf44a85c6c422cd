// RFC 9162 proof verification, written from the RFC's step-by-step algorithms: each proof node
// is hashed in on the side that the leaf's (or old tree's) position at that level says.
#include "sealtrain/audit/proof.h"

#include "sealtrain/base/encoding.h"

#include <algorithm>
#include <bit>

namespace sealtrain::audit {
namespace {

constexpr bool isLowBitSet(std::uint64_t value)
{
    return (value & 1U) != 0;
}

Error tooLong(const char* what)
{
    return Error(ErrorCode::Integrity,
                 std::string("The ") + what + " proof has more nodes than the tree sizes allow.");
}

Error tooShort(const char* what)
{
    return Error(ErrorCode::Integrity,
                 std::string("The ") + what + " proof has fewer nodes than the tree sizes need.");
}

}  // namespace

Result<Hash> hashFromBase64(std::string_view text)
{
    const auto bytes = fromBase64(text);
    Hash hash{};
    if (!bytes || bytes->size() != hash.size())
        return Error(ErrorCode::InvalidArgument,
                     "A hash is not 32 bytes of standard base64; the data is malformed.");
    std::copy(bytes->begin(), bytes->end(), hash.begin());
    return hash;
}

Result<Hash> rootFromInclusionProof(std::uint64_t index, std::uint64_t treeSize,
                                    const Hash& leafHash, std::span<const Hash> proof)
{
    if (index >= treeSize)
        return Error(ErrorCode::InvalidArgument,
                     "The leaf index is not inside the tree; check the index and tree size.");
    std::uint64_t position = index;
    std::uint64_t last = treeSize - 1;
    Hash result = leafHash;
    for (const Hash& node : proof) {
        if (last == 0)
            return tooLong("inclusion");
        if (isLowBitSet(position) || position == last) {
            result = nodeHash(node, result);
            while (!isLowBitSet(position) && position != 0) {
                position >>= 1U;
                last >>= 1U;
            }
        } else {
            result = nodeHash(result, node);
        }
        position >>= 1U;
        last >>= 1U;
    }
    if (last != 0)
        return tooShort("inclusion");
    return result;
}

Result<void> verifyInclusion(std::uint64_t index, std::uint64_t treeSize, const Hash& leafHash,
                             std::span<const Hash> proof, const Hash& root)
{
    auto computed = rootFromInclusionProof(index, treeSize, leafHash, proof);
    if (!computed)
        return computed.error();
    if (*computed != root)
        return Error(ErrorCode::Integrity,
                     "The inclusion proof leads to a different root than the tree head's.");
    return success();
}

Result<void> verifySubtreeInclusion(std::uint64_t index, std::uint64_t start, std::uint64_t end,
                                    const Hash& leafHash, std::span<const Hash> proof,
                                    const Hash& root)
{
    constexpr std::uint64_t kLargestWidth = std::uint64_t{1} << 63U;
    if (end <= start || end - start > kLargestWidth || start % std::bit_ceil(end - start) != 0)
        return Error(ErrorCode::InvalidArgument,
                     "The range [start, end) is not a subtree of any RFC 6962 tree.");
    if (index < start || index >= end)
        return Error(ErrorCode::InvalidArgument, "The leaf index is outside the subtree.");
    return verifyInclusion(index - start, end - start, leafHash, proof, root);
}

Result<void> verifyConsistency(std::uint64_t size1, std::uint64_t size2,
                               std::span<const Hash> proof, const Hash& root1, const Hash& root2)
{
    if (size1 == 0)
        return Error(ErrorCode::InvalidArgument,
                     "A consistency proof from the empty tree proves nothing; start at size 1.");
    if (size1 > size2)
        return Error(ErrorCode::InvalidArgument,
                     "The older tree head is larger than the newer one; the log went backwards.");
    if (size1 == size2) {
        if (!proof.empty())
            return tooLong("consistency");
        if (root1 != root2)
            return Error(ErrorCode::Integrity,
                         "Two tree heads of the same size have different roots.");
        return success();
    }
    if (proof.empty())
        return tooShort("consistency");

    // When the old tree is a perfect subtree its root starts the chain; else the proof does.
    const bool oldTreeIsPerfect = std::has_single_bit(size1);
    const Hash& seed = oldTreeIsPerfect ? root1 : proof.front();
    const std::span<const Hash> rest = oldTreeIsPerfect ? proof : proof.subspan(1);

    std::uint64_t position = size1 - 1;
    std::uint64_t last = size2 - 1;
    while (isLowBitSet(position)) {
        position >>= 1U;
        last >>= 1U;
    }
    Hash oldRoot = seed;
    Hash newRoot = seed;
    for (const Hash& node : rest) {
        if (last == 0)
            return tooLong("consistency");
        if (isLowBitSet(position) || position == last) {
            oldRoot = nodeHash(node, oldRoot);
            newRoot = nodeHash(node, newRoot);
            while (!isLowBitSet(position) && position != 0) {
                position >>= 1U;
                last >>= 1U;
            }
        } else {
            newRoot = nodeHash(newRoot, node);
        }
        position >>= 1U;
        last >>= 1U;
    }
    if (last != 0)
        return tooShort("consistency");
    if (oldRoot != root1)
        return Error(ErrorCode::Integrity,
                     "The consistency proof does not lead to the older tree head's root.");
    if (newRoot != root2)
        return Error(ErrorCode::Integrity,
                     "The consistency proof does not lead to the newer tree head's root.");
    return success();
}

}  // namespace sealtrain::audit
