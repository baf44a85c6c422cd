// A job's keys on their way to the ranks of a cluster (issue #27, item 19; the format is
// docs/formats/node-keys.md). Slurm forwards a job's standard input between nodes in clear, so
// what travels there is a bundle in which the trainer keys are sealed to each node's own X25519
// key (a sealed box per node), the whole signed by the worker's enrolled Ed25519 key. On each
// node `sealtrain-worker open-keys` checks the signature, opens its own node's box with the node
// key, and hands the keys to the trainer on that node over a pipe.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/sealed_box.h"
#include "sealtrain/crypto/secret_bytes.h"
#include "sealtrain/crypto/signing.h"

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::node {

// The most a bundle may hold (the reader stops there): a few thousand nodes of a large dataset.
inline constexpr std::size_t kMaxNodeKeysBundle = std::size_t{64} << 20U;

struct NodeKey {
    std::string node;  // as Slurm names it (SLURMD_NODENAME): [A-Za-z0-9._-], 1 to 64
    crypto::BoxPublicKey publicKey{};
};

// Whether `name` may name a node in a bundle.
[[nodiscard]] bool isValidNodeName(std::string_view name);

// The node keys an operator collected in `folder`: one `NODE.pub` per node, holding the 64 hex
// digits `sealtrain-worker node-key` printed. InvalidArgument naming the file for anything else;
// NotFound when the folder holds none.
[[nodiscard]] Result<std::vector<NodeKey>> readNodeKeys(const std::filesystem::path& folder);

// The bundle: `keys` sealed to every node of `nodes`, signed with `signer`.
[[nodiscard]] Result<std::string> sealNodeKeys(std::span<const NodeKey> nodes,
                                               const crypto::SecretBytes& keys,
                                               const crypto::SigningKey& signer);

// The keys sealed to `node` in `bundle`, when `signer` signed the bundle and `nodeKey` opens the
// box: Integrity when the signature does not verify (altered, truncated or another signer's),
// NotFound when the bundle has no box for this node, Unauthenticated when the box does not open.
[[nodiscard]] Result<crypto::SecretBytes> openNodeKeys(std::string_view bundle,
                                                       std::string_view node,
                                                       const crypto::BoxKeyPair& nodeKey,
                                                       const crypto::PublicKey& signer);

}  // namespace sealtrain::node
