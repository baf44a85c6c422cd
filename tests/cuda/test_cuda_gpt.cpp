// The CUDA backend against the CPU reference: each kernel against its CPU op (fp32 within
// rounding, bf16 within bf16's precision), the whole model's loss, gradients and training steps
// in both precisions, bit-identical runs from one seed, and parameters and AdamW moments moving
// between the backends (checkpoints). Exits 77 without a GPU.
//
// Bounds (relative; ‖·‖ is the 2-norm over a tensor):
//   fp32: loss 1e-5, each parameter tensor's gradient 1e-4, losses and each parameter tensor
//         over three AdamW steps 1e-4;
//   bf16: loss 1e-2, each gradient tensor 5e-2, losses over three steps 2e-2.
// A tensor whose gradient is tiny next to the whole gradient is compared against 1e-3 of the
// whole gradient's norm instead of its own (the attention key bias, whose exact gradient is zero;
// docs/trainer.md); after AdamW steps the key bias is held to a drift of one learning rate per
// step instead (compareParameters).
#include "gpu_test.h"
#include "sealtrain/trainer/counter_rng.h"
#include "sealtrain/trainer/cpu_ops.h"
#include "sealtrain/trainer/cuda/cuda_gpt.h"
#include "sealtrain/trainer/cuda/kernels.h"
#include "sealtrain/trainer/cuda/plan.h"
#include "sealtrain/trainer/gpt.h"
#include "sealtrain/trainer/optimizer.h"

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace sealtrain::trainer;
namespace kernels = sealtrain::trainer::cuda::kernels;
using sealtrain::gpu_test::Checker;
using sealtrain::gpu_test::ok;

constexpr const char* kName = "test_cuda_gpt";
// The model shape the whole-model checks run at. The default is small; oddShape() gives every
// dimension a different size (padded vocabulary 80, width 48, T 20, head size 16, batch 3,
// 3 heads, 2 layers), so that a kernel that swaps two of them can not pass.
struct Shape {
    GptConfig config;
    std::size_t batch;
    std::size_t seq;
    const char* name;
};

Shape defaultShape()
{
    GptConfig config;
    config.vocabSize = 61;
    config.paddedVocabSize = 64;
    config.contextLength = 32;
    config.layers = 2;
    config.heads = 4;
    config.width = 64;
    return {config, 4, 16, "small shape"};
}

Shape oddShape()
{
    GptConfig config;
    config.vocabSize = 75;
    config.paddedVocabSize = 80;
    config.contextLength = 24;
    config.layers = 2;
    config.heads = 3;
    config.width = 48;
    return {config, 3, 20, "odd shape (V 80, C 48, T 20, HS 16, B 3)"};
}

// Head size 64 at a T that is no whole number of 64-row tiles: the bf16 model runs flash
// attention here (V 80, C 128, T 100, HS 64, B 2, 2 heads, 2 layers).
Shape flashShape()
{
    GptConfig config;
    config.vocabSize = 77;
    config.paddedVocabSize = 80;
    config.contextLength = 112;
    config.layers = 2;
    config.heads = 2;
    config.width = 128;
    return {config, 2, 100, "flash shape (V 80, C 128, T 100, HS 64, B 2)"};
}

Shape gShape = defaultShape();  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

GptConfig smallConfig()
{
    return gShape.config;
}

std::vector<float> randomValues(std::size_t count, std::uint64_t stream, double scale = 1.0)
{
    const CounterRng rng(11);
    std::vector<float> values(count);
    for (std::size_t i = 0; i < count; ++i)
        values[i] = static_cast<float>(scale * rng.normal(stream, i));
    return values;
}

struct Batch {
    std::vector<std::int32_t> tokens;
    std::vector<std::int32_t> targets;
};

// Next-token targets from a random stream; one target masked (-1) as the data loader may.
Batch randomBatch(std::size_t vocab, std::uint64_t stream)
{
    const CounterRng rng(5);
    Batch batch;
    for (std::size_t b = 0; b < gShape.batch; ++b) {
        std::vector<std::int32_t> row(gShape.seq + 1);
        for (std::size_t t = 0; t <= gShape.seq; ++t)
            row[t] = static_cast<std::int32_t>(rng.bits(stream, b * (gShape.seq + 1) + t) % vocab);
        batch.tokens.insert(batch.tokens.end(), row.begin(), row.end() - 1);
        batch.targets.insert(batch.targets.end(), row.begin() + 1, row.end());
    }
    batch.targets[3] = -1;
    return batch;
}

double relativeError(const float* got, const float* want, std::size_t count, double floor = 0.0)
{
    double diff = 0.0;
    double norm = 0.0;
    for (std::size_t i = 0; i < count; ++i) {
        const double d = static_cast<double>(got[i]) - static_cast<double>(want[i]);
        diff += d * d;
        norm += static_cast<double>(want[i]) * static_cast<double>(want[i]);
    }
    if (!std::isfinite(diff))
        return std::numeric_limits<double>::infinity();
    return std::sqrt(diff) / std::max(std::sqrt(norm), std::max(floor, 1e-30));
}

// Device buffers of the activation type T, filled from and read back as float.
template <typename T>
class DeviceArray {
public:
    explicit DeviceArray(std::size_t count)
        : count_(count)
    {
        SEALTRAIN_CUDA_CHECK(cudaMalloc(&data_, std::max<std::size_t>(count, 1) * sizeof(T)));
        poison();
    }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    DeviceArray(DeviceArray&&) = delete;
    DeviceArray& operator=(DeviceArray&&) = delete;
    ~DeviceArray() { cudaFree(data_); }

    // NaN everywhere: an element a kernel forgets to write shows.
    void poison() { SEALTRAIN_CUDA_CHECK(cudaMemset(data_, 0xff, count_ * sizeof(T))); }
    void upload(const std::vector<float>& values)
    {
        float* staging = nullptr;
        SEALTRAIN_CUDA_CHECK(cudaMalloc(&staging, values.size() * sizeof(float)));
        SEALTRAIN_CUDA_CHECK(cudaMemcpy(staging, values.data(), values.size() * sizeof(float),
                                        cudaMemcpyHostToDevice));
        kernels::convertFromFloat(data_, staging, values.size(), nullptr);
        SEALTRAIN_CUDA_CHECK(cudaFree(staging));
    }
    [[nodiscard]] std::vector<float> download() const
    {
        float* staging = nullptr;
        SEALTRAIN_CUDA_CHECK(
            cudaMalloc(&staging, std::max<std::size_t>(count_, 1) * sizeof(float)));
        kernels::convertToFloat(staging, data_, count_, nullptr);
        std::vector<float> values(count_);
        SEALTRAIN_CUDA_CHECK(
            cudaMemcpy(values.data(), staging, count_ * sizeof(float), cudaMemcpyDeviceToHost));
        SEALTRAIN_CUDA_CHECK(cudaFree(staging));
        return values;
    }
    [[nodiscard]] T* get() const { return data_; }

private:
    T* data_ = nullptr;
    std::size_t count_;
};

// The values a T buffer would hold: what the CPU reference must start from to compare.
template <typename T>
std::vector<float> roundedTo(std::vector<float> values)
{
    if constexpr (!std::is_same_v<T, float>) {
        for (float& v : values)
            v = __bfloat162float(__float2bfloat16_rn(v));
    }
    return values;
}

template <typename T>
double kernelTolerance()
{
    return std::is_same_v<T, float> ? 1e-5 : 1e-2;
}

// The sum of squares behind the gradient norm against globalNorm, at the sizes that reach the
// edges (empty, one element, partial and full blocks, more blocks than the grid), and two runs
// bit-identical.
template <typename T>
void checkSumOfSquares(Checker& check)
{
    for (const std::size_t count :
         {std::size_t{0}, std::size_t{1}, std::size_t{255}, std::size_t{256}, std::size_t{257},
          std::size_t{5000}, std::size_t{1} << 20U, (std::size_t{1} << 24U) + 3}) {
        const auto values = roundedTo<T>(randomValues(count, 18, 0.1));
        DeviceArray<T> dValues(count);
        dValues.upload(values);
        DeviceArray<double> result(1), partials(cuda::kMaxSumOfSquaresBlocks);
        double sums[2] = {0.0, 0.0};
        for (double& sum : sums) {
            kernels::sumOfSquares(result.get(), partials.get(), dValues.get(), count, nullptr);
            SEALTRAIN_CUDA_CHECK(
                cudaMemcpy(&sum, result.get(), sizeof(double), cudaMemcpyDeviceToHost));
        }
        const double norm = globalNorm(values);
        GPU_EXPECT(check, std::fabs(std::sqrt(sums[0]) - norm) <= 1e-9 * std::max(norm, 1e-30));
        GPU_EXPECT(check, std::memcmp(&sums[0], &sums[1], sizeof(double)) == 0);
    }
}

template <typename T>
void checkKernels(Checker& check)
{
    const double tolerance = kernelTolerance<T>();
    const std::size_t rows = 48;
    const std::size_t width = 40;
    // Encoder: forward values and the deterministic backward (token buckets, position sums).
    {
        const std::size_t batch = 3;
        const std::size_t seq = 16;
        const std::size_t vocab = 9;
        std::vector<std::int32_t> tokens(batch * seq);
        for (std::size_t i = 0; i < tokens.size(); ++i)
            tokens[i] = static_cast<std::int32_t>((i * 7 + i / 5) % vocab);
        const auto wte = roundedTo<T>(randomValues(vocab * width, 1));
        const auto wpe = roundedTo<T>(randomValues(seq * width, 2));
        const auto dout = roundedTo<T>(randomValues(batch * seq * width, 3));
        DeviceArray<T> dWte(vocab * width), dWpe(seq * width), dOut(batch * seq * width);
        DeviceArray<T> dEncoded(batch * seq * width);
        dWte.upload(wte);
        dWpe.upload(wpe);
        std::int32_t* dTokens = nullptr;
        SEALTRAIN_CUDA_CHECK(cudaMalloc(&dTokens, tokens.size() * sizeof(std::int32_t)));
        SEALTRAIN_CUDA_CHECK(cudaMemcpy(
            dTokens, tokens.data(), tokens.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice));
        kernels::encoderForward(dEncoded.get(), dTokens, dWte.get(), dWpe.get(), batch, seq, width,
                                nullptr);
        std::vector<float> want(batch * seq * width);
        cpu::encoderForward(want.data(), tokens.data(), wte.data(), wpe.data(), batch, seq, width);
        GPU_EXPECT(check, relativeError(dEncoded.download().data(), want.data(), want.size())
                              <= tolerance);

        const cuda::TokenBuckets buckets = cuda::bucketTokens(tokens);
        std::int32_t* dBuckets = nullptr;
        const std::size_t bucketInts =
            buckets.tokens.size() + buckets.starts.size() + buckets.positions.size();
        SEALTRAIN_CUDA_CHECK(cudaMalloc(&dBuckets, bucketInts * sizeof(std::int32_t)));
        std::vector<std::int32_t> packed(buckets.tokens);
        packed.insert(packed.end(), buckets.starts.begin(), buckets.starts.end());
        packed.insert(packed.end(), buckets.positions.begin(), buckets.positions.end());
        SEALTRAIN_CUDA_CHECK(cudaMemcpy(dBuckets, packed.data(), bucketInts * sizeof(std::int32_t),
                                        cudaMemcpyHostToDevice));
        const std::vector<float> zeroWte(vocab * width, 0.0F);
        const std::vector<float> zeroWpe(seq * width, 0.0F);
        dWte.upload(zeroWte);
        dWpe.upload(zeroWpe);
        dOut.upload(dout);
        kernels::encoderBackwardPositions(dWpe.get(), dOut.get(), batch, seq, width, nullptr);
        kernels::encoderBackwardTokens(dWte.get(), dOut.get(), dBuckets,
                                       dBuckets + buckets.tokens.size(),
                                       dBuckets + buckets.tokens.size() + buckets.starts.size(),
                                       buckets.tokens.size(), width, nullptr);
        std::vector<float> wantWte(zeroWte);
        std::vector<float> wantWpe(zeroWpe);
        cpu::encoderBackward(wantWte.data(), wantWpe.data(), dout.data(), tokens.data(), batch, seq,
                             width);
        GPU_EXPECT(check, relativeError(dWte.download().data(), wantWte.data(), wantWte.size())
                              <= tolerance);
        GPU_EXPECT(check, relativeError(dWpe.download().data(), wantWpe.data(), wantWpe.size())
                              <= tolerance);
        SEALTRAIN_CUDA_CHECK(cudaFree(dTokens));
        SEALTRAIN_CUDA_CHECK(cudaFree(dBuckets));
    }
    // Residual + LayerNorm forward, and LayerNorm backward (input and parameter gradients), at
    // widths of whole 16-byte packs (the packed kernels; 768 is GPT-2's) and not (the scalar).
    for (const std::size_t lnWidth : {width, std::size_t{42}, std::size_t{768}}) {
        const auto a = roundedTo<T>(randomValues(rows * lnWidth, 4));
        const auto b = roundedTo<T>(randomValues(rows * lnWidth, 5));
        const auto weight = roundedTo<T>(randomValues(lnWidth, 6, 0.5));
        const auto bias = roundedTo<T>(randomValues(lnWidth, 7, 0.5));
        const auto dout = roundedTo<T>(randomValues(rows * lnWidth, 8));
        DeviceArray<T> dA(rows * lnWidth), dB(rows * lnWidth), dWeight(lnWidth), dBias(lnWidth);
        DeviceArray<T> dResidual(rows * lnWidth), dOut(rows * lnWidth), dDout(rows * lnWidth);
        DeviceArray<T> dDin(rows * lnWidth), dDweight(lnWidth), dDbias(lnWidth);
        DeviceArray<float> dMean(rows), dRstd(rows);
        DeviceArray<float> scratch(cuda::columnScratchFloats(rows, lnWidth, 2));
        dA.upload(a);
        dB.upload(b);
        dWeight.upload(weight);
        dBias.upload(bias);
        kernels::residualLayerNormForward(dResidual.get(), dOut.get(), dMean.get(), dRstd.get(),
                                          dA.get(), dB.get(), dWeight.get(), dBias.get(), rows,
                                          lnWidth, nullptr);
        std::vector<float> residual(rows * lnWidth);
        cpu::residualForward(residual.data(), a.data(), b.data(), residual.size());
        residual = roundedTo<T>(residual);
        std::vector<float> want(rows * lnWidth), mean(rows), rstd(rows);
        cpu::layerNormForward(want.data(), mean.data(), rstd.data(), residual.data(), weight.data(),
                              bias.data(), rows, lnWidth);
        GPU_EXPECT(check,
                   relativeError(dResidual.download().data(), residual.data(), residual.size())
                       <= tolerance);
        GPU_EXPECT(check,
                   relativeError(dOut.download().data(), want.data(), want.size()) <= tolerance);

        const std::vector<float> zeros(rows * lnWidth, 0.0F);
        dDin.upload(zeros);
        dDweight.upload(std::vector<float>(lnWidth, 0.0F));
        dDbias.upload(std::vector<float>(lnWidth, 0.0F));
        dDout.upload(dout);
        kernels::layerNormBackward(dDin.get(), dDweight.get(), dDbias.get(), scratch.get(),
                                   dDout.get(), dResidual.get(), dWeight.get(), dMean.get(),
                                   dRstd.get(), rows, lnWidth, nullptr);
        std::vector<float> din(zeros), dweight(lnWidth, 0.0F), dbias(lnWidth, 0.0F);
        cpu::layerNormBackward(din.data(), dweight.data(), dbias.data(), dout.data(),
                               residual.data(), weight.data(), mean.data(), rstd.data(), rows,
                               lnWidth);
        GPU_EXPECT(check,
                   relativeError(dDin.download().data(), din.data(), din.size()) <= tolerance);
        GPU_EXPECT(check,
                   relativeError(dDweight.download().data(), dweight.data(), lnWidth) <= tolerance);
        GPU_EXPECT(check,
                   relativeError(dDbias.download().data(), dbias.data(), lnWidth) <= tolerance);
    }
    // Bias gradient (column sums) and GELU both ways.
    {
        const auto dout = roundedTo<T>(randomValues(rows * width, 9));
        DeviceArray<T> dDout(rows * width), dDbias(width);
        DeviceArray<float> scratch(cuda::columnScratchFloats(rows, width, 1));
        dDout.upload(dout);
        const std::vector<float> start = roundedTo<T>(randomValues(width, 10));
        dDbias.upload(start);
        kernels::biasBackward(dDbias.get(), scratch.get(), dDout.get(), rows, width, nullptr);
        std::vector<float> want(start);
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < width; ++c)
                want[c] += dout[r * width + c];
        GPU_EXPECT(check, relativeError(dDbias.download().data(), want.data(), width) <= tolerance);

        const auto in = roundedTo<T>(randomValues(rows * width, 11, 2.0));
        DeviceArray<T> dIn(rows * width), dOut(rows * width), dDin(rows * width);
        dIn.upload(in);
        kernels::geluForward(dOut.get(), dIn.get(), in.size(), nullptr);
        std::vector<float> gelu(in.size());
        cpu::geluForward(gelu.data(), in.data(), in.size());
        GPU_EXPECT(check,
                   relativeError(dOut.download().data(), gelu.data(), gelu.size()) <= tolerance);
        kernels::geluBackward(dDin.get(), dDout.get(), dIn.get(), in.size(), nullptr);
        std::vector<float> dgelu(in.size(), 0.0F);
        cpu::geluBackward(dgelu.data(), dout.data(), in.data(), in.size());
        GPU_EXPECT(check,
                   relativeError(dDin.download().data(), dgelu.data(), dgelu.size()) <= tolerance);
    }
    // Fused classifier: losses without probabilities, then dlogits in place over the logits;
    // one masked row, padding columns beyond the vocabulary. Padded widths of whole 16-byte packs
    // (the packed kernels, one short and one longer than a block's pass) and not (the scalar).
    for (const auto& [vocab, padded] :
         {std::pair<std::size_t, std::size_t>{61, 64}, {59, 62}, {5003, 5008}}) {
        auto logits = roundedTo<T>(randomValues(rows * padded, 12, 3.0));
        std::vector<std::int32_t> targets(rows);
        for (std::size_t r = 0; r < rows; ++r)
            targets[r] = static_cast<std::int32_t>((r * 13) % vocab);
        targets[5] = -1;
        DeviceArray<T> dLogits(rows * padded);
        DeviceArray<float> dLosses(rows), dLse(rows);
        dLogits.upload(logits);
        std::int32_t* dTargets = nullptr;
        SEALTRAIN_CUDA_CHECK(cudaMalloc(&dTargets, rows * sizeof(std::int32_t)));
        SEALTRAIN_CUDA_CHECK(cudaMemcpy(dTargets, targets.data(), rows * sizeof(std::int32_t),
                                        cudaMemcpyHostToDevice));
        const kernels::CrossEntropyDims dims{rows, vocab, padded};
        kernels::crossEntropyForward(dLosses.get(), dLse.get(), dLogits.get(), dTargets, dims,
                                     nullptr);
        std::vector<float> losses(rows), probs(rows * padded);
        const std::size_t counted = cpu::crossEntropyForward(
            losses.data(), probs.data(), logits.data(), targets.data(), {rows, vocab, padded});
        GPU_EXPECT(check, counted == rows - 1);
        const auto gotLosses = dLosses.download();
        GPU_EXPECT(check, relativeError(gotLosses.data(), losses.data(), rows) <= 1e-5);
        GPU_EXPECT(check, gotLosses[5] == 0.0F);
        const float dloss = 1.0F / static_cast<float>(counted);
        kernels::crossEntropyBackward(dLogits.get(), dLogits.get(), dLse.get(), dTargets, dloss,
                                      dims, nullptr);
        std::vector<float> dlogits(rows * padded, 0.0F);
        const std::vector<float> dlosses(rows, dloss);
        cpu::crossEntropyBackward(dlogits.data(), dlosses.data(), probs.data(), targets.data(),
                                  {rows, vocab, padded});
        const auto got = dLogits.download();
        GPU_EXPECT(check, relativeError(got.data(), dlogits.data(), got.size()) <= tolerance);
        bool paddingZero = true;
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t i = vocab; i < padded; ++i)
                paddingZero = paddingZero && got[r * padded + i] == 0.0F;
        GPU_EXPECT(check, paddingZero);
        SEALTRAIN_CUDA_CHECK(cudaFree(dTargets));
    }
    // Causal softmax against a double-precision reference, both ways, in place: at a T that is no
    // whole number of 16-byte packs (the scalar kernels) and at one that is (the packed kernels).
    for (const std::size_t seq : {std::size_t{37}, std::size_t{40}}) {
        const std::size_t matrices = 3;
        const auto scores = roundedTo<T>(randomValues(matrices * seq * seq, 13, 2.0));
        const auto dprobs = roundedTo<T>(randomValues(matrices * seq * seq, 14));
        std::vector<float> probs(scores.size(), 0.0F), dscores(scores.size(), 0.0F);
        for (std::size_t row = 0; row < matrices * seq; ++row) {
            const std::size_t t = row % seq;
            const float* x = scores.data() + row * seq;
            double largest = -std::numeric_limits<double>::infinity();
            for (std::size_t j = 0; j <= t; ++j)
                largest = std::max(largest, static_cast<double>(x[j]));
            double sum = 0.0;
            for (std::size_t j = 0; j <= t; ++j)
                sum += std::exp(x[j] - largest);
            double dot = 0.0;
            for (std::size_t j = 0; j <= t; ++j) {
                probs[row * seq + j] = static_cast<float>(std::exp(x[j] - largest) / sum);
                dot += static_cast<double>(probs[row * seq + j]) * dprobs[row * seq + j];
            }
            for (std::size_t j = 0; j <= t; ++j)
                dscores[row * seq + j] = static_cast<float>(
                    probs[row * seq + j] * (static_cast<double>(dprobs[row * seq + j]) - dot));
        }
        DeviceArray<T> dScores(scores.size()), dDprobs(scores.size());
        dScores.upload(scores);
        kernels::causalSoftmaxForward(dScores.get(), dScores.get(), matrices, seq, nullptr);
        const auto gotProbs = dScores.download();
        GPU_EXPECT(check, relativeError(gotProbs.data(), probs.data(), probs.size()) <= tolerance);
        dScores.upload(roundedTo<T>(probs));
        dDprobs.upload(dprobs);
        kernels::causalSoftmaxBackward(dDprobs.get(), dDprobs.get(), dScores.get(), matrices, seq,
                                       nullptr);
        GPU_EXPECT(check, relativeError(dDprobs.download().data(), dscores.data(), dscores.size())
                              <= 2 * tolerance);
    }
    // Attention's layout changes put every element where it belongs and are exact inverses of
    // each other, with a head size of whole packs (the packed kernels) and without (the scalar).
    for (const std::size_t headSize : {std::size_t{8}, std::size_t{5}}) {
        const kernels::AttentionDims dims{2, 5, 3, headSize};
        const std::size_t c = dims.heads * dims.headSize;
        const std::size_t count = dims.batch * dims.seq * c;
        const auto qkv = roundedTo<T>(randomValues(3 * count, 15));
        DeviceArray<T> dQkv(3 * count), q(count), k(count), v(count), back(3 * count);
        DeviceArray<T> merged(count), split(count);
        dQkv.upload(qkv);
        kernels::splitHeads(q.get(), k.get(), v.get(), dQkv.get(), dims, nullptr);
        kernels::mergeHeadGradients(back.get(), q.get(), k.get(), v.get(), dims, nullptr);
        GPU_EXPECT(check, back.download() == qkv);
        kernels::concatHeads(merged.get(), q.get(), dims, nullptr);
        kernels::splitHeadOutputs(split.get(), merged.get(), dims, nullptr);
        GPU_EXPECT(check, split.download() == q.download());
        // q, k and v of head h at position t are qkv's channels [h·hs, (h+1)·hs) of row t, in the
        // first, second and third third of the row.
        const std::vector<float> got[3] = {q.download(), k.download(), v.download()};
        bool placed = true;
        for (std::size_t part = 0; part < 3; ++part)
            for (std::size_t b = 0; b < dims.batch; ++b)
                for (std::size_t h = 0; h < dims.heads; ++h)
                    for (std::size_t t = 0; t < dims.seq; ++t)
                        for (std::size_t d = 0; d < dims.headSize; ++d)
                            placed =
                                placed
                                && got[part]
                                      [((b * dims.heads + h) * dims.seq + t) * dims.headSize + d]
                                       == qkv[(b * dims.seq + t) * 3 * c + part * c
                                              + h * dims.headSize + d];
        GPU_EXPECT(check, placed);
        // concatHeads is the (B, H, T, HS) -> (B, T, H·HS) transpose.
        const auto gotMerged = merged.download();
        bool concatenated = true;
        for (std::size_t b = 0; b < dims.batch; ++b)
            for (std::size_t h = 0; h < dims.heads; ++h)
                for (std::size_t t = 0; t < dims.seq; ++t)
                    for (std::size_t d = 0; d < dims.headSize; ++d)
                        concatenated =
                            concatenated
                            && gotMerged[(b * dims.seq + t) * c + h * dims.headSize + d]
                                   == got[0][((b * dims.heads + h) * dims.seq + t) * dims.headSize
                                             + d];
        GPU_EXPECT(check, concatenated);
    }
    // Flash attention (bf16, head size 64) against the CPU's attention from the same rounded
    // inputs: the output, each row's logsumexp, and the gradient of q, k and v, at a T of one
    // tile, of a partial tile and of three tiles; two backward passes give the same bits.
    if constexpr (!std::is_same_v<T, float>) {
        for (const std::size_t seq : {std::size_t{64}, std::size_t{100}, std::size_t{192}}) {
            const kernels::AttentionDims dims{2, seq, 3, kernels::kFlashHeadSize};
            GPU_EXPECT(check, kernels::flashAttentionFits(dims));
            const std::size_t c = dims.heads * dims.headSize;
            const std::size_t count = dims.batch * seq * c;
            const auto qkv = roundedTo<T>(randomValues(3 * count, 31));
            const auto dout = roundedTo<T>(randomValues(count, 32));
            const cpu::AttentionShape shape{dims.batch, seq, dims.heads, c};
            std::vector<float> out(count), att(dims.batch * dims.heads * seq * seq);
            cpu::attentionForward(out.data(), att.data(), qkv.data(), shape);
            std::vector<float> dqkv(3 * count), scratch(att.size());
            cpu::attentionBackward(dqkv.data(), scratch.data(), dout.data(), qkv.data(), att.data(),
                                   shape);
            // logsumexp of each scaled, causal score row, in double.
            std::vector<float> lse(dims.batch * dims.heads * seq);
            for (std::size_t b = 0; b < dims.batch; ++b)
                for (std::size_t h = 0; h < dims.heads; ++h)
                    for (std::size_t t = 0; t < seq; ++t) {
                        std::vector<double> scores(t + 1);
                        for (std::size_t j = 0; j <= t; ++j) {
                            double dot = 0.0;
                            for (std::size_t d = 0; d < dims.headSize; ++d)
                                dot += static_cast<double>(
                                           qkv[(b * seq + t) * 3 * c + h * dims.headSize + d])
                                       * qkv[(b * seq + j) * 3 * c + c + h * dims.headSize + d];
                            scores[j] = dot / std::sqrt(static_cast<double>(dims.headSize));
                        }
                        const double largest = *std::max_element(scores.begin(), scores.end());
                        double sum = 0.0;
                        for (const double score : scores)
                            sum += std::exp(score - largest);
                        lse[(b * dims.heads + h) * seq + t] =
                            static_cast<float>(largest + std::log(sum));
                    }
            DeviceArray<T> dQkv(3 * count), dOut(count), dDout(count), dDqkv(3 * count);
            DeviceArray<float> dLse(lse.size()), dDots(lse.size());
            dQkv.upload(qkv);
            dDout.upload(dout);
            kernels::flashAttentionForward(dOut.get(), dLse.get(), dQkv.get(), dims, nullptr);
            const auto gotOut = dOut.download();
            const double outError = relativeError(gotOut.data(), out.data(), count);
            const auto gotLse = dLse.download();
            double lseError = 0.0;
            for (std::size_t i = 0; i < lse.size(); ++i)
                lseError = std::max(lseError, std::fabs(static_cast<double>(gotLse[i]) - lse[i]));
            kernels::flashAttentionBackward(dDqkv.get(), dDots.get(), dDout.get(), dOut.get(),
                                            dQkv.get(), dLse.get(), dims, nullptr);
            const auto gotDqkv = dDqkv.download();
            double worst = 0.0;
            for (std::size_t part = 0; part < 3; ++part) {
                std::vector<float> got, want;
                for (std::size_t row = 0; row < dims.batch * seq; ++row)
                    for (std::size_t i = 0; i < c; ++i) {
                        got.push_back(gotDqkv[row * 3 * c + part * c + i]);
                        want.push_back(dqkv[row * 3 * c + part * c + i]);
                    }
                worst = std::max(worst, relativeError(got.data(), want.data(), got.size()));
            }
            dDqkv.poison();
            kernels::flashAttentionBackward(dDqkv.get(), dDots.get(), dDout.get(), dOut.get(),
                                            dQkv.get(), dLse.get(), dims, nullptr);
            const auto again = dDqkv.download();
            const bool identical =
                std::memcmp(again.data(), gotDqkv.data(), again.size() * sizeof(float)) == 0;
            std::printf("flash attention T %zu: out relative %.2e, lse worst %.2e, dq/dk/dv worst "
                        "relative %.2e (bounds 1e-2, 1e-3, 2e-2)%s\n",
                        seq, outError, lseError, worst, identical ? "" : ", NOT bit-identical");
            GPU_EXPECT(check, outError <= 1e-2);
            GPU_EXPECT(check, lseError <= 1e-3);
            GPU_EXPECT(check, worst <= 2e-2);
            GPU_EXPECT(check, identical);
        }
    }
    // AdamW against the CPU optimizer.
    {
        const std::size_t count = 5000;
        auto parameters = randomValues(count, 16);
        const auto gradients = roundedTo<T>(randomValues(count, 17, 0.1));
        DeviceArray<float> dParameters(count), dM(count), dV(count);
        DeviceArray<T> dLow(count), dGradients(count);
        dParameters.upload(parameters);
        dM.upload(std::vector<float>(count, 0.0F));
        dV.upload(std::vector<float>(count, 0.0F));
        dGradients.upload(gradients);
        AdamW reference({{0, count, true}}, count, AdamWParams{});
        for (std::uint64_t step = 1; step <= 2; ++step) {
            const AdamWParams p;
            kernels::AdamWScalars s = kernels::adamwScalars(p, step, 1e-3);
            s.weightDecay = static_cast<float>(p.weightDecay);
            kernels::adamw(dParameters.get(), dLow.get(), dM.get(), dV.get(), dGradients.get(),
                           count, s, nullptr);
            reference.step(parameters, gradients, 1e-3);
        }
        GPU_EXPECT(check,
                   relativeError(dParameters.download().data(), parameters.data(), count) <= 1e-6);
        GPU_EXPECT(check,
                   relativeError(dLow.download().data(), roundedTo<T>(parameters).data(), count)
                       <= tolerance);
    }
    checkSumOfSquares<T>(check);
}

// ---- the whole model ----

struct ModelRun {
    std::vector<float> losses;
    std::vector<double> norms;
    std::vector<float> parameters;
};

constexpr double kLearningRate = 3e-3;
constexpr double kClip = 1.0;

// Three AdamW steps on the CPU reference, with the loss, norm and parameters after each.
ModelRun cpuSteps(const GptConfig& config, const Batch& batch, std::size_t steps)
{
    auto model = Gpt<float>::create(config, gShape.batch, gShape.seq);
    model->initialize(3);
    AdamW adamw(parameterGroups(model->layout()), model->layout().totalSize(), AdamWParams{});
    ModelRun run;
    for (std::size_t step = 0; step < steps; ++step) {
        model->zeroGradients();
        run.losses.push_back(
            *model->forward(batch.tokens, batch.targets, gShape.batch, gShape.seq));
        model->backward(1.0F);
        run.norms.push_back(clipByGlobalNorm(model->gradients(), kClip));
        adamw.step(model->parameters(), model->gradients(), kLearningRate);
    }
    run.parameters.assign(model->parameters().begin(), model->parameters().end());
    return run;
}

ModelRun gpuSteps(Checker& check, const GptConfig& config, const Batch& batch, std::size_t steps,
                  cuda::Precision precision, bool geluEpilogue)
{
    ModelRun run;
    auto model =
        cuda::CudaGpt::create(config, {gShape.batch, gShape.seq, precision, geluEpilogue, 0});
    if (!ok(check, model, "create") || !ok(check, model->initialize(3), "initialize"))
        return run;
    for (std::size_t step = 0; step < steps; ++step) {
        if (!ok(check, model->zeroGradients(), "zeroGradients"))
            return run;
        auto loss = model->forward(batch.tokens, batch.targets, gShape.batch, gShape.seq);
        if (!ok(check, loss, "forward") || !ok(check, model->backward(1.0F), "backward"))
            return run;
        auto norm = model->optimizerStep(kLearningRate, kClip, AdamWParams{});
        if (!ok(check, norm, "optimizerStep"))
            return run;
        run.losses.push_back(*loss);
        run.norms.push_back(*norm);
    }
    run.parameters.resize(model->layout().totalSize());
    (void)ok(check, model->downloadParameters(run.parameters), "downloadParameters");
    return run;
}

// The worst relative 2-norm error over the parameter tensors. The key third of each
// attn.c_attn.bias is left out and returned separately as its largest absolute difference: its
// exact gradient is zero, so each backend's Adam steps follow its own rounding noise there
// (docs/trainer.md), which can be as large as the learning rate per step.
struct ParameterComparison {
    double worstRelative = 0.0;
    double keyBiasDrift = 0.0;
};
ParameterComparison compareParameters(const ParameterLayout& layout, const GptConfig& config,
                                      const std::vector<float>& got, const float* want)
{
    ParameterComparison result;
    for (const ParameterTensor& tensor : layout.tensors()) {
        const bool qkvBias = tensor.name.find("attn.c_attn.bias") != std::string::npos;
        if (!qkvBias) {
            result.worstRelative =
                std::max(result.worstRelative, relativeError(got.data() + tensor.offset,
                                                             want + tensor.offset, tensor.size));
            continue;
        }
        const std::size_t c = config.width;
        for (const std::size_t part : {std::size_t{0}, std::size_t{2}})
            result.worstRelative = std::max(
                result.worstRelative, relativeError(got.data() + tensor.offset + part * c,
                                                    want + tensor.offset + part * c, c, 1e-6));
        for (std::size_t i = c; i < 2 * c; ++i)
            result.keyBiasDrift =
                std::max(result.keyBiasDrift, std::fabs(static_cast<double>(got[tensor.offset + i])
                                                        - want[tensor.offset + i]));
    }
    return result;
}

double relative(double got, double want)
{
    return std::fabs(got - want) / std::max(std::fabs(want), 1e-30);
}

// Loss and every tensor's gradient at the initial weights, against the CPU reference.
void checkGradients(Checker& check, cuda::Precision precision, bool geluEpilogue)
{
    const bool fp32 = precision == cuda::Precision::Float32;
    const double lossBound = fp32 ? 1e-5 : 1e-2;
    const double gradientBound = fp32 ? 1e-4 : 5e-2;
    const GptConfig config = smallConfig();
    const Batch batch = randomBatch(config.vocabSize, 1);
    auto cpu = Gpt<float>::create(config, gShape.batch, gShape.seq);
    cpu->initialize(3);
    cpu->zeroGradients();
    const float cpuLoss = *cpu->forward(batch.tokens, batch.targets, gShape.batch, gShape.seq);
    cpu->backward(1.0F);

    auto gpu =
        cuda::CudaGpt::create(config, {gShape.batch, gShape.seq, precision, geluEpilogue, 0});
    if (!ok(check, gpu, "create") || !ok(check, gpu->initialize(3), "initialize"))
        return;
    std::vector<float> parameters(gpu->layout().totalSize());
    (void)ok(check, gpu->downloadParameters(parameters), "downloadParameters");
    GPU_EXPECT(check, std::memcmp(parameters.data(), cpu->parameters().data(),
                                  parameters.size() * sizeof(float))
                          == 0);  // the same initialisation, bit for bit
    auto loss = gpu->forward(batch.tokens, batch.targets, gShape.batch, gShape.seq);
    if (!ok(check, loss, "forward") || !ok(check, gpu->backward(1.0F), "backward"))
        return;
    const double lossError = relative(*loss, cpuLoss);
    // Flash attention runs exactly where it applies: bf16 at a head size of 64.
    GPU_EXPECT(check, gpu->usesFlashAttention() == (!fp32 && config.headSize() == 64));
    std::printf("%s%s, GELU %s%s: loss %.7f vs CPU %.7f (relative %.2e, bound %.0e)\n",
                fp32 ? "fp32" : "bf16", gpu->usesFlashAttention() ? " flash" : "",
                gpu->usesGeluEpilogue() ? "epilogue" : "kernels",
                geluEpilogue && !gpu->usesGeluEpilogue() ? " (epilogue unsupported)" : "", *loss,
                cpuLoss, lossError, lossBound);
    GPU_EXPECT(check, lossError <= lossBound);
    std::vector<float> gradients(gpu->layout().totalSize());
    (void)ok(check, gpu->downloadGradients(gradients), "downloadGradients");
    const double wholeNorm = globalNorm(cpu->gradients());
    double worst = 0.0;
    std::string worstName;
    for (const ParameterTensor& tensor : gpu->layout().tensors()) {
        const double error =
            relativeError(gradients.data() + tensor.offset, cpu->gradients().data() + tensor.offset,
                          tensor.size, 1e-3 * wholeNorm);
        if (error > worst) {
            worst = error;
            worstName = tensor.name;
        }
        if (error > gradientBound)
            std::printf("FAIL gradient of %s: relative error %.2e > %.0e\n", tensor.name.c_str(),
                        error, gradientBound);
        GPU_EXPECT(check, error <= gradientBound);
    }
    std::printf("  worst gradient tensor %s: relative %.2e (bound %.0e)\n", worstName.c_str(),
                worst, gradientBound);
}

void checkTraining(Checker& check, cuda::Precision precision)
{
    const bool fp32 = precision == cuda::Precision::Float32;
    const GptConfig config = smallConfig();
    const Batch batch = randomBatch(config.vocabSize, 2);
    const ModelRun want = cpuSteps(config, batch, 3);
    const ModelRun got = gpuSteps(check, config, batch, 3, precision, true);
    if (got.losses.size() != want.losses.size())
        return;
    for (std::size_t step = 0; step < want.losses.size(); ++step) {
        const double error = relative(got.losses[step], want.losses[step]);
        std::printf("%s step %zu: loss %.6f vs CPU %.6f (relative %.2e), norm %.5f vs %.5f\n",
                    fp32 ? "fp32" : "bf16", step, got.losses[step], want.losses[step], error,
                    got.norms[step], want.norms[step]);
        GPU_EXPECT(check, error <= (fp32 ? 1e-4 : 2e-2));
    }
    if (fp32) {
        const ParameterComparison parameters = compareParameters(
            ParameterLayout(config), config, got.parameters, want.parameters.data());
        // 2e-4: the biases start at zero, so after three steps they hold a few learning rates,
        // and Adam's normalised update turns a rounding-level gradient difference near zero into
        // a learning-rate-sized one (1.1e-4 was seen at the flash shape); a wrong kernel is off
        // by 1e-2 or more.
        std::printf("fp32 parameters after 3 steps: worst tensor relative %.2e (bound 2e-4), key "
                    "bias drift %.2e (bound 3 steps x lr)\n",
                    parameters.worstRelative, parameters.keyBiasDrift);
        GPU_EXPECT(check, parameters.worstRelative <= 2e-4);
        GPU_EXPECT(check, parameters.keyBiasDrift <= 3 * kLearningRate);
    }
}

// Two runs from one seed give the same bits; parameters and moments survive a round trip to the
// host and continue on the CPU (a GPU checkpoint resumed on the CPU).
void checkDeterminismAndCheckpoints(Checker& check)
{
    const GptConfig config = smallConfig();
    const Batch batch = randomBatch(config.vocabSize, 3);
    for (const auto precision : {cuda::Precision::BFloat16, cuda::Precision::Float32}) {
        const ModelRun first = gpuSteps(check, config, batch, 3, precision, true);
        const ModelRun second = gpuSteps(check, config, batch, 3, precision, true);
        GPU_EXPECT(check, first.losses == second.losses);
        GPU_EXPECT(check, !first.parameters.empty()
                              && std::memcmp(first.parameters.data(), second.parameters.data(),
                                             first.parameters.size() * sizeof(float))
                                     == 0);
    }

    auto gpu = cuda::CudaGpt::create(config,
                                     {gShape.batch, gShape.seq, cuda::Precision::Float32, true, 0});
    if (!ok(check, gpu, "create") || !ok(check, gpu->initialize(9), "initialize"))
        return;
    (void)ok(check, gpu->zeroGradients(), "zeroGradients");
    (void)ok(check, gpu->forward(batch.tokens, batch.targets, gShape.batch, gShape.seq), "forward");
    (void)ok(check, gpu->backward(1.0F), "backward");
    (void)ok(check, gpu->optimizerStep(kLearningRate, kClip, AdamWParams{}), "optimizerStep");
    const std::size_t n = gpu->layout().totalSize();
    std::vector<float> parameters(n), m(n), v(n);
    (void)ok(check, gpu->downloadParameters(parameters), "downloadParameters");
    (void)ok(check, gpu->downloadOptimizerState(m, v), "downloadOptimizerState");
    GPU_EXPECT(check, gpu->optimizerStepCount() == 1);

    // Resume on the CPU from what came back, one more step on each side.
    auto cpu = Gpt<float>::create(config, gShape.batch, gShape.seq);
    std::copy(parameters.begin(), parameters.end(), cpu->parameters().begin());
    AdamW adamw(parameterGroups(cpu->layout()), n, AdamWParams{});
    std::copy(m.begin(), m.end(), adamw.firstMoment().begin());
    std::copy(v.begin(), v.end(), adamw.secondMoment().begin());
    adamw.setStepCount(1);
    cpu->zeroGradients();
    (void)cpu->forward(batch.tokens, batch.targets, gShape.batch, gShape.seq);
    cpu->backward(1.0F);
    clipByGlobalNorm(cpu->gradients(), kClip);
    adamw.step(cpu->parameters(), cpu->gradients(), kLearningRate);
    (void)ok(check, gpu->zeroGradients(), "zeroGradients");
    (void)ok(check, gpu->forward(batch.tokens, batch.targets, gShape.batch, gShape.seq), "forward");
    (void)ok(check, gpu->backward(1.0F), "backward");
    (void)ok(check, gpu->optimizerStep(kLearningRate, kClip, AdamWParams{}), "optimizerStep");
    std::vector<float> after(n);
    (void)ok(check, gpu->downloadParameters(after), "downloadParameters");
    const ParameterComparison resumedStep =
        compareParameters(cpu->layout(), config, after, cpu->parameters().data());
    GPU_EXPECT(check, resumedStep.worstRelative <= 1e-5);
    GPU_EXPECT(check, resumedStep.keyBiasDrift <= kLearningRate);

    // And back: the CPU's state uploaded to a fresh GPU model reads back bit for bit.
    auto resumed = cuda::CudaGpt::create(
        config, {gShape.batch, gShape.seq, cuda::Precision::BFloat16, true, 0});
    if (!ok(check, resumed, "create"))
        return;
    (void)ok(check, resumed->uploadParameters(cpu->parameters()), "uploadParameters");
    (void)ok(check, resumed->uploadOptimizerState(adamw.firstMoment(), adamw.secondMoment(), 2),
             "uploadOptimizerState");
    std::vector<float> readBack(n), readM(n), readV(n);
    (void)ok(check, resumed->downloadParameters(readBack), "downloadParameters");
    (void)ok(check, resumed->downloadOptimizerState(readM, readV), "downloadOptimizerState");
    GPU_EXPECT(check, std::equal(readBack.begin(), readBack.end(), cpu->parameters().begin()));
    GPU_EXPECT(check, std::equal(readM.begin(), readM.end(), adamw.firstMoment().begin()));
    GPU_EXPECT(check, std::equal(readV.begin(), readV.end(), adamw.secondMoment().begin()));
    GPU_EXPECT(check, resumed->optimizerStepCount() == 2);
}

// Bad input and a second backward pass are refused, and the model stays usable; a batch with
// every target masked adds nothing.
void checkRefusals(Checker& check)
{
    const GptConfig config = smallConfig();
    auto gpu = cuda::CudaGpt::create(
        config, {gShape.batch, gShape.seq, cuda::Precision::BFloat16, true, 0});
    if (!ok(check, gpu, "create"))
        return;
    Batch batch = randomBatch(config.vocabSize, 4);
    batch.tokens[0] = static_cast<std::int32_t>(config.vocabSize);
    GPU_EXPECT(check, !gpu->forward(batch.tokens, batch.targets, gShape.batch, gShape.seq));
    batch.tokens[0] = 0;
    GPU_EXPECT(check, !gpu->forward(batch.tokens, batch.targets, gShape.batch + 1, gShape.seq));
    GPU_EXPECT(check, static_cast<bool>(
                          gpu->forward(batch.tokens, batch.targets, gShape.batch, gShape.seq)));
    GPU_EXPECT(check, static_cast<bool>(gpu->backward(1.0F)));
    GPU_EXPECT(check, !gpu->backward(1.0F));  // the logits hold their gradient now

    // Every target masked: loss 0 and nothing added to the gradients.
    GPU_EXPECT(check, static_cast<bool>(gpu->zeroGradients()));
    const std::vector<std::int32_t> masked(batch.targets.size(), -1);
    auto loss = gpu->forward(batch.tokens, masked, gShape.batch, gShape.seq);
    GPU_EXPECT(check, loss && *loss == 0.0F);
    GPU_EXPECT(check, static_cast<bool>(gpu->backward(1.0F)));
    std::vector<float> gradients(gpu->layout().totalSize(), 1.0F);
    GPU_EXPECT(check, static_cast<bool>(gpu->downloadGradients(gradients)));
    GPU_EXPECT(check,
               std::all_of(gradients.begin(), gradients.end(), [](float g) { return g == 0.0F; }));
}

// GPT-2 124M at its full shape (T 1024, padded vocabulary 50304, 12 heads of 64), batch 2: the
// bf16 path's loss and every tensor's gradient against the fp32 path's from the same weights
// (loss 1e-2, gradients 5e-2 as at the small shape), and both losses near ln(50257) at
// initialisation. The CPU reference is too slow at this size; the fp32 path is held to it above.
void checkFullShape(Checker& check)
{
    const GptConfig config = GptConfig::gpt2Small();
    const std::size_t batch = 2;
    const std::size_t seq = 1024;
    const CounterRng rng(17);
    std::vector<std::int32_t> tokens(batch * seq);
    std::vector<std::int32_t> targets(batch * seq);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        tokens[i] = static_cast<std::int32_t>(rng.bits(1, i) % config.vocabSize);
        targets[i] = static_cast<std::int32_t>(rng.bits(2, i) % config.vocabSize);
    }
    std::vector<float> gradients[2];
    float losses[2] = {0.0F, 0.0F};
    const cuda::Precision precisions[2] = {cuda::Precision::Float32, cuda::Precision::BFloat16};
    for (int p = 0; p < 2; ++p) {
        auto gpu = cuda::CudaGpt::create(config, {batch, seq, precisions[p], true, 0});
        if (!ok(check, gpu, "create 124M") || !ok(check, gpu->initialize(5), "initialize 124M")
            || !ok(check, gpu->zeroGradients(), "zeroGradients 124M"))
            return;
        auto loss = gpu->forward(tokens, targets, batch, seq);
        if (!ok(check, loss, "forward 124M") || !ok(check, gpu->backward(1.0F), "backward 124M"))
            return;
        losses[p] = *loss;
        gradients[p].resize(gpu->layout().totalSize());
        (void)ok(check, gpu->downloadGradients(gradients[p]), "downloadGradients 124M");
    }
    const double uniform = std::log(static_cast<double>(config.vocabSize));
    std::printf("GPT-2 124M, B 2 x T 1024: loss fp32 %.6f, bf16 %.6f (relative %.2e, bound 1e-2), "
                "ln(V) %.4f\n",
                losses[0], losses[1], relative(losses[1], losses[0]), uniform);
    GPU_EXPECT(check, std::fabs(losses[0] - uniform) < 0.5);
    GPU_EXPECT(check, relative(losses[1], losses[0]) <= 1e-2);
    const ParameterLayout layout(config);
    const double wholeNorm = globalNorm(gradients[0]);
    double worst = 0.0;
    std::string worstName;
    for (const ParameterTensor& tensor : layout.tensors()) {
        const double error =
            relativeError(gradients[1].data() + tensor.offset, gradients[0].data() + tensor.offset,
                          tensor.size, 1e-3 * wholeNorm);
        if (error > worst) {
            worst = error;
            worstName = tensor.name;
        }
        if (error > 5e-2)
            std::printf("FAIL 124M gradient of %s: bf16 vs fp32 relative %.2e > 5e-2\n",
                        tensor.name.c_str(), error);
        GPU_EXPECT(check, error <= 5e-2);
    }
    std::printf("  124M worst gradient tensor %s: bf16 vs fp32 relative %.2e (bound 5e-2)\n",
                worstName.c_str(), worst);
}

}  // namespace

int main(int argc, char** argv)
{
    // "one-step": one bf16 training step at the odd and the flash shape, for compute-sanitizer.
    const bool oneStep = argc > 1 && std::strcmp(argv[1], "one-step") == 0;
    const bool skipFull = argc > 1 && std::strcmp(argv[1], "--skip-full-shape") == 0;
    return sealtrain::gpu_test::runGpuTest(kName, [&](Checker& check) {
        if (oneStep) {  // the odd shape (unfused attention) and the flash shape
            for (const Shape& shape : {oddShape(), flashShape()}) {
                gShape = shape;
                (void)gpuSteps(check, gShape.config, randomBatch(gShape.config.vocabSize, 2), 1,
                               cuda::Precision::BFloat16, true);
            }
            return;
        }
        checkKernels<float>(check);
        checkKernels<__nv_bfloat16>(check);
        for (const Shape& shape : {defaultShape(), oddShape(), flashShape()}) {
            gShape = shape;
            std::printf("-- %s\n", shape.name);
            checkGradients(check, cuda::Precision::Float32, true);
            checkGradients(check, cuda::Precision::Float32, false);
            checkGradients(check, cuda::Precision::BFloat16, true);
            checkGradients(check, cuda::Precision::BFloat16, false);
            checkTraining(check, cuda::Precision::Float32);
            checkTraining(check, cuda::Precision::BFloat16);
            checkDeterminismAndCheckpoints(check);
        }
        gShape = defaultShape();
        checkRefusals(check);
        if (!skipFull)
            checkFullShape(check);
    });
}
