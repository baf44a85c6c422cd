// The Collective (collective.h) over NCCL, one process per GPU, with its own CUDA stream.
//
// Bootstrap: rank 0 creates the ncclUniqueId and broadcasts it over another collective (the MPI
// one when launched by mpirun/srun, the one-rank one otherwise), then every rank joins the
// communicator. The host-facing calls of Collective accept host or device memory (host data is
// staged through the device) and return when the result is in place. For training, CudaGpt uses
// the GradientReducer side: each layer's gradient bucket is averaged on the collective's stream as
// soon as backward has produced it, overlapped with the rest of backward.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/trainer/collective.h"
#include "sealtrain/trainer/cuda/gradient_reducer.h"

#include <memory>

namespace sealtrain::trainer::cuda {

class NcclCollective final : public Collective, public GradientReducer {
public:
    // Joins the ranks of `bootstrap` (openCollective()'s: MPI under mpirun/srun, else one rank)
    // into one NCCL communicator on GPU `device`. Collective: every rank of `bootstrap` must
    // call it. `bootstrap` is used only during this call.
    [[nodiscard]] static Result<std::unique_ptr<NcclCollective>> open(Collective& bootstrap,
                                                                      int device);
    NcclCollective(const NcclCollective&) = delete;
    NcclCollective& operator=(const NcclCollective&) = delete;
    NcclCollective(NcclCollective&&) = delete;
    NcclCollective& operator=(NcclCollective&&) = delete;
    ~NcclCollective() override;

    [[nodiscard]] int rank() const override;
    [[nodiscard]] int worldSize() const override;
    [[nodiscard]] std::string_view name() const override { return "nccl"; }
    [[nodiscard]] Result<void> allReduceMean(std::span<float> data) override;
    [[nodiscard]] Result<void> allReduceSum(std::span<double> data) override;
    [[nodiscard]] Result<void> broadcast(std::span<std::byte> data, int root) override;
    [[nodiscard]] Result<void> barrier() override;

    void reduceMeanAsync(void* data, std::size_t count, ReduceType type,
                         cudaEvent_t ready) override;
    void joinInto(cudaStream_t stream) override;

    struct State;

private:
    explicit NcclCollective(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

}  // namespace sealtrain::trainer::cuda
