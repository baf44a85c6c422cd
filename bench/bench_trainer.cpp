// CPU trainer throughput beside PyTorch's and the machine's sgemm ceiling, in one run (issue #7):
//   tokens/s   full training steps (forward, backward, clipping, AdamW) of a fixed small GPT
//   PyTorch    the same model, batch and step in PyTorch on the CPU with the same thread count
//              (bench/torch_cpu_bench.py under /usr/bin/python3, Debian's python3-torch)
//   sgemm      best FLOP/s of 1024³ single-precision matmuls through the same BLAS
//   MFU        (6·N + 6·L·C·T) FLOPs per token × tokens/s ÷ the sgemm rate
// Model: byte-level vocabulary (256), context 256, 4 layers, 4 heads, width 256; batch 8 × 256.
// Threads: THREADS for our OpenMP loops and OpenBLAS GEMMs, and for PyTorch
// (torch.set_num_threads, OPENBLAS_NUM_THREADS); default: OpenMP's default, i.e. every core or
// OMP_NUM_THREADS. Other environment (OPENBLAS_CORETYPE, say) reaches both.
// Usage: bench_trainer [STEPS [THREADS]]   (default 5 timed steps after one warm-up step)
#include "sealtrain/trainer/counter_rng.h"
#include "sealtrain/trainer/cpu_model.h"
#include "sealtrain/trainer/cpu_ops.h"
#include "sealtrain/trainer/platform_info.h"
#include "sealtrain/trainer/sgemm_ceiling.h"
#include "sealtrain/trainer/training.h"

#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <time.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
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

// CPU time of the whole process, all threads: on a shared machine a one-thread run's CPU time
// per step is what it would take alone, where its wall time also counts the other jobs.
double processCpuSeconds()
{
    timespec now{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

struct TorchResult {
    std::string version;
    double tokensPerSecond = 0.0;
    double secondsPerStep = 0.0;
    double cpuSecondsPerStep = 0.0;
};

// Runs bench/torch_cpu_bench.py on the same shape; nullopt (after saying why) when it cannot.
std::optional<TorchResult> runTorch(const GptConfig& config, std::size_t batch, std::size_t seq,
                                    std::size_t steps, std::size_t threads)
{
    const std::string n = std::to_string(threads);
    const std::string command =
        "OPENBLAS_NUM_THREADS=" + n + " OMP_NUM_THREADS=" + n
        + " " SEALTRAIN_TORCH_PYTHON " '" SEALTRAIN_TORCH_BENCH_SCRIPT "' --vocab "
        + std::to_string(config.vocabSize) + " --padded-vocab "
        + std::to_string(config.paddedVocabSize) + " --context "
        + std::to_string(config.contextLength) + " --layers " + std::to_string(config.layers)
        + " --heads " + std::to_string(config.heads) + " --width " + std::to_string(config.width)
        + " --batch " + std::to_string(batch) + " --seq " + std::to_string(seq) + " --steps "
        + std::to_string(steps) + " --threads " + n;
    FILE* pipe = popen(command.c_str(), "r");  // NOLINT(cert-env33-c): our own fixed command
    if (pipe == nullptr) {
        std::printf("PyTorch: could not start %s.\n", SEALTRAIN_TORCH_PYTHON);
        return std::nullopt;
    }
    std::string output;
    std::array<char, 4096> buffer{};
    while (std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr)
        output += buffer.data();
    const int status = pclose(pipe);
    const auto json = nlohmann::json::parse(output, nullptr, false);
    if (status != 0 || json.is_discarded() || !json.contains("tokens_per_second")) {
        std::printf("PyTorch: not measured (%s exited with status %d%s%s).\n",
                    SEALTRAIN_TORCH_PYTHON, status, output.empty() ? "" : ": ",
                    output.substr(0, output.find('\n')).c_str());
        return std::nullopt;
    }
    return TorchResult{json.value("torch", std::string("?")), json.value("tokens_per_second", 0.0),
                       json.value("seconds_per_step", 0.0),
                       json.value("cpu_seconds_per_step", 0.0)};
}

}  // namespace

int main(int argc, char** argv)
{
    const std::size_t steps = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 5;
    const std::size_t threads = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : cpu::threadCount();
    if (steps == 0 || threads == 0) {
        std::fprintf(stderr, "bench_trainer: STEPS and THREADS must be positive numbers.\n");
        return 2;
    }
    cpu::setThreadCount(threads);
    GptConfig config;
    config.vocabSize = 256;
    config.paddedVocabSize = 256;
    config.contextLength = 256;
    config.layers = 4;
    config.heads = 4;
    config.width = 256;
    const std::size_t batch = 8;
    const std::size_t seq = 256;

    auto created = CpuModel::create({config, {batch, seq}, AdamWParams{}});
    if (!created) {
        std::fprintf(stderr, "bench_trainer: %s\n", created.error().message().c_str());
        return 1;
    }
    CpuModel& model = **created;
    model.gpt().initialize(1);
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

    const std::string blas = blasDescription();
    std::printf("BLAS: %s\n", blas.c_str());
    if (blas.find("Prescott") != std::string::npos)
        std::printf("note: OpenBLAS did not recognise this CPU and runs its generic SSE3 kernels "
                    "(Prescott); on an AVX-512 CPU, OPENBLAS_CORETYPE=SkylakeX picks faster ones "
                    "(for PyTorch too, which uses the same OpenBLAS).\n");
    std::printf("threads: %zu (our OpenMP loops and OpenBLAS GEMMs; PyTorch's intra-op threads "
                "and OpenBLAS)\n",
                threads);
    std::printf("model: %zu parameters, vocab %zu, context %zu, %zu layers, %zu heads, width %zu; "
                "batch %zu x %zu tokens\n",
                model.layout().totalSize(), config.vocabSize, config.contextLength, config.layers,
                config.heads, config.width, batch, seq);

    double loss = 0.0;
    auto step = [&] {
        auto result = trainStep(model, micro, params);
        if (!result) {
            std::fprintf(stderr, "bench_trainer: %s\n", result.error().message().c_str());
            std::exit(1);
        }
        loss = result->loss;
    };
    step();  // warm-up: first touches of the buffers, BLAS thread start
    const auto start = Clock::now();
    const double cpuStart = processCpuSeconds();
    for (std::size_t s = 0; s < steps; ++s)
        step();
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const double cpuPerStep = (processCpuSeconds() - cpuStart) / static_cast<double>(steps);
    const double tokensPerSecond = static_cast<double>(steps * batch * seq) / elapsed;
    const double flopsPerToken = trainingFlopsPerToken(config, seq);
    const double achieved = flopsPerToken * tokensPerSecond;
    std::printf("Sealtrain: %.3f s/step (CPU %.3f s/step), %.0f tokens/s, %.2f GFLOP/s achieved "
                "(%.1f MFLOP/token), loss %.4f\n",
                elapsed / static_cast<double>(steps), cpuPerStep, tokensPerSecond, achieved / 1e9,
                flopsPerToken / 1e6, loss);
    std::fflush(stdout);

    if (const auto torch = runTorch(config, batch, seq, steps, threads)) {
        std::printf("PyTorch %s: %.3f s/step (CPU %.3f s/step), %.0f tokens/s\n",
                    torch->version.c_str(), torch->secondsPerStep, torch->cpuSecondsPerStep,
                    torch->tokensPerSecond);
        std::printf("ratio: Sealtrain / PyTorch = %.2fx tokens/s (%.2fx by CPU time per step)\n",
                    tokensPerSecond / torch->tokensPerSecond,
                    torch->cpuSecondsPerStep / cpuPerStep);
    }

    const double sgemm = measureSgemmFlops();
    std::printf("sgemm ceiling: %.2f GFLOP/s (1024^3, best of 5, %zu threads)\n", sgemm / 1e9,
                threads);
    std::printf("MFU: %.1f %% of the measured sgemm rate\n", 100.0 * achieved / sgemm);
    std::printf("peak RSS: %.0f MiB\n", peakRssMiB());
    return 0;
}
