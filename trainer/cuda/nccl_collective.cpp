// NcclCollective (nccl_collective.h): bootstrap over another collective, staged host calls, and
// the per-bucket gradient mean on the collective's own stream.
#include "sealtrain/trainer/cuda/nccl_collective.h"

#include "sealtrain/trainer/cuda/cuda_check.h"

#include <nccl.h>

#include <stdexcept>
#include <string>

namespace sealtrain::trainer::cuda {
namespace {

class NcclError final : public std::runtime_error {
public:
    NcclError(ncclResult_t status, const char* expression, const char* file, int line)
        : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expression
                             + " failed: " + ncclGetErrorString(status))
    {
    }
};

void throwOnNcclError(ncclResult_t status, const char* expression, const char* file, int line)
{
    if (status != ncclSuccess)
        throw NcclError(status, expression, file, line);
}

#define SEALTRAIN_NCCL_CHECK(expr) throwOnNcclError((expr), #expr, __FILE__, __LINE__)

Error collectiveError(const std::exception& failure)
{
    return Error(ErrorCode::Internal, "The NCCL collective failed (" + asClause(failure.what())
                                          + "); check that every rank is alive and its GPU "
                                            "healthy, then start the job again.");
}

template <typename Work>
Result<void> guarded(Work&& work)
{
    try {
        work();
        return success();
    } catch (const std::exception& failure) {
        return collectiveError(failure);
    }
}

bool isDeviceMemory(const void* pointer)
{
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
        (void)cudaGetLastError();  // an unregistered host pointer: clear the error it left
        return false;
    }
    return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

}  // namespace

struct NcclCollective::State {
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;
    int rank = 0;
    int worldSize = 1;
    int device = 0;

    State() = default;
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    State(State&&) = delete;
    State& operator=(State&&) = delete;
    ~State()
    {
        // Nothing is left to report to; a failed teardown still frees what it can.
        if (comm != nullptr)
            ncclCommDestroy(comm);
        if (done != nullptr)
            cudaEventDestroy(done);
        if (stream != nullptr)
            cudaStreamDestroy(stream);
    }

    // Runs `collective` on data at `pointer` (`bytes` long): in place when it is device memory,
    // else through a device copy; waits for the result.
    template <typename Collective>
    void staged(void* pointer, std::size_t bytes, bool copyIn, Collective&& collective)
    {
        SEALTRAIN_CUDA_CHECK(cudaSetDevice(device));
        if (isDeviceMemory(pointer)) {
            collective(pointer);
            SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream));
            return;
        }
        void* staging = nullptr;
        SEALTRAIN_CUDA_CHECK(cudaMallocAsync(&staging, bytes == 0 ? 1 : bytes, stream));
        if (copyIn && bytes > 0)
            SEALTRAIN_CUDA_CHECK(
                cudaMemcpyAsync(staging, pointer, bytes, cudaMemcpyHostToDevice, stream));
        collective(staging);
        if (bytes > 0)
            SEALTRAIN_CUDA_CHECK(
                cudaMemcpyAsync(pointer, staging, bytes, cudaMemcpyDeviceToHost, stream));
        SEALTRAIN_CUDA_CHECK(cudaFreeAsync(staging, stream));
        SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
};

Result<std::unique_ptr<NcclCollective>> NcclCollective::open(Collective& bootstrap, int device)
{
    auto state = std::make_unique<State>();
    state->rank = bootstrap.rank();
    state->worldSize = bootstrap.worldSize();
    state->device = device;
    ncclUniqueId id{};
    const Result<void> made = guarded([&] {
        SEALTRAIN_CUDA_CHECK(cudaSetDevice(device));
        if (state->rank == 0)
            SEALTRAIN_NCCL_CHECK(ncclGetUniqueId(&id));
    });
    // Every rank reaches the broadcast, even when rank 0 failed above, so that the bootstrap's
    // collective calls stay matched.
    SEALTRAIN_TRY(bootstrap.broadcast(std::as_writable_bytes(std::span(&id, 1)), 0));
    if (!made)
        return made.error();
    SEALTRAIN_TRY(guarded([&] {
        SEALTRAIN_NCCL_CHECK(ncclCommInitRank(&state->comm, state->worldSize, id, state->rank));
        SEALTRAIN_CUDA_CHECK(cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking));
        SEALTRAIN_CUDA_CHECK(cudaEventCreateWithFlags(&state->done, cudaEventDisableTiming));
    }));
    return std::unique_ptr<NcclCollective>(new NcclCollective(std::move(state)));
}

NcclCollective::NcclCollective(std::unique_ptr<State> state)
    : state_(std::move(state))
{
}

NcclCollective::~NcclCollective() = default;

int NcclCollective::rank() const
{
    return state_->rank;
}

int NcclCollective::worldSize() const
{
    return state_->worldSize;
}

Result<void> NcclCollective::allReduceMean(std::span<float> data)
{
    return guarded([&] {
        state_->staged(data.data(), data.size_bytes(), true, [&](void* device) {
            SEALTRAIN_NCCL_CHECK(ncclAllReduce(device, device, data.size(), ncclFloat32, ncclAvg,
                                               state_->comm, state_->stream));
        });
    });
}

Result<void> NcclCollective::allReduceSum(std::span<double> data)
{
    return guarded([&] {
        state_->staged(data.data(), data.size_bytes(), true, [&](void* device) {
            SEALTRAIN_NCCL_CHECK(ncclAllReduce(device, device, data.size(), ncclFloat64, ncclSum,
                                               state_->comm, state_->stream));
        });
    });
}

Result<void> NcclCollective::broadcast(std::span<std::byte> data, int root)
{
    if (root < 0 || root >= state_->worldSize)
        return Error(ErrorCode::InvalidArgument,
                     "The broadcast's root rank " + std::to_string(root)
                         + " is not one of the job's ranks; pass a rank below "
                         + std::to_string(state_->worldSize) + ".");
    return guarded([&] {
        state_->staged(data.data(), data.size_bytes(), state_->rank == root, [&](void* device) {
            SEALTRAIN_NCCL_CHECK(ncclBroadcast(device, device, data.size(), ncclUint8, root,
                                               state_->comm, state_->stream));
        });
    });
}

Result<void> NcclCollective::barrier()
{
    double token = 0.0;
    return allReduceSum(std::span(&token, 1));
}

void NcclCollective::reduceMeanAsync(void* data, std::size_t count, ReduceType type,
                                     cudaEvent_t ready)
{
    SEALTRAIN_CUDA_CHECK(cudaStreamWaitEvent(state_->stream, ready, 0));
    SEALTRAIN_NCCL_CHECK(ncclAllReduce(data, data, count,
                                       type == ReduceType::BFloat16 ? ncclBfloat16 : ncclFloat32,
                                       ncclAvg, state_->comm, state_->stream));
}

void NcclCollective::joinInto(cudaStream_t stream)
{
    SEALTRAIN_CUDA_CHECK(cudaEventRecord(state_->done, state_->stream));
    SEALTRAIN_CUDA_CHECK(cudaStreamWaitEvent(stream, state_->done, 0));
}

}  // namespace sealtrain::trainer::cuda
