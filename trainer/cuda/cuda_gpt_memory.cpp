// EngineFor<T> (cuda_gpt_engine.h), its memory: the layout of the one device allocation that holds
// parameters, gradients, AdamW's moments, every activation and the scratch, carved once at the
// largest batch; the transfers between that memory and the host; zeroing the gradients.
#include "cuda_gpt_engine.h"
#include "sealtrain/trainer/cuda/cuda_check.h"
#include "sealtrain/trainer/cuda/kernels.h"

#include <algorithm>
#include <cstring>

namespace sealtrain::trainer::cuda::Internal {

namespace {

constexpr std::size_t kAlignmentBytes = 256;

float bfloat16ToFloat(std::uint16_t bits)
{
    const std::uint32_t widened = static_cast<std::uint32_t>(bits) << 16U;
    float value = 0.0F;
    std::memcpy(&value, &widened, sizeof(value));
    return value;
}

}  // namespace

// Carves one allocation into typed buffers, each on a 256-byte boundary; with a null base it
// only counts, so the same code sizes and assigns the buffers.
class Arena {
public:
    explicit Arena(char* base)
        : base_(base)
    {
    }
    template <typename U>
    U* take(std::size_t count)
    {
        used_ = (used_ + kAlignmentBytes - 1) / kAlignmentBytes * kAlignmentBytes;
        U* where = base_ == nullptr ? nullptr : reinterpret_cast<U*>(base_ + used_);
        used_ += count * sizeof(U);
        return where;
    }
    [[nodiscard]] std::size_t used() const { return used_; }

private:
    char* base_;
    std::size_t used_ = 0;
};

template <typename T>
EngineFor<T>::~EngineFor()
{
    // Nothing here can report a failure; the memory goes back with the context either way.
    if (stream_ != nullptr)
        cudaStreamSynchronize(stream_);
    gemm_.reset();  // its handles were last used on stream_, so they go first
    for (cudaEvent_t event : bucketEvents_)
        cudaEventDestroy(event);
    cudaFree(memory_);
    if (stream_ != nullptr)
        cudaStreamDestroy(stream_);
}

template <typename T>
void EngineFor<T>::carve(Arena& arena)
{
    const std::size_t n = layout_.totalSize();
    const std::size_t b = options_.maxBatch;
    const std::size_t t = options_.maxSeq;
    const std::size_t rows = b * t;
    const std::size_t c = config_.width;
    const std::size_t attention = b * config_.heads * t * t;
    master_ = arena.take<float>(n);
    low_ = kLowPrecision ? arena.take<T>(n) : nullptr;
    gradients_ = arena.take<T>(n);
    m_ = arena.take<float>(n);
    v_ = arena.take<float>(n);
    encoded_ = arena.take<T>(rows * c);
    layers_.resize(config_.layers);
    for (Layer& layer : layers_) {
        layer.ln1 = arena.take<T>(rows * c);
        layer.ln1Mean = arena.take<float>(rows);
        layer.ln1Rstd = arena.take<float>(rows);
        layer.qkv = arena.take<T>(rows * 3 * c);
        layer.att = flash_ ? nullptr : arena.take<T>(attention);
        layer.lse = flash_ ? arena.take<float>(b * config_.heads * t) : nullptr;
        layer.attY = arena.take<T>(rows * c);
        layer.residual2 = arena.take<T>(rows * c);
        layer.ln2 = arena.take<T>(rows * c);
        layer.ln2Mean = arena.take<float>(rows);
        layer.ln2Rstd = arena.take<float>(rows);
        layer.fc = arena.take<T>(rows * 4 * c);
        layer.fcGelu = arena.take<T>(rows * 4 * c);
        layer.residual3 = arena.take<T>(rows * c);
    }
    lnf_ = arena.take<T>(rows * c);
    lnfMean_ = arena.take<float>(rows);
    lnfRstd_ = arena.take<float>(rows);
    logits_ = arena.take<T>(rows * config_.paddedVocabSize);
    losses_ = arena.take<float>(rows);
    logSumExp_ = arena.take<float>(rows);
    projection_ = arena.take<T>(rows * c);
    // The unfused attention's per-head copies and T×T scratch; flash attention needs none.
    const std::size_t heads = flash_ ? 0 : rows * c;
    q_ = arena.take<T>(heads);
    k_ = arena.take<T>(heads);
    vHeads_ = arena.take<T>(heads);
    y_ = arena.take<T>(heads);
    dresidual_ = arena.take<T>(rows * c);
    dln_ = arena.take<T>(rows * c);
    dfc_ = arena.take<T>(rows * 4 * c);
    dfcGelu_ = geluEpilogue_ ? nullptr : arena.take<T>(rows * 4 * c);
    dqkv_ = arena.take<T>(rows * 3 * c);
    dattY_ = arena.take<T>(rows * c);
    datt_ = arena.take<T>(flash_ ? 0 : attention);
    dq_ = arena.take<T>(heads);
    dk_ = arena.take<T>(heads);
    dv_ = arena.take<T>(heads);
    dy_ = arena.take<T>(heads);
    dots_ = flash_ ? arena.take<float>(b * config_.heads * t) : nullptr;
    columnScratch_ = arena.take<float>(columnScratchFloats(rows, 4 * c, 1));
    sumPartials_ = arena.take<double>(kMaxSumOfSquaresBlocks);
    sumResult_ = arena.take<double>(1);
    clipScale_ = arena.take<float>(1);
    adamwChunkCount_ = planAdamWChunks(parameterGroups(layout_)).size();
    adamwChunks_ = arena.take<AdamWChunk>(adamwChunkCount_);
    tokens_ = arena.take<std::int32_t>(rows);
    targets_ = arena.take<std::int32_t>(rows);
    bucketTokens_ = arena.take<std::int32_t>(rows);
    bucketStarts_ = arena.take<std::int32_t>(rows + 1);
    bucketPositions_ = arena.take<std::int32_t>(rows);
}

template <typename T>
void EngineFor<T>::allocate()
{
    SEALTRAIN_CUDA_CHECK(cudaSetDevice(options_.device));
    SEALTRAIN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    gemm_ = std::make_unique<Gemm>(kLowPrecision ? ElementType::BFloat16 : ElementType::Float32);
    if (options_.geluEpilogue) {
        // The MLP's two GELU epilogues at the largest batch; the GELU kernels where cuBLASLt has
        // no algorithm for them (the pointers are not looked at).
        const LinearShape fc{options_.maxBatch * options_.maxSeq, config_.width, 4 * config_.width};
        const LinearShape fcProj{fc.rows, fc.outWidth, fc.inWidth};
        geluEpilogue_ =
            gemm_->supports(linearForwardCall(nullptr, nullptr, nullptr, nullptr, fc,
                                              GemmEpilogue::GeluBias, nullptr))
            && gemm_->supports(linearInputGradientCall(nullptr, nullptr, nullptr, fcProj,
                                                       GemmEpilogue::GeluBackward, nullptr));
    }
    flash_ = kLowPrecision && options_.flashAttention
             && kernels::flashAttentionFits(
                 {options_.maxBatch, options_.maxSeq, config_.heads, config_.headSize()});
    buckets_ = planGradientBuckets(config_, layout_);
    bucketEvents_.resize(buckets_.size(), nullptr);
    for (cudaEvent_t& event : bucketEvents_)
        SEALTRAIN_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    Arena sizing(nullptr);
    carve(sizing);
    SEALTRAIN_CUDA_CHECK(cudaMalloc(&memory_, sizing.used()));
    Arena arena(memory_);
    carve(arena);
    deviceBytes_ = sizing.used();
    SEALTRAIN_CUDA_CHECK(cudaMemsetAsync(memory_, 0, sizing.used(), stream_));
    const std::vector<AdamWChunk> chunks = planAdamWChunks(parameterGroups(layout_));
    SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(adamwChunks_, chunks.data(),
                                         chunks.size() * sizeof(AdamWChunk), cudaMemcpyHostToDevice,
                                         stream_));
    SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    hostLosses_.resize(options_.maxBatch * options_.maxSeq);
}

template <typename T>
T* EngineFor<T>::weight(std::size_t tensor) const
{
    const std::size_t offset = layout_.tensors()[tensor].offset;
    if constexpr (kLowPrecision)
        return low_ + offset;
    else
        return master_ + offset;
}

template <typename T>
T* EngineFor<T>::gradient(std::size_t tensor) const
{
    return gradients_ + layout_.tensors()[tensor].offset;
}

template <typename T>
void EngineFor<T>::uploadParameters(std::span<const float> parameters)
{
    SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(master_, parameters.data(), parameters.size_bytes(),
                                         cudaMemcpyHostToDevice, stream_));
    if constexpr (kLowPrecision)
        kernels::convertFromFloat(low_, master_, parameters.size(), stream_);
    SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

template <typename T>
void EngineFor<T>::downloadParameters(std::span<float> parameters)
{
    SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(parameters.data(), master_, parameters.size_bytes(),
                                         cudaMemcpyDeviceToHost, stream_));
    SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

template <typename T>
void EngineFor<T>::downloadAsFloat(const T* source, std::span<float> out)
{
    if constexpr (kLowPrecision) {
        std::vector<std::uint16_t> bits(out.size());
        SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(bits.data(), source,
                                             bits.size() * sizeof(std::uint16_t),
                                             cudaMemcpyDeviceToHost, stream_));
        SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream_));
        std::transform(bits.begin(), bits.end(), out.begin(), bfloat16ToFloat);
    } else {
        SEALTRAIN_CUDA_CHECK(
            cudaMemcpyAsync(out.data(), source, out.size_bytes(), cudaMemcpyDeviceToHost, stream_));
        SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
}

template <typename T>
void EngineFor<T>::downloadGradients(std::span<float> gradients)
{
    downloadAsFloat(gradients_, gradients);
}

template <typename T>
void EngineFor<T>::downloadLogits(std::size_t row, std::span<float> logits)
{
    downloadAsFloat(logits_ + row * config_.paddedVocabSize, logits);
}

template <typename T>
void EngineFor<T>::uploadOptimizerState(std::span<const float> m, std::span<const float> v)
{
    SEALTRAIN_CUDA_CHECK(
        cudaMemcpyAsync(m_, m.data(), m.size_bytes(), cudaMemcpyHostToDevice, stream_));
    SEALTRAIN_CUDA_CHECK(
        cudaMemcpyAsync(v_, v.data(), v.size_bytes(), cudaMemcpyHostToDevice, stream_));
    SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

template <typename T>
void EngineFor<T>::downloadOptimizerState(std::span<float> m, std::span<float> v)
{
    SEALTRAIN_CUDA_CHECK(
        cudaMemcpyAsync(m.data(), m_, m.size_bytes(), cudaMemcpyDeviceToHost, stream_));
    SEALTRAIN_CUDA_CHECK(
        cudaMemcpyAsync(v.data(), v_, v.size_bytes(), cudaMemcpyDeviceToHost, stream_));
    SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// The bias tensor follows its weight in the layout.
template <typename T>
void EngineFor<T>::zeroGradients()
{
    SEALTRAIN_CUDA_CHECK(cudaMemsetAsync(gradients_, 0, layout_.totalSize() * sizeof(T), stream_));
}

template <typename T>
void EngineFor<T>::synchronize()
{
    SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// Each member once per activation type (the class is defined in pieces, so not as a whole).
// NOLINTBEGIN(bugprone-macro-parentheses): T is a type here.
#define SEALTRAIN_INSTANTIATE_ENGINE_MEMORY(T)                                                     \
    template EngineFor<T>::~EngineFor();                                                           \
    template void EngineFor<T>::carve(Arena&);                                                     \
    template void EngineFor<T>::allocate();                                                        \
    template T* EngineFor<T>::weight(std::size_t) const;                                           \
    template T* EngineFor<T>::gradient(std::size_t) const;                                         \
    template void EngineFor<T>::uploadParameters(std::span<const float>);                          \
    template void EngineFor<T>::downloadParameters(std::span<float>);                              \
    template void EngineFor<T>::downloadAsFloat(const T*, std::span<float>);                       \
    template void EngineFor<T>::downloadGradients(std::span<float>);                               \
    template void EngineFor<T>::downloadLogits(std::size_t, std::span<float>);                     \
    template void EngineFor<T>::uploadOptimizerState(std::span<const float>,                       \
                                                     std::span<const float>);                      \
    template void EngineFor<T>::downloadOptimizerState(std::span<float>, std::span<float>);        \
    template void EngineFor<T>::zeroGradients();                                                   \
    template void EngineFor<T>::synchronize();

SEALTRAIN_INSTANTIATE_ENGINE_MEMORY(float)
SEALTRAIN_INSTANTIATE_ENGINE_MEMORY(__nv_bfloat16)
// NOLINTEND(bugprone-macro-parentheses)

}  // namespace sealtrain::trainer::cuda::Internal
