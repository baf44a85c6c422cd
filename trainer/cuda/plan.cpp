// Host-side planning for the CUDA backend (plan.h).
#include "sealtrain/trainer/cuda/plan.h"

#include <algorithm>

namespace sealtrain::trainer::cuda {

unsigned elementwiseBlocks(std::size_t count, unsigned threads)
{
    const std::size_t wanted = (count + threads - 1) / threads;
    return static_cast<unsigned>(std::clamp<std::size_t>(wanted, 1, kMaxElementwiseBlocks));
}

std::size_t columnChunks(std::size_t rows)
{
    return std::max<std::size_t>(1, (rows + kRowsPerColumnChunk - 1) / kRowsPerColumnChunk);
}

std::size_t columnScratchFloats(std::size_t rows, std::size_t columns, std::size_t sums)
{
    return columnChunks(rows) * columns * sums;
}

unsigned sumOfSquaresBlocks(std::size_t count)
{
    const std::size_t wanted = (count + kSumOfSquaresThreads - 1) / kSumOfSquaresThreads;
    return static_cast<unsigned>(std::clamp<std::size_t>(wanted, 1, kMaxSumOfSquaresBlocks));
}

TokenBuckets bucketTokens(std::span<const std::int32_t> batchTokens)
{
    // A counting sort keyed by token: stable, so each token's positions stay ascending.
    TokenBuckets buckets;
    if (batchTokens.empty()) {
        buckets.starts.push_back(0);
        return buckets;
    }
    const auto largest = static_cast<std::size_t>(
        std::max<std::int32_t>(0, *std::max_element(batchTokens.begin(), batchTokens.end())));
    std::vector<std::int32_t> counts(largest + 1, 0);
    for (const std::int32_t token : batchTokens)
        ++counts[static_cast<std::size_t>(token)];
    std::vector<std::int32_t> next(largest + 1, 0);
    std::int32_t running = 0;
    for (std::size_t token = 0; token <= largest; ++token) {
        if (counts[token] == 0)
            continue;
        buckets.tokens.push_back(static_cast<std::int32_t>(token));
        buckets.starts.push_back(running);
        next[token] = running;
        running += counts[token];
    }
    buckets.starts.push_back(running);
    buckets.positions.resize(batchTokens.size());
    for (std::size_t position = 0; position < batchTokens.size(); ++position) {
        const auto token = static_cast<std::size_t>(batchTokens[position]);
        buckets.positions[static_cast<std::size_t>(next[token]++)] =
            static_cast<std::int32_t>(position);
    }
    return buckets;
}

std::vector<GradientBucket> planGradientBuckets(const GptConfig& config,
                                                const ParameterLayout& layout)
{
    const auto& tensors = layout.tensors();
    std::vector<GradientBucket> buckets;
    const ParameterTensor& lnfWeight = tensors[tensors.size() - 2];
    buckets.push_back({GradientBucket::ReadyAfter::FinalLayerNorm, 0, lnfWeight.offset,
                       layout.totalSize() - lnfWeight.offset});
    for (std::size_t layer = config.layers; layer-- > 0;) {
        const BlockTensors block = blockTensors(layer);
        const ParameterTensor& first = tensors[block.ln1Weight];
        const ParameterTensor& last = tensors[block.fcProjBias];
        buckets.push_back({GradientBucket::ReadyAfter::Block, layer, first.offset,
                           last.offset + last.size - first.offset});
    }
    const ParameterTensor& wpe = tensors[1];
    buckets.push_back({GradientBucket::ReadyAfter::Embeddings, 0, 0, wpe.offset + wpe.size});
    return buckets;
}

std::vector<AdamWChunk> planAdamWChunks(std::span<const ParameterGroup> groups, std::size_t chunk)
{
    std::vector<AdamWChunk> chunks;
    chunk = std::clamp<std::size_t>(chunk, 1, UINT32_MAX);
    for (const ParameterGroup& group : groups) {
        for (std::size_t start = 0; start < group.size; start += chunk) {
            chunks.push_back({group.offset + start,
                              static_cast<std::uint32_t>(std::min(chunk, group.size - start)),
                              group.weightDecay ? 1U : 0U});
        }
    }
    return chunks;
}

}  // namespace sealtrain::trainer::cuda
