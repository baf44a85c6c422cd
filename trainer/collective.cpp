// The one-rank collective and openCollective(), which picks MPI when a launcher started us.
#include "sealtrain/trainer/collective.h"

#include "collective_mpi.h"

#include <cstdlib>

namespace sealtrain::trainer {

namespace {

class SingleCollective final : public Collective {
public:
    [[nodiscard]] int rank() const override { return 0; }
    [[nodiscard]] int worldSize() const override { return 1; }
    [[nodiscard]] std::string_view name() const override { return "single"; }
    // The mean over one rank is the data itself.
    [[nodiscard]] Result<void> allReduceMean(std::span<float> /*data*/) override
    {
        return success();
    }
    [[nodiscard]] Result<void> allReduceSum(std::span<double> /*data*/) override
    {
        return success();
    }
    [[nodiscard]] Result<void> broadcast(std::span<std::byte> /*data*/, int root) override
    {
        if (root != 0)
            return Error(ErrorCode::InvalidArgument,
                         "A one-rank run can only broadcast from rank 0; pass root 0.");
        return success();
    }
    [[nodiscard]] Result<void> barrier() override { return success(); }
};

// Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE; MPICH's Hydra and Slurm's srun (PMI-2) set
// PMI_SIZE; PMIx launchers (srun --mpi=pmix, prterun) set PMIX_RANK.
bool launchedByMpi()
{
    for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
        if (std::getenv(variable) != nullptr)  // NOLINT(concurrency-mt-unsafe): read at start-up
            return true;
    }
    return false;
}

}  // namespace

std::unique_ptr<Collective> openSingleCollective()
{
    return std::make_unique<SingleCollective>();
}

Result<std::unique_ptr<Collective>> openCollective()
{
    if (launchedByMpi() || internal::mpiInitialized())
        return internal::openMpiCollective();
    return openSingleCollective();
}

}  // namespace sealtrain::trainer
