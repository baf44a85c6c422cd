// Base models (issue #30; docs/formats/hf-gpt2.md, "Base models"): a Hugging Face GPT-2 folder
// checked and normalised by the control plane on import, sealed, and later read by a trainer
// that fine-tunes from it (`sealtrain-train train --init-from`). The plaintext is a safetensors
// file of the model's parameters under GPT2Model's names (what an export's model.safetensors
// holds), so a checkpoint's plaintext, which carries the same names, is read the same way: a job
// can start from an imported model and from a version of our own.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/kek.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/formats/gpt_config.h"
#include "sealtrain/formats/hf_gpt2.h"

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace sealtrain::trainer {

inline constexpr const char* kBaseModelContentType = "application/x-sealtrain-base-model";

// An imported folder, checked: its shape, its special tokens, the normalised parameters file
// and the config.json Sealtrain writes for that shape.
struct PreparedBaseModel {
    GptConfig config;
    Gpt2SpecialTokens tokens;
    std::vector<std::uint8_t> safetensors;  // F32 under GPT2Model's names, {"format": "pt"}
    std::string configJson;                 // gpt2ConfigJson of config and tokens
};

// Reads a folder's config.json and model.safetensors as the importer does (parseGpt2Config,
// importGpt2Parameters) and writes the parameters back under GPT2Model's names. InvalidArgument
// or Integrity, naming the key or tensor, for a folder whose model ours would not compute.
[[nodiscard]] Result<PreparedBaseModel> prepareBaseModel(std::string_view configJson,
                                                         std::span<const std::uint8_t> safetensors);

// The parameters (in `config`'s padded layout) a run starts from: the sealed file at `path`,
// opened with its data key from `dataKeys` (or, when that holds none, a KEK from `keks`), a base
// model's or a checkpoint's plaintext whose SHA-256 must be `expectedSha256` (what the control
// plane authorised: Unauthenticated otherwise), of `config`'s vocabulary, context and shape
// (InvalidArgument naming the difference otherwise).
[[nodiscard]] Result<std::vector<float>>
loadInitialParameters(const std::filesystem::path& path, const crypto::DataKeyResolver& dataKeys,
                      const crypto::KekResolver& keks, const std::string& expectedSha256,
                      const GptConfig& config);

}  // namespace sealtrain::trainer
