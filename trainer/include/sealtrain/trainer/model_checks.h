// The checks every backend makes on what it is given, in one place so that the CPU and the CUDA
// models refuse the same input with the same sentence: the size a model is built for, a batch
// of tokens and targets, a request for probabilities, and the length of a buffer that holds one
// value per parameter.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/formats/gpt_config.h"

#include <cstddef>
#include <cstdint>
#include <span>

namespace sealtrain::trainer {

// The largest batch a model's activations are sized for.
struct BatchCapacity {
    std::size_t maxBatch = 1;  // sequences
    std::size_t maxSeq = 1;    // tokens per sequence, at most the context length
};

// A valid configuration, and a capacity of at least one token that fits the context.
[[nodiscard]] Result<void> checkCapacity(const GptConfig& config, const BatchCapacity& capacity);

// tokens(batch, seq) and targets(batch, seq), row-major, for a model of `config` sized for
// `capacity`: a shape within the capacity, arrays of that size, tokens below vocabSize and
// targets below vocabSize or -1 (masked).
[[nodiscard]] Result<void> checkBatch(const GptConfig& config, const BatchCapacity& capacity,
                                      std::span<const std::int32_t> tokens,
                                      std::span<const std::int32_t> targets, std::size_t batch,
                                      std::size_t seq);

// A request for the `count` probabilities of position `row` of a forward pass over `rows`
// positions, for a vocabulary of `vocab` tokens.
[[nodiscard]] Result<void> checkProbabilityRow(std::size_t row, std::size_t rows, std::size_t count,
                                               std::size_t vocab);

// A buffer of `count` values for a model with `parameterCount` parameters (its layout's size).
[[nodiscard]] Result<void> checkParameterCount(std::size_t count, std::size_t parameterCount);

}  // namespace sealtrain::trainer
