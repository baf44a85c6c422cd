// Text generation from a trained GPT (`sealtrain-train sample`): autoregressive sampling with
// temperature and top-k from a seeded counter-based generator, so a seed gives the same text.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/dataset/tokenizer.h"
#include "sealtrain/trainer/model.h"

#include <cstdint>
#include <span>
#include <string>

namespace sealtrain::trainer {

struct SampleOptions {
    std::string prompt;        // UTF-8; empty: start from the end-of-text token
    std::size_t length = 200;  // tokens to generate
    double temperature = 1.0;  // 0: always the most likely token
    std::size_t topK = 0;      // 0: the whole vocabulary
    std::uint64_t seed = 0;
};

// The prompt followed by `length` generated tokens from `model` (on any backend, holding the
// parameters to sample from, sized for one sequence of the whole context), decoded; each
// end-of-text token is written as a newline.
[[nodiscard]] Result<std::string> sampleText(Model& model, dataset::Tokenizer& tokenizer,
                                             const SampleOptions& options);

}  // namespace sealtrain::trainer
