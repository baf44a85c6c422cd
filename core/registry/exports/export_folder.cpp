// A recorded checkpoint as the folder an export hands over (registry/exports/export_folder.h).
#include "sealtrain/core/registry/exports/export_folder.h"

#include "registry/base_models.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/core/datasets/datasets.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/model_signing.h"
#include "sealtrain/dataset/manifest.h"
#include "sealtrain/dataset/tokenizer.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/hf_gpt2.h"
#include "sealtrain/formats/safetensors.h"

namespace sealtrain::core {

Result<ExportFolder> buildExportFolder(const ReturnedCheckpoints& checkpoints,
                                       const BaseModelStore& store,
                                       const ModelStatementSigner& sign,
                                       const JobCheckpoint& recorded, const std::string& signerPem,
                                       const std::string& modelName)
{
    auto loaded = checkpoints.openJobCheckpoint(recorded, signerPem);
    if (!loaded)
        return loaded.error();
    const trainer::CheckpointState& state = loaded->checkpoint.state;
    // The tokenizer files: the byte tokenizer's written as GPT-2's, or a BPE tokenizer's as an
    // imported base model keeps them (the dataset's manifest names them by SHA-256).
    std::string vocabulary = dataset::byteTokenizerGpt2Vocab();
    std::string merges = dataset::byteTokenizerGpt2Merges();
    trainer::Gpt2SpecialTokens special{0, 0};  // the byte tokenizer's end of text is NUL
    if (state.tokenizer != "byte") {
        auto manifest = dataset::loadManifest(datasetFolder(store.datasetsRoot, state.datasetId),
                                              state.datasetId);
        if (!manifest)
            return manifest.error();
        auto kept = keptTokenizer(store, manifest->tokenizer.fileSha256);
        if (!kept)
            return kept.error();
        vocabulary = std::move(kept->vocabulary);
        merges = std::move(kept->merges);
        const auto end = manifest->tokenizer.endOfText;
        special = {end ? static_cast<std::int64_t>(*end) : 50256,
                   end ? static_cast<std::int64_t>(*end) : 50256};
    }
    auto weights = trainer::encodeSafetensors(
        trainer::gptExportEntries(state.config.model, loaded->checkpoint.parameters),
        {{"format", "pt"}});
    if (!weights)
        return weights.error();
    const auto text = [](const std::string& content) {
        return std::vector<std::uint8_t>(content.begin(), content.end());
    };
    ExportFolder folder;
    folder.files.push_back({"model.safetensors", std::move(*weights)});
    folder.files.push_back(
        {"config.json", text(trainer::gpt2ConfigJson(state.config.model, special))});
    folder.files.push_back({"vocab.json", text(vocabulary)});
    folder.files.push_back({"merges.txt", text(merges)});
    std::vector<crypto::SignedModelFile> signedFiles;
    for (const ExportFile& file : folder.files)
        signedFiles.push_back({file.name, crypto::sha256(file.bytes)});
    folder.digest = "sha256:" + toHex(crypto::modelSigningRootDigest(signedFiles));
    auto bundle = sign(crypto::modelSigningStatement(modelName, std::move(signedFiles)));
    if (!bundle)
        return bundle.error();
    folder.files.push_back({"model.sig", text(*bundle)});
    return folder;
}

}  // namespace sealtrain::core
