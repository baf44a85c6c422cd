// Datasets in the control plane (issue #6): who may import, list, read and grant sealed
// datasets, versions and lineage by name, the platform's signature over each manifest, and the
// read-key release check. A dataset's files are a folder under the data directory's datasets/
// named by the hex digits of its id (docs/formats/dataset.md); the database holds its name,
// version, lineage, creator and who may read it (migration 3, docs/operations/datasets.md). The
// bytes themselves are sealtrain_dataset's. Every call goes through the audited transaction.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/store/list_page.h"
#include "sealtrain/crypto/kek.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/dataset/import.h"
#include "sealtrain/dataset/tokenizer.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace sealtrain::core {

struct DatasetInfo {
    std::string id;  // "sha256:" + 64 hex digits: the manifest's hash
    std::string name;
    std::int64_t version = 0;  // 1, 2, ... per name, in import order
    std::string parent;        // the previous version's id; empty for version 1
    std::string classification;
    std::string creator;
    std::uint64_t records = 0;
    std::uint64_t tokens = 0;
    std::string signer;                // key id of the platform key that signed the manifest
    std::int64_t created = 0;          // Unix seconds
    std::vector<std::string> readers;  // users with a read grant (filled by showDataset only)
};

// Datasets are listed by name, each name's newest version first (store/list_page.h).
[[nodiscard]] inline std::string pageKey(const DatasetInfo& dataset)
{
    return dataset.name + '\n'
           + orderedNumber(static_cast<std::uint64_t>(INT64_MAX - dataset.version));
}

struct DatasetImportRequest {
    std::string name;                    // [a-z0-9_-]{1,64}; a new version when it exists
    std::filesystem::path datasetsRoot;  // the folder that holds the dataset folders
    // Inputs, format, policies, tokenizer-independent settings. The control plane sets name,
    // creator (the caller), created_at, parent (the latest version of `name`) and outputRoot.
    dataset::ImportOptions options;
};

struct DatasetImported {
    DatasetInfo info;
    std::filesystem::path folder;
    dataset::ImportReport report;
};

// `datasetsRoot`/<64 hex digits of `id`>; `id` is "sha256:…".
[[nodiscard]] std::filesystem::path datasetFolder(const std::filesystem::path& datasetsRoot,
                                                  const std::string& id);

class AuditedTransactions;
struct Caller;
class Database;

// The dataset `reference` names, and whether the user `userId` holds a read grant on it.
struct DatasetReaderView {
    DatasetInfo dataset;
    bool granted = false;
};

// Reads only, for a check inside another audited call (a job's vetting); NotFound or
// InvalidArgument, in one sentence, for a reference that names no dataset.
[[nodiscard]] Result<DatasetReaderView>
datasetForReader(const Database& database, const std::string& reference, std::int64_t userId);

// A dataset reference is its id ("sha256:…"), NAME (the latest version) or NAME@VERSION.
class Datasets final {
public:
    // `gate` must outlive this object.
    explicit Datasets(AuditedTransactions& gate);

    // The import's permission and name, checked when an upload starts, before its bytes are
    // held (issue #27): a refusal is audited (dataset.import) and nothing is received. The
    // import itself checks both again.
    [[nodiscard]] Result<void> admitUpload(const std::string& session, const std::string& name);
    // An upload turned away before its header because every upload slot is taken: audited as a
    // refused dataset.import with the caller as its actor and `reason` (issue #27: no refusal
    // goes unaudited). Always an error: ResourceExhausted with `reason`, or the session's own.
    [[nodiscard]] Result<void> refuseBusyUpload(const std::string& session,
                                                const std::string& reason);
    // An upload turned away after its header was admitted (a file name that is not a plain
    // relative path, a stream cut short, over --max-import-bytes, stalled, files that are not a
    // dataset): `why`, audited as a failed dataset.import of `name` with the caller as its actor
    // (issue #54), or the session's own refusal. Never a success.
    [[nodiscard]] Error refuseUpload(const std::string& session, const std::string& name,
                                     const Error& why);
    // dataset.import. Checks the permission first (a refusal is audited and touches no file),
    // imports into request.datasetsRoot (dataset/import.h: a failed import leaves nothing),
    // signs the manifest with `platformKey` (manifest.sig beside it) and registers the dataset
    // as the next version of its name, linked to the previous one, with a read grant for its
    // creator; the row and its audit entry commit together, and when they can not the folder is
    // removed. A failed import is audited too. AlreadyExists when the sources and settings are
    // those of the latest version.
    [[nodiscard]] Result<DatasetImported> importDataset(const std::string& session,
                                                        const DatasetImportRequest& request,
                                                        dataset::Tokenizer& tokenizer,
                                                        const crypto::Kek& kek,
                                                        const crypto::SigningKey& platformKey);
    // dataset.read. Stewards (dataset.import or dataset.grant) see every dataset; anyone else
    // only those they hold a read grant on. Newest first within a name.
    // One page of the datasets the caller may read, by name and newest version first (audited
    // as dataset.list with detail `after`).
    [[nodiscard]] Result<KeyedPaged<DatasetInfo>> list(const std::string& session,
                                                       const KeyedPage& page = {});
    [[nodiscard]] Result<DatasetInfo> show(const std::string& session,
                                           const std::string& reference);
    // dataset.grant: lets `user` read one dataset (one version); audited.
    [[nodiscard]] Result<void> grantRead(const std::string& session, const std::string& reference,
                                         const std::string& user);
    [[nodiscard]] Result<void> revokeRead(const std::string& session, const std::string& reference,
                                          const std::string& user);
    // The read-key release check: whoever hands the datasets KEK to a reader (the trainer
    // launcher, `dataset verify`) calls this first and hands it over only on success. Needs
    // dataset.read and a read grant on the dataset; audited either way, with `purpose`.
    [[nodiscard]] Result<DatasetInfo> authorizeRead(const std::string& session,
                                                    const std::string& reference,
                                                    const std::string& purpose);

private:
    // Whether `caller` may import datasets or grant reads on them (a data steward).
    [[nodiscard]] bool isSteward(const Caller& caller);

    AuditedTransactions& gate_;
    Database& database_;
};

}  // namespace sealtrain::core
