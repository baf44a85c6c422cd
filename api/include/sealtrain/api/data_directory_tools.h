// sealtrain-control's data directory tools, run for a client (issue #50, item 3): creating,
// restoring and checking a data directory are the daemon binary's, so that the CLI and the
// desktop link no core/ and hold no key path. Each call starts `sealtrain-control TOOL`, hands it
// the secrets it needs on its standard input (never in argv, the environment or a file), reads the
// JSON lines it writes (docs/formats/control-tools.md) and returns its result or its one-sentence
// error; its standard error is ours.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::api {

// `init`: exactly one of `passphrase` and `masterKeyFile` seals the new keyring.
struct NewDataDirectoryRequest {
    std::filesystem::path dataDir;
    std::string admin;
    std::optional<crypto::SecretBytes> passphrase;
    std::filesystem::path masterKeyFile;
    crypto::SecretBytes adminPassword;
    std::uint64_t argon2Ops = 0;     // 0: the tool's default
    std::uint64_t argon2MemMiB = 0;  // 0: the tool's default
};

struct NewDataDirectory {
    std::string admin;
    std::string otpauthUri;  // the first admin's TOTP secret: shown once, then forgotten
    std::string caFingerprint;
};

// `restore`: the backup's passphrase, or its master key file.
struct RestoreSettings {
    std::filesystem::path archive;
    std::filesystem::path dataDir;
    std::filesystem::path witness;  // empty: none given
    bool withoutWitness = false;
    bool acceptLoss = false;
    std::filesystem::path objectsFrom;  // empty: none
    std::filesystem::path key;          // the audit public key to require; empty: the archive's own
    std::optional<crypto::SecretBytes> passphrase;
    std::filesystem::path masterKeyFile;
};

struct RestoredDirectory {
    std::string created;  // when the backup was taken (UTC)
    std::string version;  // the release that took it
    std::uint64_t head = 0;
    std::uint64_t restoreEntry = 0;  // the platform.restore entry's sequence number
    std::uint64_t lostEntries = 0;
    std::vector<std::string> detachedWitnesses;
    std::uint64_t files = 0;
    std::uint64_t referenced = 0;
};

// What `verify-backup` found in a verified archive's signed manifest.
struct BackupFacts {
    std::string created;
    std::string version;
    std::uint64_t head = 0;
    std::uint64_t files = 0;
    std::uint64_t referenced = 0;
    std::uint64_t referencedBytes = 0;
};

class DataDirectoryTools final {
public:
    // `executable`: sealtrain-control.
    explicit DataDirectoryTools(std::filesystem::path executable);

    [[nodiscard]] Result<NewDataDirectory> init(const NewDataDirectoryRequest& request) const;
    // `progress` gets one line per step of the restore.
    [[nodiscard]] Result<RestoredDirectory>
    restore(const RestoreSettings& settings,
            const std::function<void(const std::string&)>& progress) const;
    [[nodiscard]] Result<BackupFacts> verifyBackup(const std::filesystem::path& archive,
                                                   const std::filesystem::path& key) const;
    // The data directory's platform CA fingerprint (`describe`); NotFound for a folder that is no
    // data directory.
    [[nodiscard]] Result<std::string> caFingerprint(const std::filesystem::path& dataDir) const;

private:
    std::filesystem::path executable_;
};

// The libraries one of Sealtrain's programs runs on, by name ("sqlcipher", "mpi", …): its
// `versions` tool (sealtrain-control versions, sealtrain-train versions), for `doctor`.
[[nodiscard]] Result<std::map<std::string, std::string>>
programVersions(const std::filesystem::path& executable);

}  // namespace sealtrain::api
