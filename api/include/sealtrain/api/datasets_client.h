// The client library's handle on the Datasets service, ControlClient::datasets() (docs/api.md).
// Datasets: imports screened, tokenized, sealed and signed by the control plane, and their read
// grants. Every call returns a Result whose error is the server's one sentence, or the client's own
// for a transport failure; no gRPC type crosses this header.
#pragma once

#include "sealtrain/api/client_call.h"
#include "sealtrain/base/result.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::api {

struct DatasetSummary {
    std::string id;
    std::string name;
    std::int64_t version = 0;
    std::string classification;
    std::uint64_t records = 0;
    std::uint64_t tokens = 0;
};

struct DatasetCheckResult {
    DatasetSummary dataset;
    std::uint64_t shards = 0;
    std::uint64_t tokens = 0;  // decrypted and authenticated
    std::string signer;
};

struct SplitCounts {
    std::uint64_t records = 0;
    std::uint64_t tokens = 0;
    std::uint64_t shards = 0;
};

// What a dataset's signed manifest says, without the source names.
struct ManifestFacts {
    std::string tokenizer;
    std::string inputFormat;
    SplitCounts train;
    SplitCounts validation;
    std::map<std::string, std::uint64_t> counts;
    std::uint64_t sources = 0;
};

struct DatasetDetails {
    DatasetSummary dataset;
    std::string parent;
    std::string creator;
    std::string signer;
    std::int64_t createdUnix = 0;
    std::vector<std::string> readers;
    std::optional<ManifestFacts> manifest;  // nullopt when the server could not read it
};

// What an upload asks the control plane to do with the files (docs/api.md, ImportDataset).
struct ImportSettings {
    std::string name;
    std::string format = "text-files";
    std::string field;
    std::string classification = "internal";
    std::string policy = "skip";
    bool redactPii = false;
    std::uint64_t maxRecordBytes = 0;  // 0: the server's default
    std::uint32_t validationBasisPoints = 100;
    std::uint64_t tokensPerShard = 0;  // 0: the server's default
    std::string gpt2VocabJson;         // both empty: byte-level tokens
    std::string gpt2MergesTxt;
};

struct ImportedDataset {
    DatasetSummary dataset;
    std::string parent;
    std::string signer;
    std::string reportJson;
};

class DatasetsClient final : public client_internal::Handle {
public:
    using Handle::Handle;

    // Every dataset the caller may read, page by page, by name and newest version first.
    [[nodiscard]] Result<std::vector<DatasetSummary>> listDatasets();
    // `reference`: the id, NAME (the latest version) or NAME@VERSION.
    [[nodiscard]] Result<DatasetDetails> showDataset(const std::string& reference);
    // The control plane's check of a dataset the caller may read: every shard decrypted there.
    [[nodiscard]] Result<DatasetCheckResult> verifyDataset(const std::string& reference);
    [[nodiscard]] Result<void> grantRead(const std::string& reference, const std::string& user);
    [[nodiscard]] Result<void> revokeRead(const std::string& reference, const std::string& user);
    // Streams `files` to the control plane, which screens, tokenizes, seals and signs them as a
    // new dataset (or the next version of one); the client never holds a key. `cancel` ends the
    // upload at once; the control plane then keeps nothing of it.
    [[nodiscard]] Result<ImportedDataset> importDataset(const ImportSettings& settings,
                                                        const std::vector<UploadFile>& files,
                                                        const UploadProgress& progress,
                                                        CallCancel* cancel = nullptr);

private:
    [[nodiscard]] Result<void> changeReadGrant(const std::string& reference,
                                               const std::string& user, bool grant);
};

}  // namespace sealtrain::api
