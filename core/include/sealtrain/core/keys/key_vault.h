// What the key release needs of the data directory (issue #50: keys/ sits below data_directory/
// in core/'s order, so it is handed these rather than the directory): the folder, the keyring,
// the two signing keys it hands out or checks with, and the clock. DataDirectory::keyVault()
// makes one; it refers into the open data directory, which must outlive it.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/kek.h"

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

namespace sealtrain::audit {
class Clock;
}  // namespace sealtrain::audit

namespace sealtrain::crypto {
class Keyring;
class SigningKey;
}  // namespace sealtrain::crypto

namespace sealtrain::core {

struct KeyVault {
    std::filesystem::path root;  // the data directory
    crypto::Keyring& keyring;
    const crypto::SigningKey& manifestsKey;    // signs dataset manifests
    const crypto::SigningKey& checkpointsKey;  // signs the control plane's own checkpoints
    const audit::Clock& clock;

    // Where the dataset folders live (datasets/).
    [[nodiscard]] std::filesystem::path datasetsRoot() const;
};

// Where job `job`'s files are kept (jobs/<id>/: its key, its checkpoints).
[[nodiscard]] std::filesystem::path jobFolder(const KeyVault& vault, std::int64_t job);
// The job's own checkpoint KEK ("job-<id>"): made at its first release, kept sealed under the
// platform's `checkpoints` KEK (jobs/<id>/job.key.sealed). A worker gets this key, never the
// platform's, so it can read back its job's checkpoints and no other; the checkpoints that come
// back are opened with it.
[[nodiscard]] Result<crypto::Kek> jobKey(const KeyVault& vault, std::int64_t job);

// Unwraps only with the `datasets` KEK of `keyring`: a shard sealed under another key is refused.
[[nodiscard]] crypto::KekResolver datasetsResolver(const crypto::Keyring& keyring);
// Every version of the KEK `id` in `keyring` that can still unwrap (retired ones can not), for
// the keys handed to a trainer.
[[nodiscard]] std::vector<const crypto::Kek*> usableKeks(const crypto::Keyring& keyring,
                                                         std::string_view id);

}  // namespace sealtrain::core
