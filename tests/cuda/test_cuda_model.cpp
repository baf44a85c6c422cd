// The CUDA backend behind the Model interface (cuda_model.h) against the CPU model (cpu_model.h),
// both driven by trainStep as the training run drives them: in fp32, three steps' losses, norms
// and parameters within test_cuda_gpt's bounds (1e-4 relative); the state a checkpoint takes and
// gives back moving between the backends bit for bit; the probabilities sampling reads (1e-5);
// and the refusals. Exits 77 without a GPU.
#include "gpu_test.h"
#include "sealtrain/trainer/counter_rng.h"
#include "sealtrain/trainer/cpu_model.h"
#include "sealtrain/trainer/cuda/cuda_model.h"
#include "sealtrain/trainer/training.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

using namespace sealtrain;
using namespace sealtrain::trainer;
using sealtrain::gpu_test::Checker;
using sealtrain::gpu_test::ok;
using sealtrain::gpu_test::OneRank;

constexpr const char* kName = "test_cuda_model";
constexpr std::size_t kBatch = 4;
constexpr std::size_t kSeq = 16;

ModelSpec smallSpec()
{
    ModelSpec spec;
    spec.config.vocabSize = 61;
    spec.config.paddedVocabSize = 64;
    spec.config.contextLength = 32;
    spec.config.layers = 2;
    spec.config.heads = 4;
    spec.config.width = 64;
    spec.capacity = {kBatch, kSeq};
    return spec;
}

std::vector<std::int32_t> randomTokens(std::uint64_t stream, std::size_t vocab)
{
    const CounterRng rng(17);
    std::vector<std::int32_t> tokens(kBatch * kSeq);
    for (std::size_t i = 0; i < tokens.size(); ++i)
        tokens[i] = static_cast<std::int32_t>(rng.bits(stream, i) % vocab);
    return tokens;
}

double relativeError(std::span<const float> got, std::span<const float> want)
{
    double diff = 0.0;
    double norm = 0.0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        const double d = static_cast<double>(got[i]) - static_cast<double>(want[i]);
        diff += d * d;
        norm += static_cast<double>(want[i]) * static_cast<double>(want[i]);
    }
    return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-30);
}

double relative(double got, double want)
{
    return std::fabs(got - want) / std::max(std::fabs(want), 1e-30);
}

struct Pair {
    std::unique_ptr<CpuModel> cpu;
    std::unique_ptr<cuda::CudaModel> gpu;
};

// Both backends from one seed, fp32 on the GPU.
Pair makePair(Checker& check, std::uint64_t seed)
{
    Pair pair;
    auto cpu = CpuModel::create(smallSpec());
    auto gpu = cuda::CudaModel::create(smallSpec(), cuda::Precision::Float32, 0);
    if (!ok(check, cpu, "CpuModel::create") || !ok(check, gpu, "CudaModel::create"))
        return pair;
    pair.cpu = std::move(cpu).value();
    pair.gpu = std::move(gpu).value();
    if (!ok(check, pair.cpu->initialize(seed), "initialize")
        || !ok(check, pair.gpu->initialize(seed), "initialize"))
        return {};
    return pair;
}

void checkTrainingThroughTheInterface(Checker& check)
{
    Pair pair = makePair(check, 3);
    if (!pair.gpu)
        return;
    OneRank ranks;
    GPU_EXPECT(check, pair.cpu->joinRanks(ranks).ok());
    GPU_EXPECT(check, pair.gpu->joinRanks(ranks).ok());
    GPU_EXPECT(check, pair.gpu->device() == "cuda");
    const std::size_t vocab = smallSpec().config.vocabSize;
    const auto tokens = randomTokens(1, vocab);
    const auto targets = randomTokens(2, vocab);
    const auto moreTokens = randomTokens(3, vocab);
    const auto moreTargets = randomTokens(4, vocab);
    const std::vector<MicroBatch> micro{{tokens, targets}, {moreTokens, moreTargets}};
    const TrainStepParams params{kBatch, kSeq, 3e-3, 1.0};
    for (int step = 0; step < 3; ++step) {
        auto want = trainStep(*pair.cpu, micro, params);
        auto got = trainStep(*pair.gpu, micro, params);
        if (!ok(check, want, "trainStep (CPU)") || !ok(check, got, "trainStep (GPU)"))
            return;
        std::printf("step %d: loss %.6f vs CPU %.6f, norm %.5f vs %.5f\n", step, got->loss,
                    want->loss, got->gradientNorm, want->gradientNorm);
        GPU_EXPECT(check, relative(got->loss, want->loss) <= 1e-4);
        GPU_EXPECT(check, relative(got->gradientNorm, want->gradientNorm) <= 1e-4);
    }
    auto want = pair.cpu->state();
    auto got = pair.gpu->state();
    if (!ok(check, want, "state (CPU)") || !ok(check, got, "state (GPU)"))
        return;
    const double parameterError = relativeError(got->parameters, want->parameters);
    std::printf("parameters after 3 steps: relative %.2e (bound 1e-4)\n", parameterError);
    GPU_EXPECT(check, parameterError <= 1e-4);
    GPU_EXPECT(check, got->optimizerStep == 3 && want->optimizerStep == 3);
}

// What a checkpoint takes from one backend, the other gives back bit for bit.
void checkStateAcrossBackends(Checker& check)
{
    Pair pair = makePair(check, 5);
    if (!pair.gpu)
        return;
    const std::size_t n = pair.cpu->layout().totalSize();
    std::vector<float> m(n);
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        m[i] = 1e-3F * static_cast<float>(i % 97);
        v[i] = 1e-6F * static_cast<float>(i % 89);
    }
    auto cpuState = pair.cpu->state();
    if (!ok(check, cpuState, "state (CPU)"))
        return;
    const std::vector<float> parameters(cpuState->parameters.begin(), cpuState->parameters.end());
    GPU_EXPECT(check, pair.gpu->setState({parameters, m, v, 11}).ok());
    auto gpuState = pair.gpu->state();
    if (!ok(check, gpuState, "state (GPU)"))
        return;
    GPU_EXPECT(check,
               std::equal(parameters.begin(), parameters.end(), gpuState->parameters.begin()));
    GPU_EXPECT(check, std::equal(m.begin(), m.end(), gpuState->firstMoment.begin()));
    GPU_EXPECT(check, std::equal(v.begin(), v.end(), gpuState->secondMoment.begin()));
    GPU_EXPECT(check, gpuState->optimizerStep == 11);
    const std::vector<float> tooShort(n - 1);
    GPU_EXPECT(check, !pair.gpu->setParameters(tooShort));
}

// The softmax sampling reads, at each position; refused once backward has used the logits.
void checkProbabilities(Checker& check)
{
    Pair pair = makePair(check, 7);
    if (!pair.gpu)
        return;
    const std::size_t vocab = smallSpec().config.vocabSize;
    const auto tokens = randomTokens(5, vocab);
    const std::vector<std::int32_t> noTargets(tokens.size(), -1);
    std::vector<float> want(vocab);
    std::vector<float> got(vocab);
    GPU_EXPECT(check, !pair.gpu->probabilities(0, got));  // no forward pass yet
    if (!ok(check, pair.cpu->forward(tokens, noTargets, kBatch, kSeq), "forward (CPU)")
        || !ok(check, pair.gpu->forward(tokens, noTargets, kBatch, kSeq), "forward (GPU)"))
        return;
    double worst = 0.0;
    for (std::size_t row = 0; row < kBatch * kSeq; row += 7) {
        if (!ok(check, pair.cpu->probabilities(row, want), "probabilities (CPU)")
            || !ok(check, pair.gpu->probabilities(row, got), "probabilities (GPU)"))
            return;
        for (std::size_t i = 0; i < vocab; ++i)
            worst = std::max(worst, static_cast<double>(std::fabs(got[i] - want[i])));
    }
    std::printf("probabilities: worst absolute difference %.2e (bound 1e-5)\n", worst);
    GPU_EXPECT(check, worst <= 1e-5);
    GPU_EXPECT(check, !pair.gpu->probabilities(kBatch * kSeq, got));
    std::vector<float> wrongSize(vocab + 1);
    GPU_EXPECT(check, !pair.gpu->probabilities(0, wrongSize));
    GPU_EXPECT(check, pair.gpu->backward(1.0F, false).ok());
    GPU_EXPECT(check, !pair.gpu->probabilities(0, got));  // the logits hold their gradient now
}

}  // namespace

int main()
{
    return sealtrain::gpu_test::runGpuTest(kName, [](Checker& check) {
        checkTrainingThroughTheInterface(check);
        checkStateAcrossBackends(check);
        checkProbabilities(check);
    });
}
