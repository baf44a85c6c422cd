// Host-side planning for the CUDA backend: launch shapes, the fixed chunking that makes column
// sums deterministic, the token buckets of the embedding's backward pass, the per-layer gradient
// buckets that the all-reduce overlaps with backward. Plain C++ with
// no CUDA types, so it is tested on machines without a GPU.
#pragma once

#include "sealtrain/formats/gpt_config.h"
#include "sealtrain/trainer/optimizer.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sealtrain::trainer::cuda {

inline constexpr unsigned kElementwiseThreads = 256;
inline constexpr unsigned kMaxElementwiseBlocks = 1U << 16U;

// Blocks of `threads` for a grid-stride loop over `count` elements: enough to cover them, at
// least one, at most kMaxElementwiseBlocks (the loop strides over the rest).
[[nodiscard]] unsigned elementwiseBlocks(std::size_t count, unsigned threads = kElementwiseThreads);

// Column sums (bias and LayerNorm parameter gradients) run in two passes: each chunk of
// kRowsPerColumnChunk rows writes one partial sum per column, then the partials are added in
// chunk order. The chunking depends on the row count alone, never on the device, so the result
// is bit-identical on every run and every GPU.
inline constexpr std::size_t kRowsPerColumnChunk = 128;
[[nodiscard]] std::size_t columnChunks(std::size_t rows);
// Floats of scratch that a column sum over (rows, columns) needs: `sums` partial vectors.
[[nodiscard]] std::size_t columnScratchFloats(std::size_t rows, std::size_t columns,
                                              std::size_t sums);

// Blocks of the deterministic sum of squares: a fixed number for a given length.
inline constexpr unsigned kSumOfSquaresThreads = 256;
inline constexpr unsigned kMaxSumOfSquaresBlocks = 1024;
[[nodiscard]] unsigned sumOfSquaresBlocks(std::size_t count);

// The positions of a batch grouped by token, for the embedding's backward pass without atomics:
// tokens[i] (ascending, each once) occurs at positions[starts[i] .. starts[i+1]), ascending.
struct TokenBuckets {
    std::vector<std::int32_t> tokens;
    std::vector<std::int32_t> starts;  // tokens.size() + 1 entries
    std::vector<std::int32_t> positions;
};
[[nodiscard]] TokenBuckets bucketTokens(std::span<const std::int32_t> batchTokens);

// A contiguous run of the flat gradient buffer that is complete at one point of backward and is
// all-reduced from there while backward goes on.
struct GradientBucket {
    enum class ReadyAfter { FinalLayerNorm, Block, Embeddings };
    ReadyAfter readyAfter = ReadyAfter::Block;
    std::size_t layer = 0;  // for ReadyAfter::Block
    std::size_t offset = 0;
    std::size_t size = 0;
};
// In the order backward completes them: ln_f, blocks L−1 … 0, then wte and wpe (wte also takes
// the LM head's gradient, so it is complete only after the embedding's backward pass). Together
// they cover the layout exactly once.
[[nodiscard]] std::vector<GradientBucket> planGradientBuckets(const GptConfig& config,
                                                              const ParameterLayout& layout);

// AdamW runs as one launch over every parameter: one block per chunk of at most kAdamWChunk
// elements, each chunk inside one parameter group (so it knows whether weight decay applies).
// Together the chunks cover the groups exactly once, in order.
inline constexpr std::size_t kAdamWChunk = 16384;
struct AdamWChunk {
    std::uint64_t offset = 0;
    std::uint32_t size = 0;
    std::uint32_t weightDecay = 0;  // 1 where the group decays
};
[[nodiscard]] std::vector<AdamWChunk> planAdamWChunks(std::span<const ParameterGroup> groups,
                                                      std::size_t chunk = kAdamWChunk);

}  // namespace sealtrain::trainer::cuda
