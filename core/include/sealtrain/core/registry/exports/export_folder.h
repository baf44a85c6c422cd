// A model version exported as a Hugging Face GPT-2 folder (docs/formats/model-export.md): its
// recorded checkpoint opened by the key release, the parameters under GPT-2's names, its
// config.json, the tokenizer as GPT-2 tokenizer files, and model.sig, the OpenSSF model-signing
// signature of the others. The registry's, not the key release's (issue #50: "the export folder
// and its signature").
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/keys/returned_checkpoints.h"
#include "sealtrain/core/registry/base_model_store.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::core {

struct JobCheckpoint;

// One file of an exported model's folder.
struct ExportFile {
    std::string name;
    std::vector<std::uint8_t> bytes;
};

// A model version exported as a Hugging Face GPT-2 folder (docs/formats/model-export.md).
struct ExportFolder {
    std::vector<ExportFile>
        files;           // model.safetensors, config.json, vocab.json, merges.txt, model.sig
    std::string digest;  // "sha256:" + the model-signing subject digest
};

// Signs a model-signing statement with the platform's model-signing key: the Sigstore bundle
// (DataDirectory::signModelStatement).
using ModelStatementSigner = std::function<Result<std::string>(std::string_view statement)>;

// The folder of the recorded checkpoint `recorded` (signed by `signerPem`), named `modelName` in
// its signature: the byte tokenizer written as GPT-2's, or a BPE tokenizer as the imported base
// model in `store` keeps it. Integrity when the checkpoint is not the recorded one; Unsupported,
// saying why, for a tokenizer no import keeps.
[[nodiscard]] Result<ExportFolder>
buildExportFolder(const ReturnedCheckpoints& checkpoints, const BaseModelStore& store,
                  const ModelStatementSigner& sign, const JobCheckpoint& recorded,
                  const std::string& signerPem, const std::string& modelName);

}  // namespace sealtrain::core
