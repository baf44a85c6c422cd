// What the control plane keeps about sealed datasets (issue #6): the types its dataset calls
// take and return (ControlPlane::importDataset and the rest, core/control_plane_datasets.cpp).
// A dataset's files are a folder under the data directory's datasets/ named by the hex digits of
// its id (docs/formats/dataset.md); the database holds its name, version, lineage, creator and
// who may read it (migration 3, docs/operations/datasets.md).
#pragma once

#include "sealtrain/dataset/import.h"

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

}  // namespace sealtrain::core
