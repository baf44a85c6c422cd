// Collective communication between the ranks of a data-parallel run: a one-rank no-op, MPI on
// CPU ranks (collective_mpi.cpp) and NCCL on GPUs (issue #8) implement the same interface, so
// the training loop does not know which one it talks to.
//
// Rank 0 decides: it broadcasts the initial parameters and anything else every rank must agree
// on. Every call is collective: all ranks make the same calls in the same order, with the same
// sizes; a rank that skips one hangs the others.
#pragma once

#include "sealtrain/base/result.h"

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

namespace sealtrain::trainer {

class Collective {  // one per process; rank 0 decides
public:
    Collective() = default;
    Collective(const Collective&) = delete;
    Collective& operator=(const Collective&) = delete;
    Collective(Collective&&) = delete;
    Collective& operator=(Collective&&) = delete;
    virtual ~Collective() = default;

    [[nodiscard]] virtual int rank() const = 0;
    [[nodiscard]] virtual int worldSize() const = 0;
    [[nodiscard]] virtual std::string_view name() const = 0;  // "single", "mpi", "nccl"
    // Replaces `data` on every rank by the element-wise mean over the ranks; every rank ends with
    // bit-identical values.
    [[nodiscard]] virtual Result<void> allReduceMean(std::span<float> data) = 0;  // in place
    // Element-wise sum over the ranks, for small host values (loss, counts).
    [[nodiscard]] virtual Result<void> allReduceSum(std::span<double> data) = 0;
    // Copies `root`'s bytes into `data` on every other rank.
    [[nodiscard]] virtual Result<void> broadcast(std::span<std::byte> data, int root) = 0;
    [[nodiscard]] virtual Result<void> barrier() = 0;
};

// MPI when the process was launched by mpirun/srun (OMPI_COMM_WORLD_SIZE / PMI_SIZE / PMIX_RANK
// set, or MPI already initialised), one-rank otherwise. Owns MPI_Init/MPI_Finalize: MPI is
// finalised when the returned object is destroyed, and only one may be open at a time.
[[nodiscard]] Result<std::unique_ptr<Collective>> openCollective();

// The one-rank collective, whatever the environment says (tests, single-process tools).
[[nodiscard]] std::unique_ptr<Collective> openSingleCollective();

}  // namespace sealtrain::trainer
