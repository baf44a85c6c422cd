// GPT-2 124M training throughput on one GPU: tokens/s of whole steps (forward, backward, clip,
// AdamW) at d 768, 12 layers, 12 heads, T 1024, vocabulary 50257 padded to 50304, beside the
// measured bf16 cuBLASLt GEMM ceiling of the same GPU in the same run; MFU = 6·N + 6·L·C·T FLOPs
// per token (gpt_config.h) × tokens/s ÷ that ceiling. The last line is one JSON object for
// scripts/gpu-check. Exits 77 without a GPU.
#include "sealtrain/trainer/cuda/cuda_check.h"
#include "sealtrain/trainer/cuda/cuda_gpt.h"
#include "sealtrain/trainer/cuda/gemm.h"
#include "sealtrain/trainer/cuda/kernels.h"

#include <cuda_profiler_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace sealtrain::trainer;

constexpr double kDatasheetBf16 = 989e12;  // H100/H200 SXM dense bf16, for reference only

struct Options {
    std::size_t batch = 16;
    std::size_t seq = 1024;
    int steps = 12;
    int warmup = 3;
    cuda::Precision precision = cuda::Precision::BFloat16;
    bool geluEpilogue = true;
    bool flashAttention = true;
    // Only the last step runs inside cudaProfilerStart/Stop, for `ncu --profile-from-start off`
    // (scripts/gpu-check --profile); the GEMM ceiling is not measured.
    bool profile = false;
};

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

// A small deterministic hash to fill matrices with values in [-1, 1) (never zeros: METHOD.md).
float hashUniform(std::uint64_t i)
{
    i ^= i >> 33U;
    i *= 0xff51afd7ed558ccdULL;
    i ^= i >> 33U;
    return static_cast<float>(static_cast<double>(i >> 11U) / 9007199254740992.0 * 2.0 - 1.0);
}

// The best rate of a square bf16 product through the same cuBLASLt path the model uses.
double gemmCeiling(std::size_t size)
{
    const std::size_t elements = size * size;
    std::vector<float> host(elements);
    for (std::size_t i = 0; i < elements; ++i)
        host[i] = hashUniform(i);
    float* staging = nullptr;
    __nv_bfloat16* matrices = nullptr;
    SEALTRAIN_CUDA_CHECK(cudaMalloc(&staging, elements * sizeof(float)));
    SEALTRAIN_CUDA_CHECK(cudaMalloc(&matrices, 3 * elements * sizeof(__nv_bfloat16)));
    SEALTRAIN_CUDA_CHECK(
        cudaMemcpy(staging, host.data(), elements * sizeof(float), cudaMemcpyHostToDevice));
    cuda::kernels::convertFromFloat(matrices, staging, elements, nullptr);
    for (std::size_t i = 0; i < elements; ++i)
        host[i] = hashUniform(i + elements);
    SEALTRAIN_CUDA_CHECK(
        cudaMemcpy(staging, host.data(), elements * sizeof(float), cudaMemcpyHostToDevice));
    cuda::kernels::convertFromFloat(matrices + elements, staging, elements, nullptr);
    cuda::Gemm gemm(cuda::ElementType::BFloat16);
    cuda::GemmCall call;
    call.m = call.n = call.k = size;
    call.a = matrices;
    call.b = matrices + elements;
    call.d = matrices + 2 * elements;
    call.lda = call.ldb = call.ldd = size;
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    SEALTRAIN_CUDA_CHECK(cudaEventCreate(&start));
    SEALTRAIN_CUDA_CHECK(cudaEventCreate(&stop));
    std::vector<double> seconds;
    for (int i = 0; i < 25; ++i) {
        SEALTRAIN_CUDA_CHECK(cudaEventRecord(start, nullptr));
        gemm.run(call, nullptr);
        SEALTRAIN_CUDA_CHECK(cudaEventRecord(stop, nullptr));
        SEALTRAIN_CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0.0F;
        SEALTRAIN_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        if (i >= 5)
            seconds.push_back(static_cast<double>(ms) / 1e3);
    }
    SEALTRAIN_CUDA_CHECK(cudaEventDestroy(start));
    SEALTRAIN_CUDA_CHECK(cudaEventDestroy(stop));
    SEALTRAIN_CUDA_CHECK(cudaFree(staging));
    SEALTRAIN_CUDA_CHECK(cudaFree(matrices));
    const double flops =
        2.0 * static_cast<double>(size) * static_cast<double>(size) * static_cast<double>(size);
    return flops / median(seconds);
}

bool parse(int argc, char** argv, Options& options)
{
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool hasValue = i + 1 < argc;
        if (arg == "--batch" && hasValue)
            options.batch = std::strtoul(argv[++i], nullptr, 10);
        else if (arg == "--seq" && hasValue)
            options.seq = std::strtoul(argv[++i], nullptr, 10);
        else if (arg == "--steps" && hasValue)
            options.steps = static_cast<int>(std::strtol(argv[++i], nullptr, 10));
        else if (arg == "--warmup" && hasValue)
            options.warmup = static_cast<int>(std::strtol(argv[++i], nullptr, 10));
        else if (arg == "--fp32")
            options.precision = cuda::Precision::Float32;
        else if (arg == "--no-gelu-epilogue")
            options.geluEpilogue = false;
        else if (arg == "--no-flash")
            options.flashAttention = false;
        else if (arg == "--profile")
            options.profile = true;
        else
            return false;
    }
    return options.batch > 0 && options.seq > 0 && options.steps > 0 && options.warmup >= 0;
}

int run(const Options& options)
{
    const double ceiling = options.profile ? 0.0 : gemmCeiling(8192);
    if (!options.profile)
        std::printf("bf16 cuBLASLt GEMM ceiling (8192^3, median of 20): %.1f TFLOP/s\n",
                    ceiling / 1e12);

    const GptConfig config = GptConfig::gpt2Small();
    cuda::CudaGptOptions modelOptions;
    modelOptions.maxBatch = options.batch;
    modelOptions.maxSeq = options.seq;
    modelOptions.precision = options.precision;
    modelOptions.geluEpilogue = options.geluEpilogue;
    modelOptions.flashAttention = options.flashAttention;
    auto created = cuda::CudaGpt::create(config, modelOptions);
    if (!created) {
        std::fprintf(stderr, "%s\n", created.error().message().c_str());
        return 1;
    }
    cuda::CudaGpt& model = *created;
    if (auto ok = model.initialize(1); !ok) {
        std::fprintf(stderr, "%s\n", ok.error().message().c_str());
        return 1;
    }
    const std::size_t rows = options.batch * options.seq;
    std::vector<std::int32_t> tokens(rows + 1);
    for (std::size_t i = 0; i < tokens.size(); ++i)
        tokens[i] = static_cast<std::int32_t>((hashUniform(i + 7) * 0.5F + 0.5F)
                                              * static_cast<float>(config.vocabSize - 1));
    const std::vector<std::int32_t> inputs(tokens.begin(), tokens.end() - 1);
    const std::vector<std::int32_t> targets(tokens.begin() + 1, tokens.end());

    std::vector<double> stepSeconds;
    float firstLoss = 0.0F;
    float lastLoss = 0.0F;
    for (int step = 0; step < options.warmup + options.steps; ++step) {
        const bool profiled = options.profile && step + 1 == options.warmup + options.steps;
        if (profiled)
            SEALTRAIN_CUDA_CHECK(cudaProfilerStart());
        const auto start = std::chrono::steady_clock::now();
        auto zeroed = model.zeroGradients();
        auto loss = model.forward(inputs, targets, options.batch, options.seq);
        if (!zeroed || !loss) {
            std::fprintf(stderr, "%s\n",
                         (!zeroed ? zeroed.error() : loss.error()).message().c_str());
            return 1;
        }
        auto backward = model.backward(1.0F);
        auto norm = model.optimizerStep(6e-4, 1.0, AdamWParams{});
        auto synced = model.synchronize();
        if (!backward || !norm || !synced) {
            std::fprintf(stderr, "%s\n",
                         (!backward ? backward.error() : (!norm ? norm.error() : synced.error()))
                             .message()
                             .c_str());
            return 1;
        }
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (profiled)
            SEALTRAIN_CUDA_CHECK(cudaProfilerStop());
        if (step == 0)
            firstLoss = *loss;
        lastLoss = *loss;
        std::printf("step %2d: loss %.4f, grad norm %.3f, %.1f ms\n", step, *loss, *norm,
                    seconds * 1e3);
        if (step >= options.warmup)
            stepSeconds.push_back(seconds);
    }
    std::size_t freeBytes = 0;
    std::size_t totalBytes = 0;
    SEALTRAIN_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    const double stepTime = median(stepSeconds);
    const double tokensPerSecond = static_cast<double>(rows) / stepTime;
    const double flopsPerToken = trainingFlopsPerToken(config, options.seq);
    const double achieved = flopsPerToken * tokensPerSecond;
    const double usedGiB = static_cast<double>(totalBytes - freeBytes) / (1024.0 * 1024.0 * 1024.0);
    const double modelGiB = static_cast<double>(model.deviceBytes()) / (1024.0 * 1024.0 * 1024.0);
    const char* precision = options.precision == cuda::Precision::Float32 ? "fp32" : "bf16";
    std::printf("GPT-2 124M, %s, batch %zu x %zu: %.0f tokens/s (median step %.1f ms), "
                "%.1f TFLOP/s, MFU %.1f%% of the measured ceiling (%.1f%% of 989 TFLOP/s), "
                "device memory %.2f GiB in use (model buffers %.2f GiB); loss %.4f -> %.4f\n",
                precision, options.batch, options.seq, tokensPerSecond, stepTime * 1e3,
                achieved / 1e12, ceiling > 0 ? 100.0 * achieved / ceiling : 0.0,
                100.0 * achieved / kDatasheetBf16, usedGiB, modelGiB, firstLoss, lastLoss);
    std::printf("GELU: %s; attention: %s\n",
                model.usesGeluEpilogue() ? "cuBLASLt epilogues" : "separate kernels",
                model.usesFlashAttention() ? "flash" : "cuBLAS products and softmax");
    std::printf("{\"impl\": \"sealtrain\", \"flash\": %s, ",
                model.usesFlashAttention() ? "true" : "false");
    std::printf("\"precision\": \"%s\", \"batch\": %zu, \"seq\": %zu, "
                "\"tokens_per_s\": %.1f, \"step_ms\": %.3f, \"tflops\": %.2f, "
                "\"gemm_ceiling_tflops\": %.2f, \"mfu\": %.4f, \"memory_gib\": %.3f}\n",
                precision, options.batch, options.seq, tokensPerSecond, stepTime * 1e3,
                achieved / 1e12, ceiling / 1e12, ceiling > 0 ? achieved / ceiling : 0.0, usedGiB);
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    Options options;
    if (!parse(argc, argv, options)) {
        std::fprintf(stderr,
                     "usage: bench_cuda_gpt [--batch B] [--seq T] [--steps N] "
                     "[--warmup N] [--fp32] [--no-gelu-epilogue] [--no-flash] [--profile]\n");
        return 2;
    }
    const auto devices = cuda::visibleDevices();
    if (devices.count == 0) {
        std::printf("SKIP bench_cuda_gpt: no CUDA GPU visible (%s); run it on a GPU node.\n",
                    devices.whyNone.c_str());
        return 77;
    }
    try {
        return run(options);
    } catch (const std::exception& failure) {
        std::fprintf(stderr, "bench_cuda_gpt: %s\n", failure.what());
        return 1;
    }
}
