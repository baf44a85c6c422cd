// CudaGpt (cuda_gpt.h): creation and the Result boundary. Each call checks its input (the checks
// of model_checks.h, shared with the CPU model), then runs the engine (cuda_gpt_engine.h) under
// guarded(): a device failure becomes the call's error and every later call's. The model is the
// CPU reference's (gpt.cpp), step for step; where the GPU fuses or reorders, the engine's files
// say so. Row-major tensors meet column-major cuBLAS as gemm.h says: a row-major (rows, cols)
// array is the column-major (cols, rows) matrix.
#include "sealtrain/trainer/cuda/cuda_gpt.h"

#include "cuda_gpt_engine.h"
#include "sealtrain/trainer/counter_rng.h"
#include "sealtrain/trainer/cuda/cuda_check.h"
#include "sealtrain/trainer/model_checks.h"

#include <algorithm>
#include <string>
#include <vector>

namespace sealtrain::trainer::cuda {
namespace {

constexpr std::size_t kWidthMultiple = 8;

// One sentence for a person from whatever a CUDA, cuBLAS or NCCL check threw (file, line, call
// and the library's own words).
Error deviceError(const std::exception& failure)
{
    return Error(ErrorCode::Internal, "The CUDA backend failed (" + asClause(failure.what())
                                          + "); check the GPU with nvidia-smi and that it has "
                                            "free memory, then start again.");
}

}  // namespace

template <typename Work>
auto CudaGpt::Engine::guarded(Work&& work) -> Result<std::invoke_result_t<Work>>
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

Result<CudaGpt> CudaGpt::create(const GptConfig& config, const CudaGptOptions& options)
{
    SEALTRAIN_TRY(checkCapacity(config, {options.maxBatch, options.maxSeq}));
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
        engine = std::make_unique<Internal::EngineFor<float>>(config, options);
    else
        engine = std::make_unique<Internal::EngineFor<__nv_bfloat16>>(config, options);
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

bool CudaGpt::usesFlashAttention() const
{
    return engine_->flash_;
}

std::uint64_t CudaGpt::optimizerStepCount() const
{
    return engine_->stepCount_;
}

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
    SEALTRAIN_TRY(checkParameterCount(parameters.size(), engine_->layout_.totalSize()));
    return engine_->guarded([&] { engine_->uploadParameters(parameters); });
}

Result<void> CudaGpt::downloadParameters(std::span<float> parameters)
{
    SEALTRAIN_TRY(checkParameterCount(parameters.size(), engine_->layout_.totalSize()));
    return engine_->guarded([&] { engine_->downloadParameters(parameters); });
}

Result<void> CudaGpt::downloadGradients(std::span<float> gradients)
{
    SEALTRAIN_TRY(checkParameterCount(gradients.size(), engine_->layout_.totalSize()));
    return engine_->guarded([&] { engine_->downloadGradients(gradients); });
}

Result<void> CudaGpt::uploadOptimizerState(std::span<const float> firstMoment,
                                           std::span<const float> secondMoment,
                                           std::uint64_t stepCount)
{
    SEALTRAIN_TRY(checkParameterCount(firstMoment.size(), engine_->layout_.totalSize()));
    SEALTRAIN_TRY(checkParameterCount(secondMoment.size(), engine_->layout_.totalSize()));
    SEALTRAIN_TRY(
        engine_->guarded([&] { engine_->uploadOptimizerState(firstMoment, secondMoment); }));
    engine_->stepCount_ = stepCount;
    return success();
}

Result<void> CudaGpt::downloadOptimizerState(std::span<float> firstMoment,
                                             std::span<float> secondMoment)
{
    SEALTRAIN_TRY(checkParameterCount(firstMoment.size(), engine_->layout_.totalSize()));
    SEALTRAIN_TRY(checkParameterCount(secondMoment.size(), engine_->layout_.totalSize()));
    return engine_->guarded([&] { engine_->downloadOptimizerState(firstMoment, secondMoment); });
}

Result<float> CudaGpt::forward(std::span<const std::int32_t> tokens,
                               std::span<const std::int32_t> targets, std::size_t batch,
                               std::size_t seq)
{
    const CudaGptOptions& options = engine_->options_;
    SEALTRAIN_TRY(checkBatch(engine_->config_, {options.maxBatch, options.maxSeq}, tokens, targets,
                             batch, seq));
    auto loss = engine_->guarded([&] { return engine_->forward(tokens, targets, batch, seq); });
    engine_->forwardRows_ = loss.ok() ? batch * seq : 0;
    return loss;
}

std::size_t CudaGpt::forwardRows() const
{
    return engine_->forwardRows_;
}

Result<void> CudaGpt::downloadLogits(std::size_t row, std::span<float> logits)
{
    if (row >= engine_->forwardRows_ || logits.size() != engine_->config_.paddedVocabSize)
        return Error(ErrorCode::InvalidArgument,
                     "The logits asked for lie outside the last forward pass, or its backward pass "
                     "has overwritten them, or the buffer does not hold one padded row; run "
                     "forward first and pass paddedVocabSize values.");
    return engine_->guarded([&] { engine_->downloadLogits(row, logits); });
}

Result<void> CudaGpt::zeroGradients()
{
    return engine_->guarded([&] { engine_->zeroGradients(); });
}

Result<void> CudaGpt::backward(float lossScale, GradientReducer* reduce)
{
    // The backward pass turns the logits into their gradient in place, so it runs once per
    // forward pass.
    if (engine_->forwardRows_ == 0)
        return Error(ErrorCode::InvalidArgument,
                     "The backward pass needs a forward pass of its own; call forward before "
                     "each backward.");
    engine_->forwardRows_ = 0;
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
