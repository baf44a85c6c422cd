// Hugging Face's GPT-2 folder format (issue #30; docs/formats/hf-gpt2.md): the `config.json` that
// `transformers`' GPT2Config reads, and the model's parameters to and from the `model.safetensors`
// that GPT2LMHeadModel.save_pretrained writes and from_pretrained loads. The architecture is the
// same function (docs/trainer.md, "Model"), so exporting is a copy under GPT-2's names and
// importing reads them back into our layout, the vocabulary padded with zero rows. What a config
// could say that our model does not compute (another activation, another LayerNorm epsilon,
// untied embeddings, a scaled or reordered attention) is refused with a sentence.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/formats/gpt_config.h"
#include "sealtrain/formats/safetensors_reader.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::trainer {

// Token ids a GPT-2 config names as the start and end of text; GPT-2's BPE has both at 50256.
struct Gpt2SpecialTokens {
    std::int64_t bos = 0;
    std::int64_t eos = 0;
};

// The config.json of `config` (keys sorted, two-space indent, a final newline).
[[nodiscard]] std::string gpt2ConfigJson(const GptConfig& config, const Gpt2SpecialTokens& tokens);

// The shape a GPT-2 config.json describes (paddedVocabSize: padVocab of its vocab_size), or
// InvalidArgument naming the key that our model can not follow.
[[nodiscard]] Result<GptConfig> parseGpt2Config(std::string_view json);

// The model's parameters in our layout (ParameterLayout of `config`, wte padded with zero rows)
// from a GPT-2 safetensors file: F32 tensors under GPT2Model's names, with or without the
// "transformer." prefix GPT2LMHeadModel adds; an lm_head.weight, when present, must equal wte
// (the head is tied). Integrity, naming the tensor, for anything missing, of another dtype or
// shape, or untied.
[[nodiscard]] Result<std::vector<float>> importGpt2Parameters(const GptConfig& config,
                                                              const SafetensorsFile& file);

}  // namespace sealtrain::trainer
