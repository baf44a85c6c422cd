// CPU trainer throughput beside the machine's sgemm ceiling, in one run (issue #7):
//   tokens/s   full training steps (forward, backward, clipping, AdamW) of a fixed small GPT
//   sgemm      best FLOP/s of 1024³ single-precision matmuls through the same BLAS
//   MFU        (6·N + 6·L·C·T) FLOPs per token × tokens/s ÷ the sgemm rate
// Model: byte-level vocabulary (256), context 256, 4 layers, 4 heads, width 256; batch 8 × 256.
// Threads: OpenBLAS and OpenMP take OPENBLAS_NUM_THREADS / OMP_NUM_THREADS (default: all cores).
// Usage: bench_trainer [STEPS]   (default 5 timed steps after one warm-up step)
#include "sealtrain/trainer/counter_rng.h"
#include "sealtrain/trainer/platform_info.h"
#include "sealtrain/trainer/sgemm_ceiling.h"
#include "sealtrain/trainer/training.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace sealtrain::trainer;
using Clock = std::chrono::steady_clock;

namespace {

double peakRssMiB()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

}  // namespace

int main(int argc, char** argv)
{
    const std::size_t steps = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 5;
    if (steps == 0) {
        std::fprintf(stderr, "bench_trainer: STEPS must be a positive number.\n");
        return 2;
    }
    GptConfig config;
    config.vocabSize = 256;
    config.paddedVocabSize = 256;
    config.contextLength = 256;
    config.layers = 4;
    config.heads = 4;
    config.width = 256;
    const std::size_t batch = 8;
    const std::size_t seq = 256;

    auto created = Gpt<float>::create(config, batch, seq);
    if (!created) {
        std::fprintf(stderr, "bench_trainer: %s\n", created.error().message().c_str());
        return 1;
    }
    Gpt<float>& model = *created;
    model.initialize(1);
    AdamW optimizer(parameterGroups(model.layout()), model.parameters().size(), AdamWParams{});
    const CounterRng rng(2);
    std::vector<std::int32_t> tokens(batch * (seq + 1));
    for (std::size_t i = 0; i < tokens.size(); ++i)
        tokens[i] = static_cast<std::int32_t>(rng.bits(0, i) % config.vocabSize);
    std::vector<std::int32_t> in(batch * seq);
    std::vector<std::int32_t> targets(batch * seq);
    for (std::size_t b = 0; b < batch; ++b) {
        for (std::size_t t = 0; t < seq; ++t) {
            in[b * seq + t] = tokens[b * (seq + 1) + t];
            targets[b * seq + t] = tokens[b * (seq + 1) + t + 1];
        }
    }
    const std::vector<MicroBatch> micro{{in, targets}};
    const TrainStepParams params{batch, seq, 3e-4, 1.0};

    std::printf("BLAS: %s\n", blasDescription().c_str());
    std::printf("model: %zu parameters, vocab %zu, context %zu, %zu layers, %zu heads, width %zu; "
                "batch %zu x %zu tokens\n",
                model.parameters().size(), config.vocabSize, config.contextLength, config.layers,
                config.heads, config.width, batch, seq);

    double loss = 0.0;
    auto step = [&] {
        auto result = trainStep(model, optimizer, micro, params);
        if (!result) {
            std::fprintf(stderr, "bench_trainer: %s\n", result.error().message().c_str());
            std::exit(1);
        }
        loss = result->loss;
    };
    step();  // warm-up: first touches of the buffers, BLAS thread start
    const auto start = Clock::now();
    for (std::size_t s = 0; s < steps; ++s)
        step();
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();

    const double sgemm = measureSgemmFlops();
    const double tokensPerSecond = static_cast<double>(steps * batch * seq) / elapsed;
    const double flopsPerToken = trainingFlopsPerToken(config, seq);
    const double achieved = flopsPerToken * tokensPerSecond;
    std::printf("train step: %.3f s/step, %.0f tokens/s, %.2f GFLOP/s achieved "
                "(%.1f MFLOP/token), loss %.4f\n",
                elapsed / static_cast<double>(steps), tokensPerSecond, achieved / 1e9,
                flopsPerToken / 1e6, loss);
    std::printf("sgemm ceiling: %.2f GFLOP/s (1024^3, best of 5)\n", sgemm / 1e9);
    std::printf("MFU: %.1f %% of the measured sgemm rate\n", 100.0 * achieved / sgemm);
    std::printf("peak RSS: %.0f MiB\n", peakRssMiB());
    return 0;
}
