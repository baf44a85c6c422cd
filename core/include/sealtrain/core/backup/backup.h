// Backups of a data directory and their restore (docs/operations/backup.md; the archive's bytes
// in docs/formats/backup.md). sealtrain-control takes a backup while it serves: its audit head
// signed, the database copied through SQLite's online backup API (still encrypted), and the
// keyring, the sealed keys, the witness and the sealed objects put in one archive, signed with
// the audit log's key and sealed under the `database` KEK. A restore builds a new data directory
// from it (the passphrase or master key file opens it), checks every file against the signed
// index, keeps the witness rule (a newer witness head is refused unless the loss is accepted)
// and appends, as the restored log's first entry after the backup's head, that it was restored.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/crypto/signing.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::core {

inline constexpr std::string_view kBackupFormat = "sealtrain-backup/v1";
// The DSSE payload type of the archive's signed manifest.
inline constexpr std::string_view kBackupPayloadType = "application/vnd.sealtrain.backup+json";
// Dataset, checkpoint and model files bigger than this are referenced by digest, not copied.
inline constexpr std::uint64_t kDefaultReferenceOver = std::uint64_t{256} << 20U;

struct BackupOptions {
    std::uint64_t referenceOver = kDefaultReferenceOver;
    // Another backup is being taken or sent: the call is refused (ResourceExhausted) once its
    // caller is known, and audited as failed.
    bool busy = false;
};

// A backup just written. The archive lies in `folder`, a private folder of the data directory
// that the caller removes once it has sent the archive on (a folder left by a crash is removed
// when the data directory next opens).
struct BackupMade {
    std::filesystem::path folder;
    std::filesystem::path archive;
    std::uint64_t head = 0;  // the audit entries the backup holds
    std::string sha256;      // of the archive, hex
    std::uint64_t bytes = 0;
    std::uint64_t files = 0;
    std::uint64_t referenced = 0;  // files named by digest only
    std::uint64_t referencedBytes = 0;
};

// The moment a backup holds, taken while nothing else changes (prepareBackup): the signed head,
// copies of the database and the small files in the backup's folder, and the sealed objects as
// they were listed then (written later, without holding the control plane).
struct PreparedBackup {
    BackupOptions options;
    std::filesystem::path folder;  // DATA/.backup-<random>, mode 0700
    std::uint64_t head = 0;
    std::string headNote;
    std::string headRoot;  // base64
    std::string created;
    std::vector<std::string> copied;  // top-level files copied into `folder`
    struct Object {
        std::string path;  // relative to the data directory
        std::uint64_t size = 0;
    };
    std::vector<Object> objects;
};

// A backup in three steps, so that the daemon holds its other calls only for the first and last:
//   prepareBackup  platform.backup for the caller behind `session` (a refusal is audited and
//                  nothing is written), then the moment: a head signed over every entry, the
//                  database copied through SQLite's backup API, the small files copied, the
//                  objects listed. Run it with no other call of the control plane in progress
//                  (the daemon's lock). A failure after the caller was admitted is audited.
//   writeBackup    the payload and the archive from that moment, with the control plane serving
//                  meanwhile; the objects must not be re-wrapped until it returns (the daemon
//                  holds keyring changes back), and one that changed size since it was listed
//                  fails the backup.
//   recordBackup   the entry: platform.backup with the head and the archive's digest, or the
//                  failure of writeBackup as failed (and the folder removed). Under the lock.
[[nodiscard]] Result<PreparedBackup> prepareBackup(DataDirectory& directory,
                                                   const std::string& session,
                                                   const BackupOptions& options = {});
[[nodiscard]] Result<BackupMade> writeBackup(const DataDirectory& directory,
                                             const PreparedBackup& prepared);
[[nodiscard]] Result<BackupMade> recordBackup(DataDirectory& directory, const std::string& session,
                                              const PreparedBackup& prepared,
                                              Result<BackupMade> written);
// The three in a row, for a caller that holds the control plane throughout (tests, tools).
[[nodiscard]] Result<BackupMade> takeBackup(DataDirectory& directory, const std::string& session,
                                            const BackupOptions& options = {});

// What the archive's signed manifest says.
struct BackupManifest {
    std::string created;  // UTC, "2026-12-05T10:00:00Z"
    std::string version;  // the Sealtrain release that wrote it
    std::uint64_t head = 0;
    std::string headRoot;  // base64, as in the head note
    std::string headNote;  // the signed tree head over the backup's entries
    std::string caSha256;  // of the platform CA certificate, hex
    std::uint64_t files = 0;
    std::uint64_t referenced = 0;
    std::uint64_t referencedBytes = 0;
};

// Offline, without any key but the platform's public one: the archive's members, their digests
// against the signed manifest and the manifest's signature under `trusted` (signing.pub.pem).
[[nodiscard]] Result<BackupManifest> verifyBackup(const std::filesystem::path& archive,
                                                  const crypto::PublicKey& trusted);

struct RestoreRequest {
    std::filesystem::path archive;
    std::filesystem::path target;  // a new data directory: refused when it exists and is not empty
    KeyringUnlock unlock;          // the backup's passphrase or master key file
    // The newest copy of the witness file there is (the old machine's, or a copy kept apart), or
    // withoutWitness when none survives; one of the two must be said, and the entry records it.
    std::optional<std::filesystem::path> witness;
    bool withoutWitness = false;
    // Restore even though the witness recorded a newer head: the entries after the backup are
    // lost, and the restore entry says how many.
    bool acceptLoss = false;
    // Where the files the backup referenced by digest are, at the same relative paths (the old
    // data directory, or a copy of its datasets/, runs/, jobs/ and models/).
    std::optional<std::filesystem::path> objectsFrom;
    // The platform's audit key to check the archive against; empty: the archive's own
    // signing.pub.pem (then the signature proves integrity, not origin).
    std::optional<crypto::PublicKey> trustedKey;
    std::string operatorName;                          // the operating-system account that restores
    std::function<void(const std::string&)> progress;  // one line per step; may be empty
};

struct RestoreDone {
    BackupManifest manifest;
    std::uint64_t restoreEntry = 0;  // the sequence number of the platform.restore entry
    std::optional<std::uint64_t> witnessHead;
    std::uint64_t lostEntries = 0;
    // The witnesses outside the directory the backup's database recorded, forgotten after the
    // restore's entry (audit.witness_detach): the restored control plane's --audit-witness
    // attaches them again (data-directory.md, "Witnesses").
    std::vector<std::string> detachedWitnesses;
    std::uint64_t files = 0;
    std::uint64_t referenced = 0;
};

// Builds request.target from the archive, in a temporary sibling folder renamed into place at
// the end: a refused or failed restore leaves nothing behind.
[[nodiscard]] Result<RestoreDone> restoreBackup(const RestoreRequest& request);

}  // namespace sealtrain::core
