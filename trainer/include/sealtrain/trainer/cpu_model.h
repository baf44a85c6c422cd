// The CPU reference behind the Model interface (model.h): Gpt<float> (gpt.h) and AdamW
// (optimizer.h) on the host, the gradients averaged over the ranks by the joined Collective.
// Its override declarations, and the one-line ones that hand a call to the model, mirror
// cuda_model.h's on purpose: they are the two implementations of one interface.
#pragma once

#include "sealtrain/trainer/gpt.h"
#include "sealtrain/trainer/model.h"
#include "sealtrain/trainer/optimizer.h"

#include <memory>

namespace sealtrain::trainer {

class CpuModel final : public Model {
public:
    // Zeroed parameters and moments; initialize or setState gives them values.
    [[nodiscard]] static Result<std::unique_ptr<CpuModel>> create(const ModelSpec& spec);

    [[nodiscard]] std::string_view device() const override { return "cpu"; }
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

    // The model and its optimizer themselves, for tests and tools that look inside.
    [[nodiscard]] Gpt<float>& gpt() { return gpt_; }
    [[nodiscard]] AdamW& optimizer() { return optimizer_; }

private:
    CpuModel(Gpt<float> gpt, AdamW optimizer);

    Gpt<float> gpt_;
    AdamW optimizer_;
    Collective* ranks_ = nullptr;
};

}  // namespace sealtrain::trainer
