// What a Slurm compute node runs of sealtrain-worker (issue #27, item 19; docs/operations/
// workers.md, "Slurm"): `node-key` makes the node's X25519 key once, `open-keys` opens the job's
// keys for its ranks (node/node_keys.h) and writes them to the trainer's pipe.
#pragma once

#include <filesystem>
#include <string>

namespace sealtrain::worker {

// Writes a new node key to `out` (mode 0600, never over an existing file) and prints its public
// half, 64 hex digits, for the worker's --node-keys folder. Returns the exit status.
int makeNodeKey(const std::filesystem::path& out);

// Reads the bundle on standard input, checks that `signerHex` (the worker's Ed25519 public key,
// hex) signed it, opens the box of `node` (empty: $SLURMD_NODENAME) with the key in
// `nodeKeyFile`, and writes the keys to standard output. Returns the exit status; on a failure
// nothing is written and the trainer, reading no keys, stops.
int openKeys(const std::filesystem::path& nodeKeyFile, const std::string& signerHex,
             std::string node);

}  // namespace sealtrain::worker
