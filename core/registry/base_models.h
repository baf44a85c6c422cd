// Imported base models in the data directory (issue #30; docs/data-directory.md): each version's
// folder under models/ holds its parameters sealed under the `checkpoints` KEK and, in the clear,
// the config.json and tokenizer files its signed registration names by SHA-256. The registry
// (registry/imports.cpp) decides; these functions keep and check the files. Not installed.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/registry/base_model_store.h"
#include "sealtrain/core/registry/registry.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace sealtrain::core {

// <data>/models/<name>/<version>/
[[nodiscard]] std::filesystem::path baseModelFolder(const BaseModelStore& store,
                                                    const std::string& name, std::int64_t version);

// Checks an uploaded folder as the trainer will read it (config.json, model.safetensors, and a
// GPT-2 BPE tokenizer whose vocabulary is the config's), seals the normalised parameters and
// keeps the files as version `version` of `name`, replacing what a failed import left there;
// `accept` decides, before anything is written, whether to keep it.
[[nodiscard]] Result<StoredImport> storeImport(const BaseModelStore& store,
                                               const ImportModel& upload, const std::string& name,
                                               std::int64_t version, const ImportAccept& accept);

// The tokenizer of dataset `datasetId` as its signed manifest names it, in the canonical JSON an
// import's row keeps (Jobs' TokenizerLookup).
[[nodiscard]] Result<std::string> datasetTokenizer(const BaseModelStore& store,
                                                   const std::string& datasetId);

// A BPE tokenizer's files as an imported base model keeps them, found by the SHA-256 of each
// (`fileSha256`: vocab.json and merges.txt, as a dataset's manifest names them): what an export
// of a model fine-tuned from it hands over. Unsupported, saying what to do, when no import
// keeps them.
struct KeptTokenizer {
    std::string vocabulary;
    std::string merges;
};
[[nodiscard]] Result<KeptTokenizer>
keptTokenizer(const BaseModelStore& store, const std::map<std::string, std::string>& fileSha256);

// Integrity, saying which file, when an imported version's files are not the ones its
// registration names.
[[nodiscard]] Result<void> checkImport(const BaseModelStore& store, const ModelVersion& version);

}  // namespace sealtrain::core
