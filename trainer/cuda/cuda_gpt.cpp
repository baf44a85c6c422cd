// CudaGpt (cuda_gpt.h): buffers, the forward and backward passes, the optimizer step, and the
// Result boundary. The model is the CPU reference's (gpt.cpp), step for step; where the GPU
// fuses or reorders, a comment says so. Row-major tensors meet column-major cuBLAS as gemm.h says:
// a row-major (rows, cols) array is the column-major (cols, rows) matrix.
#include "sealtrain/trainer/cuda/cuda_gpt.h"

#include "sealtrain/trainer/counter_rng.h"
#include "sealtrain/trainer/cuda/cuda_check.h"
#include "sealtrain/trainer/cuda/gemm.h"
#include "sealtrain/trainer/cuda/gradient_reducer.h"
#include "sealtrain/trainer/cuda/kernels.h"
#include "sealtrain/trainer/cuda/plan.h"

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace sealtrain::trainer::cuda {
namespace {

constexpr std::size_t kAlignmentBytes = 256;
constexpr std::size_t kWidthMultiple = 8;

// One sentence for a person from whatever a CUDA, cuBLAS or NCCL check threw (file, line, call
// and the library's own words).
Error deviceError(const std::exception& failure)
{
    std::string detail = failure.what();
    std::replace(detail.begin(), detail.end(), '\n', ' ');
    for (std::size_t at = detail.find(". "); at != std::string::npos; at = detail.find(". "))
        detail.replace(at, 2, "; ");
    while (!detail.empty() && (detail.back() == '.' || detail.back() == ' '))
        detail.pop_back();
    return Error(ErrorCode::Internal, "The CUDA backend failed (" + detail
                                          + "); check the GPU with nvidia-smi and that it has "
                                            "free memory, then start again.");
}

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

float bfloat16ToFloat(std::uint16_t bits)
{
    const std::uint32_t widened = static_cast<std::uint32_t>(bits) << 16U;
    float value = 0.0F;
    std::memcpy(&value, &widened, sizeof(value));
    return value;
}

}  // namespace

// The precision-independent part: configuration, the first error, and the Result boundary.
class CudaGpt::Engine {
public:
    Engine(const GptConfig& config, const CudaGptOptions& options)
        : config_(config)
        , layout_(config)
        , options_(options)
    {
    }
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;
    Engine(Engine&&) = delete;
    Engine& operator=(Engine&&) = delete;
    virtual ~Engine() = default;

    virtual void allocate() = 0;
    virtual void uploadParameters(std::span<const float> parameters) = 0;
    virtual void downloadParameters(std::span<float> parameters) = 0;
    virtual void downloadGradients(std::span<float> gradients) = 0;
    virtual void uploadOptimizerState(std::span<const float> m, std::span<const float> v) = 0;
    virtual void downloadOptimizerState(std::span<float> m, std::span<float> v) = 0;
    virtual float forward(std::span<const std::int32_t> tokens,
                          std::span<const std::int32_t> targets, std::size_t batch,
                          std::size_t seq) = 0;
    virtual void zeroGradients() = 0;
    virtual void backward(float lossScale, GradientReducer* reduce) = 0;
    virtual double optimizerStep(double learningRate, double maxGradientNorm,
                                 const AdamWParams& params) = 0;
    virtual void synchronize() = 0;

    // Runs `work` unless an earlier call failed; the first failure is kept and returned again.
    template <typename Work>
    auto guarded(Work&& work) -> Result<std::invoke_result_t<Work>>
    {
        using Value = std::invoke_result_t<Work>;
        if (failure_)
            return *failure_;
        try {
            if constexpr (std::is_void_v<Value>) {
                work();
                return success();
            } else {
                return work();
            }
        } catch (const std::exception& failure) {
            failure_ = deviceError(failure);
            return *failure_;
        }
    }

    GptConfig config_;
    ParameterLayout layout_;
    CudaGptOptions options_;
    std::optional<Error> failure_;
    bool forwardPending_ = false;  // a forward pass whose backward has not run (logits intact)
    bool geluEpilogue_ = false;    // options_.geluEpilogue, where cuBLASLt supports it
    std::uint64_t stepCount_ = 0;
    std::size_t deviceBytes_ = 0;
};

namespace {

template <typename T>
class EngineFor final : public CudaGpt::Engine {
public:
    using Engine::Engine;
    EngineFor(const EngineFor&) = delete;
    EngineFor& operator=(const EngineFor&) = delete;
    EngineFor(EngineFor&&) = delete;
    EngineFor& operator=(EngineFor&&) = delete;
    ~EngineFor() override;

    void allocate() override;
    void uploadParameters(std::span<const float> parameters) override;
    void downloadParameters(std::span<float> parameters) override;
    void downloadGradients(std::span<float> gradients) override;
    void uploadOptimizerState(std::span<const float> m, std::span<const float> v) override;
    void downloadOptimizerState(std::span<float> m, std::span<float> v) override;
    float forward(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets,
                  std::size_t batch, std::size_t seq) override;
    void zeroGradients() override;
    void backward(float lossScale, GradientReducer* reduce) override;
    double optimizerStep(double learningRate, double maxGradientNorm,
                         const AdamWParams& params) override;
    void synchronize() override;

private:
    static constexpr bool kLowPrecision = !std::is_same_v<T, float>;

    struct Layer {
        T *ln1, *qkv, *att, *attY, *residual2, *ln2, *fc, *fcGelu, *residual3;
        float *ln1Mean, *ln1Rstd, *ln2Mean, *ln2Rstd;
    };
    void carve(Arena& arena);
    // The weights the GEMMs and kernels read: the bf16 copy, or the fp32 master in fp32 mode.
    [[nodiscard]] T* weight(std::size_t tensor) const;
    [[nodiscard]] T* gradient(std::size_t tensor) const;
    void linearForward(T* out, const T* in, std::size_t weightTensor, std::size_t rows,
                       std::size_t inWidth, std::size_t outWidth, GemmEpilogue epilogue,
                       T* aux = nullptr);
    void linearBackward(T* din, const T* dout, const T* in, std::size_t weightTensor,
                        std::size_t rows, std::size_t inWidth, std::size_t outWidth,
                        GemmEpilogue dinEpilogue = GemmEpilogue::None, const T* aux = nullptr);
    void attentionForward(const Layer& layer);
    void attentionBackward(T* dqkv, const T* dattY, const Layer& layer);

    std::unique_ptr<Gemm> gemm_;
    cudaStream_t stream_ = nullptr;
    std::vector<GradientBucket> buckets_;
    std::vector<cudaEvent_t> bucketEvents_;
    char* memory_ = nullptr;

    // Parameters and optimizer state, in ParameterLayout's order.
    float* master_ = nullptr;
    T* low_ = nullptr;  // bf16 copy (null in fp32 mode)
    T* gradients_ = nullptr;
    float* m_ = nullptr;
    float* v_ = nullptr;
    // Activations of the last forward pass.
    T* encoded_ = nullptr;
    std::vector<Layer> layers_;
    T* lnf_ = nullptr;
    float* lnfMean_ = nullptr;
    float* lnfRstd_ = nullptr;
    T* logits_ = nullptr;  // becomes dlogits in backward, in place
    float* losses_ = nullptr;
    float* logSumExp_ = nullptr;
    // Scratch shared by the layers.
    T* projection_ = nullptr;
    T *q_ = nullptr, *k_ = nullptr, *vHeads_ = nullptr, *y_ = nullptr;
    T *dresidual_ = nullptr, *dln_ = nullptr, *dfc_ = nullptr, *dfcGelu_ = nullptr;
    T *dqkv_ = nullptr, *dattY_ = nullptr, *datt_ = nullptr;
    T *dq_ = nullptr, *dk_ = nullptr, *dv_ = nullptr, *dy_ = nullptr;
    float* columnScratch_ = nullptr;
    double* sumPartials_ = nullptr;
    double* sumResult_ = nullptr;
    std::int32_t *tokens_ = nullptr, *targets_ = nullptr;
    std::int32_t *bucketTokens_ = nullptr, *bucketStarts_ = nullptr, *bucketPositions_ = nullptr;

    // What the last forward pass ran on.
    std::size_t batch_ = 0;
    std::size_t seq_ = 0;
    std::size_t targetCount_ = 0;
    std::size_t tokenBuckets_ = 0;
    std::vector<float> hostLosses_;
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
        layer.att = arena.take<T>(attention);
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
    q_ = arena.take<T>(rows * c);
    k_ = arena.take<T>(rows * c);
    vHeads_ = arena.take<T>(rows * c);
    y_ = arena.take<T>(rows * c);
    dresidual_ = arena.take<T>(rows * c);
    dln_ = arena.take<T>(rows * c);
    dfc_ = arena.take<T>(rows * 4 * c);
    dfcGelu_ = geluEpilogue_ ? nullptr : arena.take<T>(rows * 4 * c);
    dqkv_ = arena.take<T>(rows * 3 * c);
    dattY_ = arena.take<T>(rows * c);
    datt_ = arena.take<T>(attention);
    dq_ = arena.take<T>(rows * c);
    dk_ = arena.take<T>(rows * c);
    dv_ = arena.take<T>(rows * c);
    dy_ = arena.take<T>(rows * c);
    columnScratch_ = arena.take<float>(columnScratchFloats(rows, 4 * c, 1));
    sumPartials_ = arena.take<double>(kMaxSumOfSquaresBlocks);
    sumResult_ = arena.take<double>(1);
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
void EngineFor<T>::downloadGradients(std::span<float> gradients)
{
    if constexpr (kLowPrecision) {
        std::vector<std::uint16_t> bits(gradients.size());
        SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(bits.data(), gradients_,
                                             bits.size() * sizeof(std::uint16_t),
                                             cudaMemcpyDeviceToHost, stream_));
        SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream_));
        std::transform(bits.begin(), bits.end(), gradients.begin(), bfloat16ToFloat);
    } else {
        SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(gradients.data(), gradients_, gradients.size_bytes(),
                                             cudaMemcpyDeviceToHost, stream_));
        SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
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
void EngineFor<T>::linearForward(T* out, const T* in, std::size_t weightTensor, std::size_t rows,
                                 std::size_t inWidth, std::size_t outWidth, GemmEpilogue epilogue,
                                 T* aux)
{
    gemm_->run(linearForwardCall(out, in, weight(weightTensor), weight(weightTensor + 1),
                                 {rows, inWidth, outWidth}, epilogue, aux),
               stream_);
}

// din = dout · Wᵀ (written; with GeluBackward also multiplied by GELU′(aux)), dW += inᵀ · dout,
// db += Σ_rows dout.
template <typename T>
void EngineFor<T>::linearBackward(T* din, const T* dout, const T* in, std::size_t weightTensor,
                                  std::size_t rows, std::size_t inWidth, std::size_t outWidth,
                                  GemmEpilogue dinEpilogue, const T* aux)
{
    const LinearShape shape{rows, inWidth, outWidth};
    gemm_->run(linearInputGradientCall(din, dout, weight(weightTensor), shape, dinEpilogue, aux),
               stream_);
    gemm_->run(linearWeightGradientCall(gradient(weightTensor), dout, in, shape), stream_);
    kernels::biasBackward(gradient(weightTensor + 1), columnScratch_, dout, rows, outWidth,
                          stream_);
}

// Per head: scores = q·kᵀ/√hs, causal softmax, y = probs·v, as cuBLAS strided-batched products
// over (batch · heads) matrices; probs stay in the layer's att buffer for backward.
template <typename T>
void EngineFor<T>::attentionForward(const Layer& layer)
{
    const kernels::AttentionDims dims{batch_, seq_, config_.heads, config_.headSize()};
    const AttentionGemmShape shape{dims.batch * dims.heads, dims.seq, dims.headSize};
    kernels::splitHeads(q_, k_, vHeads_, layer.qkv, dims, stream_);
    gemm_->runBatched(attentionScoresCall(layer.att, q_, k_, shape), stream_);
    kernels::causalSoftmaxForward(layer.att, layer.att, shape.matrices, shape.seq, stream_);
    gemm_->runBatched(attentionOutputCall(y_, layer.att, vHeads_, shape), stream_);
    kernels::concatHeads(layer.attY, y_, dims, stream_);
}

// q, k and v are split again from the layer's qkv rather than kept per layer.
template <typename T>
void EngineFor<T>::attentionBackward(T* dqkv, const T* dattY, const Layer& layer)
{
    const kernels::AttentionDims dims{batch_, seq_, config_.heads, config_.headSize()};
    const AttentionGemmShape shape{dims.batch * dims.heads, dims.seq, dims.headSize};
    kernels::splitHeadOutputs(dy_, dattY, dims, stream_);
    kernels::splitHeads(q_, k_, vHeads_, layer.qkv, dims, stream_);
    gemm_->runBatched(attentionProbsGradientCall(datt_, dy_, vHeads_, shape), stream_);
    gemm_->runBatched(attentionValueGradientCall(dv_, layer.att, dy_, shape), stream_);
    kernels::causalSoftmaxBackward(datt_, datt_, layer.att, shape.matrices, shape.seq, stream_);
    gemm_->runBatched(attentionQueryGradientCall(dq_, datt_, k_, shape), stream_);
    gemm_->runBatched(attentionKeyGradientCall(dk_, datt_, q_, shape), stream_);
    kernels::mergeHeadGradients(dqkv, dq_, dk_, dv_, dims, stream_);
}

template <typename T>
float EngineFor<T>::forward(std::span<const std::int32_t> tokens,
                            std::span<const std::int32_t> targets, std::size_t batch,
                            std::size_t seq)
{
    batch_ = batch;
    seq_ = seq;
    const std::size_t rows = batch * seq;
    const std::size_t c = config_.width;
    targetCount_ = static_cast<std::size_t>(
        std::count_if(targets.begin(), targets.end(), [](std::int32_t t) { return t >= 0; }));
    SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(tokens_, tokens.data(), tokens.size_bytes(),
                                         cudaMemcpyHostToDevice, stream_));
    SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(targets_, targets.data(), targets.size_bytes(),
                                         cudaMemcpyHostToDevice, stream_));
    // The embedding's backward pass sums each token's positions in a fixed order (plan.h).
    const TokenBuckets buckets = bucketTokens(tokens);
    tokenBuckets_ = buckets.tokens.size();
    SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(bucketTokens_, buckets.tokens.data(),
                                         buckets.tokens.size() * sizeof(std::int32_t),
                                         cudaMemcpyHostToDevice, stream_));
    SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(bucketStarts_, buckets.starts.data(),
                                         buckets.starts.size() * sizeof(std::int32_t),
                                         cudaMemcpyHostToDevice, stream_));
    SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(bucketPositions_, buckets.positions.data(),
                                         buckets.positions.size() * sizeof(std::int32_t),
                                         cudaMemcpyHostToDevice, stream_));

    constexpr std::size_t wte = 0;
    constexpr std::size_t wpe = 1;
    const std::size_t lnf = layout_.tensors().size() - 2;
    kernels::encoderForward(encoded_, tokens_, weight(wte), weight(wpe), batch, seq, c, stream_);
    // Each LayerNorm after the first is fused with the residual addition before it: the first
    // block's ln_1 reads the embedding, every later one (and ln_f) reads residual3 = residual2 +
    // the MLP's projection, computed in the same kernel.
    if (config_.layers > 0) {
        const BlockTensors first = blockTensors(0);
        kernels::residualLayerNormForward<T>(
            nullptr, layers_[0].ln1, layers_[0].ln1Mean, layers_[0].ln1Rstd, encoded_, nullptr,
            weight(first.ln1Weight), weight(first.ln1Bias), rows, c, stream_);
    }
    const T* residual = encoded_;
    for (std::size_t l = 0; l < config_.layers; ++l) {
        const BlockTensors p = blockTensors(l);
        Layer& a = layers_[l];
        linearForward(a.qkv, a.ln1, p.qkvWeight, rows, c, 3 * c, GemmEpilogue::Bias);
        attentionForward(a);
        linearForward(projection_, a.attY, p.attnProjWeight, rows, c, c, GemmEpilogue::Bias);
        kernels::residualLayerNormForward(a.residual2, a.ln2, a.ln2Mean, a.ln2Rstd, residual,
                                          projection_, weight(p.ln2Weight), weight(p.ln2Bias), rows,
                                          c, stream_);
        if (geluEpilogue_) {
            linearForward(a.fcGelu, a.ln2, p.fcWeight, rows, c, 4 * c, GemmEpilogue::GeluBias,
                          a.fc);
        } else {
            linearForward(a.fc, a.ln2, p.fcWeight, rows, c, 4 * c, GemmEpilogue::Bias);
            kernels::geluForward(a.fcGelu, a.fc, rows * 4 * c, stream_);
        }
        linearForward(projection_, a.fcGelu, p.fcProjWeight, rows, 4 * c, c, GemmEpilogue::Bias);
        const bool last = l + 1 == config_.layers;
        const BlockTensors next = blockTensors(last ? l : l + 1);
        kernels::residualLayerNormForward(a.residual3, last ? lnf_ : layers_[l + 1].ln1,
                                          last ? lnfMean_ : layers_[l + 1].ln1Mean,
                                          last ? lnfRstd_ : layers_[l + 1].ln1Rstd, a.residual2,
                                          projection_, weight(last ? lnf : next.ln1Weight),
                                          weight(last ? lnf + 1 : next.ln1Bias), rows, c, stream_);
        residual = a.residual3;
    }
    if (config_.layers == 0)
        kernels::residualLayerNormForward<T>(nullptr, lnf_, lnfMean_, lnfRstd_, encoded_, nullptr,
                                             weight(lnf), weight(lnf + 1), rows, c, stream_);
    gemm_->run(lmHeadForwardCall(logits_, lnf_, weight(wte), rows, c, config_.paddedVocabSize),
               stream_);
    const kernels::CrossEntropyDims ce{rows, config_.vocabSize, config_.paddedVocabSize};
    kernels::crossEntropyForward(losses_, logSumExp_, logits_, targets_, ce, stream_);
    SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(hostLosses_.data(), losses_, rows * sizeof(float),
                                         cudaMemcpyDeviceToHost, stream_));
    SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (targetCount_ == 0)
        return 0.0F;
    double sum = 0.0;
    for (std::size_t r = 0; r < rows; ++r)
        sum += hostLosses_[r];
    return static_cast<float>(sum / static_cast<double>(targetCount_));
}

template <typename T>
void EngineFor<T>::zeroGradients()
{
    SEALTRAIN_CUDA_CHECK(cudaMemsetAsync(gradients_, 0, layout_.totalSize() * sizeof(T), stream_));
}

template <typename T>
void EngineFor<T>::backward(float lossScale, GradientReducer* reduce)
{
    const std::size_t rows = batch_ * seq_;
    const std::size_t c = config_.width;
    constexpr std::size_t wte = 0;
    constexpr std::size_t wpe = 1;
    const std::size_t lnf = layout_.tensors().size() - 2;
    const ReduceType reduceType = kLowPrecision ? ReduceType::BFloat16 : ReduceType::Float32;
    std::size_t nextBucket = 0;
    auto bucketReady = [&]() {
        if (reduce == nullptr) {
            ++nextBucket;
            return;
        }
        const GradientBucket& bucket = buckets_[nextBucket];
        SEALTRAIN_CUDA_CHECK(cudaEventRecord(bucketEvents_[nextBucket], stream_));
        reduce->reduceMeanAsync(gradients_ + bucket.offset, bucket.size, reduceType,
                                bucketEvents_[nextBucket]);
        ++nextBucket;
    };

    if (targetCount_ == 0) {
        // Nothing to add (every target masked), but the other ranks still reduce every bucket.
        for (std::size_t bucket = 0; bucket < buckets_.size(); ++bucket)
            bucketReady();
        if (reduce != nullptr)
            reduce->joinInto(stream_);
        return;
    }

    // One buffer holds the residual stream's gradient throughout: each branch reads it as its
    // output gradient and each LayerNorm adds into it, so the residual additions cost nothing.
    SEALTRAIN_CUDA_CHECK(cudaMemsetAsync(dresidual_, 0, rows * c * sizeof(T), stream_));
    const kernels::CrossEntropyDims ce{rows, config_.vocabSize, config_.paddedVocabSize};
    kernels::crossEntropyBackward(logits_, logits_, logSumExp_, targets_,
                                  lossScale / static_cast<float>(targetCount_), ce, stream_);
    gemm_->run(
        lmHeadInputGradientCall(dln_, logits_, weight(wte), rows, c, config_.paddedVocabSize),
        stream_);
    gemm_->run(
        lmHeadWeightGradientCall(gradient(wte), logits_, lnf_, rows, c, config_.paddedVocabSize),
        stream_);
    const T* lastResidual = config_.layers == 0 ? encoded_ : layers_.back().residual3;
    kernels::layerNormBackward(dresidual_, gradient(lnf), gradient(lnf + 1), columnScratch_, dln_,
                               lastResidual, weight(lnf), lnfMean_, lnfRstd_, rows, c, stream_);
    bucketReady();

    for (std::size_t l = config_.layers; l-- > 0;) {
        const BlockTensors p = blockTensors(l);
        const Layer& a = layers_[l];
        const T* residual = l == 0 ? encoded_ : layers_[l - 1].residual3;
        if (geluEpilogue_) {
            linearBackward(dfc_, dresidual_, a.fcGelu, p.fcProjWeight, rows, 4 * c, c,
                           GemmEpilogue::GeluBackward, a.fc);
        } else {
            linearBackward(dfcGelu_, dresidual_, a.fcGelu, p.fcProjWeight, rows, 4 * c, c);
            kernels::geluBackward(dfc_, dfcGelu_, a.fc, rows * 4 * c, stream_);
        }
        linearBackward(dln_, dfc_, a.ln2, p.fcWeight, rows, c, 4 * c);
        kernels::layerNormBackward(dresidual_, gradient(p.ln2Weight), gradient(p.ln2Bias),
                                   columnScratch_, dln_, a.residual2, weight(p.ln2Weight),
                                   a.ln2Mean, a.ln2Rstd, rows, c, stream_);
        linearBackward(dattY_, dresidual_, a.attY, p.attnProjWeight, rows, c, c);
        attentionBackward(dqkv_, dattY_, a);
        linearBackward(dln_, dqkv_, a.ln1, p.qkvWeight, rows, c, 3 * c);
        kernels::layerNormBackward(dresidual_, gradient(p.ln1Weight), gradient(p.ln1Bias),
                                   columnScratch_, dln_, residual, weight(p.ln1Weight), a.ln1Mean,
                                   a.ln1Rstd, rows, c, stream_);
        bucketReady();
    }
    kernels::encoderBackwardPositions(gradient(wpe), dresidual_, batch_, seq_, c, stream_);
    kernels::encoderBackwardTokens(gradient(wte), dresidual_, bucketTokens_, bucketStarts_,
                                   bucketPositions_, tokenBuckets_, c, stream_);
    bucketReady();
    if (reduce != nullptr)
        reduce->joinInto(stream_);
}

template <typename T>
double EngineFor<T>::optimizerStep(double learningRate, double maxGradientNorm,
                                   const AdamWParams& params)
{
    const std::size_t n = layout_.totalSize();
    kernels::sumOfSquares(sumResult_, sumPartials_, gradients_, n, stream_);
    double sumSquares = 0.0;
    SEALTRAIN_CUDA_CHECK(
        cudaMemcpyAsync(&sumSquares, sumResult_, sizeof(double), cudaMemcpyDeviceToHost, stream_));
    SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const double norm = std::sqrt(sumSquares);
    // clipByGlobalNorm's rule, folded into AdamW's read of the gradient.
    float gradientScale = 1.0F;
    if (maxGradientNorm > 0.0) {
        const double coefficient = maxGradientNorm / (norm + 1e-6);
        if (coefficient < 1.0)
            gradientScale = static_cast<float>(coefficient);
    }
    ++stepCount_;
    const auto t = static_cast<double>(stepCount_);
    kernels::AdamWScalars scalars;
    scalars.beta1 = static_cast<float>(params.beta1);
    scalars.beta2 = static_cast<float>(params.beta2);
    scalars.oneMinusBeta1 = static_cast<float>(1.0 - params.beta1);
    scalars.oneMinusBeta2 = static_cast<float>(1.0 - params.beta2);
    scalars.correction1 = static_cast<float>(1.0 - std::pow(params.beta1, t));
    scalars.correction2 = static_cast<float>(1.0 - std::pow(params.beta2, t));
    scalars.epsilon = static_cast<float>(params.epsilon);
    scalars.learningRate = static_cast<float>(learningRate);
    scalars.gradientScale = gradientScale;
    for (const ParameterGroup& group : parameterGroups(layout_)) {
        scalars.weightDecay = group.weightDecay ? static_cast<float>(params.weightDecay) : 0.0F;
        kernels::adamw(master_ + group.offset, low_ == nullptr ? nullptr : low_ + group.offset,
                       m_ + group.offset, v_ + group.offset, gradients_ + group.offset, group.size,
                       scalars, stream_);
    }
    return norm;
}

template <typename T>
void EngineFor<T>::synchronize()
{
    SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace

Result<CudaGpt> CudaGpt::create(const GptConfig& config, const CudaGptOptions& options)
{
    SEALTRAIN_TRY(config.validate());
    if (options.maxBatch == 0 || options.maxSeq == 0)
        return Error(ErrorCode::InvalidArgument,
                     "The batch size and sequence length must be at least 1; give both.");
    if (options.maxSeq > config.contextLength)
        return Error(ErrorCode::InvalidArgument,
                     "The sequence length " + std::to_string(options.maxSeq)
                         + " is longer than the model's context of "
                         + std::to_string(config.contextLength)
                         + " positions; shorten the sequences or lengthen the context.");
    if (config.width % kWidthMultiple != 0)
        return Error(ErrorCode::InvalidArgument,
                     "The CUDA backend needs a width that is a multiple of 8 (for aligned tensor "
                     "core loads); choose such a width or train on the CPU.");
    const DeviceCount devices = visibleDevices();
    if (devices.count == 0)
        return Error(ErrorCode::Unsupported, "No CUDA GPU is visible (" + devices.whyNone
                                                 + "); run on a GPU node or use the CPU backend.");
    if (options.device < 0 || options.device >= devices.count)
        return Error(ErrorCode::InvalidArgument,
                     "GPU " + std::to_string(options.device) + " does not exist on this node ("
                         + std::to_string(devices.count) + " visible); choose another.");
    std::unique_ptr<Engine> engine;
    if (options.precision == Precision::Float32)
        engine = std::make_unique<EngineFor<float>>(config, options);
    else
        engine = std::make_unique<EngineFor<__nv_bfloat16>>(config, options);
    SEALTRAIN_TRY(engine->guarded([&] { engine->allocate(); }));
    return CudaGpt(std::move(engine));
}

CudaGpt::CudaGpt(std::unique_ptr<Engine> engine)
    : engine_(std::move(engine))
{
}
CudaGpt::CudaGpt(CudaGpt&&) noexcept = default;
CudaGpt& CudaGpt::operator=(CudaGpt&&) noexcept = default;
CudaGpt::~CudaGpt() = default;

const GptConfig& CudaGpt::config() const
{
    return engine_->config_;
}

const ParameterLayout& CudaGpt::layout() const
{
    return engine_->layout_;
}

Precision CudaGpt::precision() const
{
    return engine_->options_.precision;
}

std::size_t CudaGpt::deviceBytes() const
{
    return engine_->deviceBytes_;
}

bool CudaGpt::usesGeluEpilogue() const
{
    return engine_->geluEpilogue_;
}

std::uint64_t CudaGpt::optimizerStepCount() const
{
    return engine_->stepCount_;
}

namespace {

Result<void> checkSize(std::size_t got, std::size_t expected)
{
    if (got != expected)
        return Error(ErrorCode::InvalidArgument,
                     "The buffer holds " + std::to_string(got) + " values but the model has "
                         + std::to_string(expected)
                         + " parameters; pass one of the layout's size.");
    return success();
}

}  // namespace

Result<void> CudaGpt::initialize(std::uint64_t seed)
{
    // Gpt::initialize's values, computed on the host (they are a pure function of the seed).
    const ParameterLayout& layout = engine_->layout_;
    std::vector<float> values(layout.totalSize());
    const CounterRng rng(seed);
    const auto& tensors = layout.tensors();
    for (std::size_t index = 0; index < tensors.size(); ++index) {
        const ParameterTensor& info = tensors[index];
        float* tensor = values.data() + info.offset;
        for (std::size_t i = 0; i < info.size; ++i)
            tensor[i] = info.initStd == 0.0
                            ? info.initConstant
                            : static_cast<float>(info.initStd * rng.normal(index, i));
    }
    const GptConfig& config = engine_->config_;
    std::fill(values.begin() + static_cast<std::ptrdiff_t>(config.vocabSize * config.width),
              values.begin() + static_cast<std::ptrdiff_t>(tensors[0].size), 0.0F);
    SEALTRAIN_TRY(uploadParameters(values));
    std::fill(values.begin(), values.end(), 0.0F);
    SEALTRAIN_TRY(uploadOptimizerState(values, values, 0));
    return zeroGradients();
}

Result<void> CudaGpt::uploadParameters(std::span<const float> parameters)
{
    SEALTRAIN_TRY(checkSize(parameters.size(), engine_->layout_.totalSize()));
    return engine_->guarded([&] { engine_->uploadParameters(parameters); });
}

Result<void> CudaGpt::downloadParameters(std::span<float> parameters)
{
    SEALTRAIN_TRY(checkSize(parameters.size(), engine_->layout_.totalSize()));
    return engine_->guarded([&] { engine_->downloadParameters(parameters); });
}

Result<void> CudaGpt::downloadGradients(std::span<float> gradients)
{
    SEALTRAIN_TRY(checkSize(gradients.size(), engine_->layout_.totalSize()));
    return engine_->guarded([&] { engine_->downloadGradients(gradients); });
}

Result<void> CudaGpt::uploadOptimizerState(std::span<const float> firstMoment,
                                           std::span<const float> secondMoment,
                                           std::uint64_t stepCount)
{
    SEALTRAIN_TRY(checkSize(firstMoment.size(), engine_->layout_.totalSize()));
    SEALTRAIN_TRY(checkSize(secondMoment.size(), engine_->layout_.totalSize()));
    SEALTRAIN_TRY(
        engine_->guarded([&] { engine_->uploadOptimizerState(firstMoment, secondMoment); }));
    engine_->stepCount_ = stepCount;
    return success();
}

Result<void> CudaGpt::downloadOptimizerState(std::span<float> firstMoment,
                                             std::span<float> secondMoment)
{
    SEALTRAIN_TRY(checkSize(firstMoment.size(), engine_->layout_.totalSize()));
    SEALTRAIN_TRY(checkSize(secondMoment.size(), engine_->layout_.totalSize()));
    return engine_->guarded([&] { engine_->downloadOptimizerState(firstMoment, secondMoment); });
}

Result<float> CudaGpt::forward(std::span<const std::int32_t> tokens,
                               std::span<const std::int32_t> targets, std::size_t batch,
                               std::size_t seq)
{
    const CudaGptOptions& options = engine_->options_;
    if (batch == 0 || batch > options.maxBatch || seq == 0 || seq > options.maxSeq)
        return Error(ErrorCode::InvalidArgument,
                     "The batch is " + std::to_string(batch) + " × " + std::to_string(seq)
                         + " tokens but the model was sized for at most "
                         + std::to_string(options.maxBatch) + " × " + std::to_string(options.maxSeq)
                         + "; create it with a larger batch or sequence length.");
    const std::size_t rows = batch * seq;
    if (tokens.size() != rows || targets.size() != rows)
        return Error(ErrorCode::InvalidArgument,
                     "The tokens and targets must each hold batch × sequence length values; "
                     "pass arrays of that size.");
    const auto vocab = static_cast<std::int64_t>(engine_->config_.vocabSize);
    if (std::any_of(tokens.begin(), tokens.end(),
                    [vocab](std::int32_t t) { return t < 0 || t >= vocab; }))
        return Error(ErrorCode::InvalidArgument,
                     "A token lies outside the model's vocabulary; check the data's tokenizer.");
    if (std::any_of(targets.begin(), targets.end(),
                    [vocab](std::int32_t t) { return t < -1 || t >= vocab; }))
        return Error(ErrorCode::InvalidArgument,
                     "A target lies outside the model's vocabulary and is not -1 (masked); "
                     "check the data's tokenizer.");
    auto loss = engine_->guarded([&] { return engine_->forward(tokens, targets, batch, seq); });
    engine_->forwardPending_ = loss.ok();
    return loss;
}

Result<void> CudaGpt::zeroGradients()
{
    return engine_->guarded([&] { engine_->zeroGradients(); });
}

Result<void> CudaGpt::backward(float lossScale, GradientReducer* reduce)
{
    // The backward pass turns the logits into their gradient in place, so it runs once per
    // forward pass.
    if (!engine_->forwardPending_)
        return Error(ErrorCode::InvalidArgument,
                     "The backward pass needs a forward pass of its own; call forward before "
                     "each backward.");
    engine_->forwardPending_ = false;
    return engine_->guarded([&] { engine_->backward(lossScale, reduce); });
}

Result<double> CudaGpt::optimizerStep(double learningRate, double maxGradientNorm,
                                      const AdamWParams& params)
{
    return engine_->guarded(
        [&] { return engine_->optimizerStep(learningRate, maxGradientNorm, params); });
}

Result<void> CudaGpt::synchronize()
{
    return engine_->guarded([&] { engine_->synchronize(); });
}

}  // namespace sealtrain::trainer::cuda
