// The engine behind CudaGpt (cuda_gpt.h), private to the backend: the precision-independent base
// (configuration, the first error, what the last forward pass left) and EngineFor<T>, the model
// with activations of type T. The Result boundary and the checks are cuda_gpt.cpp's; EngineFor's
// members live in three files by concern: cuda_gpt_memory.cpp (the device buffers, their layout
// and the host transfers), cuda_gpt_forward.cpp, and cuda_gpt_backward.cpp (with the optimizer
// step). Each of those instantiates its own members for float and __nv_bfloat16. Engine calls
// throw on a device error (cuda_check.h); CudaGpt turns that into its Result.
#pragma once

#include "sealtrain/trainer/cuda/cuda_gpt.h"
#include "sealtrain/trainer/cuda/gemm.h"
#include "sealtrain/trainer/cuda/gradient_reducer.h"
#include "sealtrain/trainer/cuda/plan.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

namespace sealtrain::trainer::cuda {

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
    virtual void downloadLogits(std::size_t row, std::span<float> logits) = 0;
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
    auto guarded(Work&& work) -> Result<std::invoke_result_t<Work>>;

    GptConfig config_;
    ParameterLayout layout_;
    CudaGptOptions options_;
    std::optional<Error> failure_;
    // Rows of a forward pass whose backward has not run (its logits intact), else 0.
    std::size_t forwardRows_ = 0;
    bool geluEpilogue_ = false;  // options_.geluEpilogue, where cuBLASLt supports it
    bool flash_ = false;         // options_.flashAttention, in bf16 at a head size of 64
    std::uint64_t stepCount_ = 0;
    std::size_t deviceBytes_ = 0;
};

namespace Internal {

class Arena;

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
    void downloadLogits(std::size_t row, std::span<float> logits) override;
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
        float* lse;  // flash attention's logsumexp (B,H,T); att is not kept then
    };
    void carve(Arena& arena);
    // `out.size()` values of `source` (device, type T) converted to fp32 on the host.
    void downloadAsFloat(const T* source, std::span<float> out);
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
    float* dots_ = nullptr;  // flash attention's backward scratch (B,H,T)
    float* columnScratch_ = nullptr;
    double* sumPartials_ = nullptr;
    double* sumResult_ = nullptr;
    float* clipScale_ = nullptr;
    AdamWChunk* adamwChunks_ = nullptr;
    std::size_t adamwChunkCount_ = 0;
    std::int32_t *tokens_ = nullptr, *targets_ = nullptr;
    std::int32_t *bucketTokens_ = nullptr, *bucketStarts_ = nullptr, *bucketPositions_ = nullptr;

    // What the last forward pass ran on.
    std::size_t batch_ = 0;
    std::size_t seq_ = 0;
    std::size_t targetCount_ = 0;
    std::size_t tokenBuckets_ = 0;
    std::vector<float> hostLosses_;
};

}  // namespace Internal
}  // namespace sealtrain::trainer::cuda
