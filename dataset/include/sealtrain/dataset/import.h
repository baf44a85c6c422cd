// Dataset import (issue #6): reads UTF-8 text, JSONL or CSV in one streaming pass, validates,
// de-duplicates, screens for PII, tokenizes, splits and seals the tokens into shards, and
// writes the manifest. Access control and audit are the caller's: it decides who may import and
// records the returned id and manifest in the audit log.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/kek.h"
#include "sealtrain/dataset/import_report.h"
#include "sealtrain/dataset/manifest.h"
#include "sealtrain/dataset/tokenizer.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::dataset {

enum class InputFormat {
    TextFiles,    // each file is one document
    TextRecords,  // records separated by blank lines
    Jsonl,        // one JSON object per line; the record is the string in `field`
    Csv,          // RFC 4180 with a header row; the record is the column named `field`
    Fortune,      // fortune(6) files: records separated by lines holding only '%'; a folder's
                  // strfile indexes (*.dat) are not read
};
[[nodiscard]] const char* inputFormatName(InputFormat format) noexcept;
// The format inputFormatName names; InvalidArgument, listing the names, for any other.
[[nodiscard]] Result<InputFormat> parseInputFormat(const std::string& name);

enum class InvalidRecordPolicy {
    Reject,  // the first issue fails the import, naming its file and line
    Skip,    // leave the record out and report it
};

struct ImportProgress {
    std::uint64_t bytesRead = 0;
    std::uint64_t bytesTotal = 0;
    std::uint64_t records = 0;
    double recordsPerSecond = 0.0;
    double etaSeconds = -1.0;  // negative until it can be estimated
    bool finished = false;
};

struct ImportOptions {
    // Files or folders, read recursively in sorted order. Inside a folder only regular files
    // are read: symbolic links are skipped (they would read a file twice or one from elsewhere).
    std::vector<std::filesystem::path> inputs;
    // The name each input is reported and recorded under in the manifest, one per input, when
    // the inputs are not where the user named them (the control plane imports an upload from
    // memory); empty: each input's own file name.
    std::vector<std::string> inputNames;
    InputFormat format = InputFormat::TextFiles;
    std::string field;  // JSONL field / CSV column
    InvalidRecordPolicy policy = InvalidRecordPolicy::Skip;
    std::size_t maxRecordBytes = std::size_t{1} << 20U;
    bool redactPii = false;

    std::string name;
    std::string classification = "internal";  // [a-z0-9_-]{1,32}
    std::string creator;
    std::string createdAt;
    std::string parent;  // the dataset id this one is a new version of

    std::uint32_t validationBasisPoints = 100;  // 1 %
    std::uint64_t tokensPerShard = std::uint64_t{1} << 22U;
    // The dataset appears here as a folder named by the id's hex digits.
    std::filesystem::path outputRoot;

    std::function<void(const ImportProgress&)> progress;
    double progressIntervalSeconds = 0.5;
};

// One file an import reads, in the order it reads them.
struct InputFile {
    std::filesystem::path path;
    std::string displayName;  // "folder/inner/file" for a file found in a folder given as input
    std::uint64_t size = 0;
};

// Whether `name` may be recorded as an input's name in a manifest: a relative path of 1 to 4,096
// bytes of UTF-8 whose '/'-separated parts are each 1 to 255 bytes, none "." or "..", with no
// control character or backslash. An uploader chooses these names; a manifest never records
// "../../etc/shadow" or "/etc/shadow" as where its data came from.
[[nodiscard]] bool isPlainInputName(std::string_view name);

// The files `inputs` name: files as given, folders walked recursively in sorted order, regular
// files only (no symbolic links), fortune indexes (*.dat) left out for the fortune format. A
// client that uploads an import (sealtrainctl remote dataset import) sends these, under these
// names, so that the manifest reads as a local import's would.
[[nodiscard]] Result<std::vector<InputFile>>
listInputFiles(const std::vector<std::filesystem::path>& inputs, InputFormat format);

struct ImportResult {
    std::string datasetId;  // "sha256:…"
    std::filesystem::path folder;
    Manifest manifest;
    ImportReport report;
};

// Imports into a temporary folder under outputRoot and renames it into place only when all of
// it is written and synced, so a failed import leaves nothing behind. The shards are sealed
// under `kek`; nothing else is written.
[[nodiscard]] Result<ImportResult> importDataset(const ImportOptions& options, Tokenizer& tokenizer,
                                                 const crypto::Kek& kek);

}  // namespace sealtrain::dataset
