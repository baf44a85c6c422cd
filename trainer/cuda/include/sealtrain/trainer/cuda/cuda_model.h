// The CUDA backend behind the Model interface (model.h): a CudaGpt (cuda_gpt.h) and AdamW's
// parameters, host copies of its state for checkpoints, and for several ranks the gradient
// all-reduce of a GradientReducer (NcclCollective) overlapped with the last backward pass. Its
// override declarations and one-line delegations mirror cpu_model.h's on purpose (the two
// implementations of one interface).
#pragma once

#include "sealtrain/trainer/cuda/cuda_gpt.h"
#include "sealtrain/trainer/cuda/gradient_reducer.h"
#include "sealtrain/trainer/model.h"

#include <functional>
#include <memory>
#include <vector>

namespace sealtrain::trainer::cuda {

class CudaModel final : public Model {
public:
    // Opens the gradient all-reduce among `ranks` on GPU `gpu` (NcclCollective::open); a
    // collective call. Empty where the backend was built without NCCL.
    using ReducerOpener =
        std::function<Result<std::unique_ptr<GradientReducer>>(Collective& ranks, int gpu)>;

    // A model of `spec` on GPU `gpu` in `precision`, with zeroed parameters and moments.
    [[nodiscard]] static Result<std::unique_ptr<CudaModel>>
    create(const ModelSpec& spec, Precision precision, int gpu, ReducerOpener openReducer = {});

    [[nodiscard]] std::string_view device() const override { return "cuda"; }
    [[nodiscard]] const GptConfig& config() const override { return gpt_.config(); }
    [[nodiscard]] const ParameterLayout& layout() const override { return gpt_.layout(); }

    [[nodiscard]] Result<void> initialize(std::uint64_t seed) override;
    [[nodiscard]] Result<ModelState> state() override;
    [[nodiscard]] Result<void> setState(const ModelState& state) override;
    [[nodiscard]] Result<void> setParameters(std::span<const float> parameters) override;
    [[nodiscard]] Result<void> joinRanks(Collective& ranks) override;

    [[nodiscard]] Result<float> forward(std::span<const std::int32_t> tokens,
                                        std::span<const std::int32_t> targets, std::size_t batch,
                                        std::size_t seq) override;
    [[nodiscard]] Result<void> probabilities(std::size_t row, std::span<float> out) override;
    [[nodiscard]] Result<void> zeroGradients() override;
    [[nodiscard]] Result<void> backward(float lossScale, bool lastOfStep) override;
    [[nodiscard]] Result<double> optimizerStep(double learningRate,
                                               double maxGradientNorm) override;

    [[nodiscard]] CudaGpt& gpt() { return gpt_; }

private:
    CudaModel(CudaGpt gpt, const ModelSpec& spec, int gpu, ReducerOpener openReducer);

    // Declared first so that it goes last: the model's stream may still wait for its work.
    std::unique_ptr<GradientReducer> reducer_;
    CudaGpt gpt_;
    AdamWParams adamw_;
    int gpu_;
    ReducerOpener openReducer_;
    // Host copies behind state(), and one row of logits for probabilities().
    std::vector<float> parameters_;
    std::vector<float> firstMoment_;
    std::vector<float> secondMoment_;
    std::vector<float> logits_;
};

}  // namespace sealtrain::trainer::cuda
