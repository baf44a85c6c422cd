// A worker's enrolled identity (worker.h): the files `enroll` writes into the worker's folder
// (its configuration, the pinned CA, its TLS key and certificate, its Ed25519 signing key and
// X25519 box key, each private file mode 0600) and `run` reads back. Used within the worker
// library.
#pragma once

#include "sealtrain/api/client.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/sealed_box.h"
#include "sealtrain/crypto/secret_bytes.h"
#include "sealtrain/node/inventory.h"

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace sealtrain::worker {

struct Identity {
    api::Endpoint endpoint;
    api::ClientIdentity tls;
    std::string worker;
    std::string pool;
    crypto::SecretBytes signingKeyPem;
    std::optional<crypto::BoxKeyPair> box;
};

// The identity enrolled into `dir`; NotFound saying to enroll when there is none.
[[nodiscard]] Result<Identity> loadIdentity(const std::filesystem::path& dir);

// What this node has: its GPUs through the CUDA runtime (when there is one), its CPU cores.
[[nodiscard]] node::WorkerInventory probeInventory(bool interconnectEncrypted);

// A line on standard error, "sealtrain-worker: …".
void say(const std::string& line);

// `text` in a file others may read (the job's manifests key, the CA).
[[nodiscard]] Result<void> writePublic(const std::filesystem::path& path, std::string_view text);

}  // namespace sealtrain::worker
