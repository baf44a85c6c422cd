// The GPT on one CUDA GPU: the same model function and flat fp32 parameter layout as the CPU
// reference Gpt<float> (gpt.h), computed with cuBLASLt GEMMs and the kernels of kernels.h. The
// training run reaches it through the Model interface (cuda_model.h).
//
// Precision (the floatX switch): in BFloat16 mode activations, activation gradients, parameter
// gradients and the weights the GEMMs read are bf16, while the master weights and AdamW's
// moments stay fp32; Float32 mode keeps everything fp32 (no TF32) to check against the CPU.
// Parameters, gradients and moments come back to the host in ParameterLayout's order, so a
// checkpoint written from either backend resumes on the other.
//
// Errors: every CUDA, cuBLAS and NCCL call is checked with its file and line; the first failure
// is returned as a Result error and every later call returns the same error (the device state
// can not be trusted after it).
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/formats/gpt_config.h"
#include "sealtrain/trainer/optimizer.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace sealtrain::trainer::cuda {

class GradientReducer;

enum class Precision { Float32, BFloat16 };

struct CudaGptOptions {
    std::size_t maxBatch = 1;
    std::size_t maxSeq = 1;
    Precision precision = Precision::BFloat16;
    // cuBLASLt's GELU epilogues (forward into the c_fc GEMM, backward into the c_proj GEMM)
    // instead of the separate GELU kernels, where cuBLASLt has algorithms for them.
    bool geluEpilogue = true;
    int device = 0;
    // Flash attention (flash_attention.cu) in bf16 where the head size is 64: no T×T scores or
    // probabilities in memory. Otherwise, and when false, cuBLAS products and a softmax kernel.
    bool flashAttention = true;
};

class CudaGpt final {
public:
    // Allocates every buffer up front on options.device; the width must be a multiple of 8 (16-byte
    // aligned rows for the tensor cores).
    [[nodiscard]] static Result<CudaGpt> create(const GptConfig& config,
                                                const CudaGptOptions& options);

    CudaGpt(CudaGpt&&) noexcept;
    CudaGpt& operator=(CudaGpt&&) noexcept;
    CudaGpt(const CudaGpt&) = delete;
    CudaGpt& operator=(const CudaGpt&) = delete;
    ~CudaGpt();

    [[nodiscard]] const GptConfig& config() const;
    [[nodiscard]] const ParameterLayout& layout() const;
    [[nodiscard]] Precision precision() const;
    // Whether the GELU epilogues run (asked for, and supported by cuBLASLt for these shapes).
    [[nodiscard]] bool usesGeluEpilogue() const;
    [[nodiscard]] bool usesFlashAttention() const;
    // Bytes of device memory this model holds (parameters, state, activations, workspaces).
    [[nodiscard]] std::size_t deviceBytes() const;

    // GPT-2's initialisation from `seed`, the same values as Gpt::initialize; zeroes the moments.
    [[nodiscard]] Result<void> initialize(std::uint64_t seed);
    // The fp32 master parameters, in ParameterLayout's order (size layout().totalSize()).
    [[nodiscard]] Result<void> uploadParameters(std::span<const float> parameters);
    [[nodiscard]] Result<void> downloadParameters(std::span<float> parameters);
    // The accumulated parameter gradients, converted to fp32.
    [[nodiscard]] Result<void> downloadGradients(std::span<float> gradients);
    // AdamW's moments and step count, for checkpoints.
    [[nodiscard]] Result<void> uploadOptimizerState(std::span<const float> firstMoment,
                                                    std::span<const float> secondMoment,
                                                    std::uint64_t stepCount);
    [[nodiscard]] Result<void> downloadOptimizerState(std::span<float> firstMoment,
                                                      std::span<float> secondMoment);
    [[nodiscard]] std::uint64_t optimizerStepCount() const;

    // As Gpt::forward: the mean cross-entropy over targets that are not -1 (0 when all are).
    // The batch is checked as the CPU model checks it (model_checks.h).
    [[nodiscard]] Result<float> forward(std::span<const std::int32_t> tokens,
                                        std::span<const std::int32_t> targets, std::size_t batch,
                                        std::size_t seq);
    // Rows (batch × seq) of the last forward pass while its logits are intact, else 0 (after its
    // backward pass, which turns them into their gradient).
    [[nodiscard]] std::size_t forwardRows() const;
    // The paddedVocabSize logits of row `row` (< forwardRows()), converted to fp32.
    [[nodiscard]] Result<void> downloadLogits(std::size_t row, std::span<float> logits);
    [[nodiscard]] Result<void> zeroGradients();
    // As Gpt::backward: adds lossScale × the gradient of the last forward pass's loss, once per
    // forward pass (the logits become their gradient in place; a second call is refused). With
    // `reduce`, each layer's gradients are all-reduced (mean over ranks) on the collective's
    // stream as soon as backward has finished them (NcclCollective is one); pass it on the last
    // micro-batch of a step. backward returns once the reduction is queued; later work on the
    // model waits for it.
    [[nodiscard]] Result<void> backward(float lossScale, GradientReducer* reduce = nullptr);

    // Global-norm clipping (as clipByGlobalNorm; maxGradientNorm <= 0 only measures) and one
    // AdamW step with parameterGroups' decay; returns the gradient norm before clipping.
    [[nodiscard]] Result<double> optimizerStep(double learningRate, double maxGradientNorm,
                                               const AdamWParams& params);
    // Waits for all queued work (timing).
    [[nodiscard]] Result<void> synchronize();

    class Engine;

private:
    explicit CudaGpt(std::unique_ptr<Engine> engine);
    std::unique_ptr<Engine> engine_;
};

}  // namespace sealtrain::trainer::cuda
