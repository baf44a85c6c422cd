// A dataset upload as a client describes it (control.proto's ImportHeader, in core's types), and
// a dataset's manifest as a client is told of it: the control plane turns the one into the
// importer's options and tokenizer, and the other out of the signed manifest, so that an adapter
// (api/) needs no dataset/ header (issue #28).
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/datasets/datasets.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::core {

struct DatasetUpload {
    std::string name;
    std::vector<std::filesystem::path> inputs;  // the uploaded files, where the importer reads them
    std::vector<std::string> inputNames;        // the names the client gave them, one per input
    std::string format;                         // text-files, text-records, jsonl or csv
    std::string field;                          // the JSONL field or CSV column
    std::string classification;                 // empty: the importer's default
    std::string policy;                         // skip (default, also when empty) or reject
    bool redactPii = false;
    std::uint64_t maxRecordBytes = 0;         // 0: the importer's default
    std::uint64_t validationBasisPoints = 0;  // 0 to 10000
    std::uint64_t tokensPerShard = 0;         // 0: the importer's default
    // A GPT-2 BPE tokenizer's two files, both or neither (neither: the byte tokenizer).
    std::optional<std::filesystem::path> gpt2Vocab;
    std::optional<std::filesystem::path> gpt2Merges;
};

// What Datasets::importDataset takes, made from an upload.
struct PreparedImport {
    DatasetImportRequest request;
    std::unique_ptr<dataset::Tokenizer> tokenizer;
};

// InvalidArgument, in one sentence that says what to send instead, for an unknown format or
// policy, a validation share over 10000 basis points or one tokenizer file without the other.
[[nodiscard]] Result<PreparedImport> prepareImport(const DatasetUpload& upload,
                                                   const std::filesystem::path& datasetsRoot);

// Whether a client may name an uploaded file `name` (a relative path of plain parts).
[[nodiscard]] bool isPlainUploadName(std::string_view name);

struct SplitSummary {
    std::uint64_t records = 0;
    std::uint64_t tokens = 0;
    std::uint64_t shards = 0;
};

// What `dataset show` tells of a manifest: no source names, only how many.
struct ManifestSummary {
    std::string tokenizer;    // "byte", "gpt2-bpe"
    std::string inputFormat;  // as imported
    SplitSummary train;
    SplitSummary validation;
    std::map<std::string, std::uint64_t> counts;  // records_read, duplicates, skipped, …
    std::uint64_t sources = 0;
};

// The signed manifest of dataset `id` under `datasetsRoot`, summarised; the manifest's own error
// when it is missing or does not verify.
[[nodiscard]] Result<ManifestSummary> manifestSummary(const std::filesystem::path& datasetsRoot,
                                                      const std::string& id);

}  // namespace sealtrain::core
