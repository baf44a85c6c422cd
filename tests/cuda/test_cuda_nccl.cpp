// The NCCL collective on one GPU: the Collective calls on host and device memory, refusals, and
// CudaGpt's backward with the per-layer all-reduce overlapped (on one rank the mean is the
// identity, so the gradients must come out bit-identical to a backward without it). Several
// ranks need several GPUs and mpirun: docs/trainer-cuda.md lists that check. Exits 77 without a
// GPU.
#include "gpu_test.h"
#include "sealtrain/trainer/cuda/cuda_gpt.h"
#include "sealtrain/trainer/cuda/nccl_collective.h"

#include <cstdio>
#include <cstring>
#include <vector>

namespace {

using namespace sealtrain::trainer;
using sealtrain::gpu_test::Checker;
using sealtrain::gpu_test::ok;
using sealtrain::gpu_test::OneRank;  // the bootstrap of a single process: nothing to exchange

constexpr const char* kName = "test_cuda_nccl";

void checkCollective(Checker& check, cuda::NcclCollective& nccl)
{
    GPU_EXPECT(check, nccl.rank() == 0);
    GPU_EXPECT(check, nccl.worldSize() == 1);
    GPU_EXPECT(check, nccl.name() == "nccl");

    std::vector<float> host{1.5F, -2.0F, 3.25F};
    const std::vector<float> original = host;
    GPU_EXPECT(check, static_cast<bool>(nccl.allReduceMean(host)));
    GPU_EXPECT(check, host == original);

    float* device = nullptr;
    SEALTRAIN_CUDA_CHECK(cudaMalloc(&device, host.size() * sizeof(float)));
    SEALTRAIN_CUDA_CHECK(
        cudaMemcpy(device, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
    GPU_EXPECT(check, static_cast<bool>(nccl.allReduceMean(std::span(device, host.size()))));
    std::vector<float> back(host.size());
    SEALTRAIN_CUDA_CHECK(
        cudaMemcpy(back.data(), device, back.size() * sizeof(float), cudaMemcpyDeviceToHost));
    GPU_EXPECT(check, back == original);
    SEALTRAIN_CUDA_CHECK(cudaFree(device));

    std::vector<double> sums{4.0, 0.5};
    GPU_EXPECT(check, static_cast<bool>(nccl.allReduceSum(sums)));
    GPU_EXPECT(check, sums[0] == 4.0 && sums[1] == 0.5);
    std::vector<std::byte> bytes{std::byte{7}, std::byte{9}};
    GPU_EXPECT(check, static_cast<bool>(nccl.broadcast(bytes, 0)));
    GPU_EXPECT(check, bytes[0] == std::byte{7} && bytes[1] == std::byte{9});
    GPU_EXPECT(check, !nccl.broadcast(bytes, 1));
    GPU_EXPECT(check, static_cast<bool>(nccl.barrier()));
    GPU_EXPECT(check, static_cast<bool>(nccl.allReduceMean({})));
}

std::vector<float> gradientsAfterBackward(Checker& check, cuda::GradientReducer* reduce)
{
    GptConfig config;
    config.vocabSize = 50;
    config.paddedVocabSize = 64;
    config.contextLength = 16;
    config.layers = 3;
    config.heads = 2;
    config.width = 32;
    auto model = cuda::CudaGpt::create(config, {2, 16, cuda::Precision::BFloat16, true, 0});
    if (!model || !model->initialize(4) || !model->zeroGradients()) {
        check.expect(false, "model set-up", __FILE__, __LINE__);
        return {};
    }
    std::vector<std::int32_t> tokens(32), targets(32);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        tokens[i] = static_cast<std::int32_t>((i * 17) % config.vocabSize);
        targets[i] = static_cast<std::int32_t>((i * 17 + 3) % config.vocabSize);
    }
    const bool ran = model->forward(tokens, targets, 2, 16) && model->backward(1.0F, reduce);
    GPU_EXPECT(check, ran);
    std::vector<float> gradients(model->layout().totalSize());
    GPU_EXPECT(check, static_cast<bool>(model->downloadGradients(gradients)));
    return gradients;
}

}  // namespace

int main()
{
    return sealtrain::gpu_test::runGpuTest(kName, [](Checker& check) {
        OneRank bootstrap;
        auto nccl = cuda::NcclCollective::open(bootstrap, 0);
        if (!ok(check, nccl, "NcclCollective::open"))
            return;
        checkCollective(check, **nccl);
        const std::vector<float> plain = gradientsAfterBackward(check, nullptr);
        const std::vector<float> reduced = gradientsAfterBackward(check, nccl->get());
        GPU_EXPECT(check,
                   !plain.empty() && plain.size() == reduced.size()
                       && std::memcmp(plain.data(), reduced.data(), plain.size() * sizeof(float))
                              == 0);
    });
}
