// The collective over MPI_COMM_WORLD for CPU ranks: gradients are summed with MPI_Allreduce in
// place and scaled by 1/worldSize on every rank.
//
// Every rank ends with bit-identical values: Open MPI's all-reduce algorithms (recursive
// doubling, ring, reduce + broadcast) compute each element's sum once, or pairwise with the same
// operands, and floating-point addition is commutative, so all ranks hold the same bits; the
// scaling is then the same multiplication everywhere. tests/mpi checks it by hashing the
// parameters of every rank after every step.
#include "collective_mpi.h"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <string>

namespace sealtrain::trainer::internal {

namespace {

// MPI counts are int: longer spans go in chunks of at most this many elements.
constexpr std::size_t kMaxChunk = std::size_t{1} << 30U;

// One collective may be open at a time, and MPI can be initialised only once per process.
std::atomic<bool> collectiveOpen{false};

// MPI's description of an error code, as a clause that fits in our sentence.
std::string describe(int code)
{
    std::array<char, MPI_MAX_ERROR_STRING> buffer{};
    int length = 0;
    if (MPI_Error_string(code, buffer.data(), &length) != MPI_SUCCESS)
        return "error code " + std::to_string(code);
    const std::string text =
        asClause(std::string_view(buffer.data(), static_cast<std::size_t>(length)));
    return text.empty() ? "error code " + std::to_string(code) : text;
}

Error mpiError(const std::string& what, int code)
{
    return Error(ErrorCode::Io, "The MPI " + what + " failed (" + describe(code)
                                    + "); check that every rank is still running and that all "
                                      "ranks make the same calls.");
}

class MpiCollective final : public Collective {
public:
    MpiCollective(int rank, int worldSize, bool ownsMpi)
        : rank_(rank)
        , worldSize_(worldSize)
        , ownsMpi_(ownsMpi)
    {
    }
    MpiCollective(const MpiCollective&) = delete;
    MpiCollective& operator=(const MpiCollective&) = delete;
    MpiCollective(MpiCollective&&) = delete;
    MpiCollective& operator=(MpiCollective&&) = delete;
    ~MpiCollective() override
    {
        if (ownsMpi_)
            MPI_Finalize();
        collectiveOpen = false;
    }

    [[nodiscard]] int rank() const override { return rank_; }
    [[nodiscard]] int worldSize() const override { return worldSize_; }
    [[nodiscard]] std::string_view name() const override { return "mpi"; }

    [[nodiscard]] Result<void> allReduceMean(std::span<float> data) override
    {
        for (std::size_t offset = 0; offset < data.size(); offset += kMaxChunk) {
            const std::size_t count = std::min(kMaxChunk, data.size() - offset);
            if (const int code =
                    MPI_Allreduce(MPI_IN_PLACE, data.data() + offset, static_cast<int>(count),
                                  MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                code != MPI_SUCCESS)
                return mpiError("all-reduce of " + std::to_string(data.size()) + " floats", code);
        }
        const float scale = 1.0F / static_cast<float>(worldSize_);
        for (float& value : data)
            value *= scale;
        return success();
    }

    [[nodiscard]] Result<void> allReduceSum(std::span<double> data) override
    {
        for (std::size_t offset = 0; offset < data.size(); offset += kMaxChunk) {
            const std::size_t count = std::min(kMaxChunk, data.size() - offset);
            if (const int code =
                    MPI_Allreduce(MPI_IN_PLACE, data.data() + offset, static_cast<int>(count),
                                  MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                code != MPI_SUCCESS)
                return mpiError("all-reduce of " + std::to_string(data.size()) + " doubles", code);
        }
        return success();
    }

    [[nodiscard]] Result<void> broadcast(std::span<std::byte> data, int root) override
    {
        if (root < 0 || root >= worldSize_)
            return Error(ErrorCode::InvalidArgument, "The broadcast's root " + std::to_string(root)
                                                         + " is not a rank of this run of "
                                                         + std::to_string(worldSize_)
                                                         + "; pass a rank between 0 and "
                                                         + std::to_string(worldSize_ - 1) + ".");
        for (std::size_t offset = 0; offset < data.size(); offset += kMaxChunk) {
            const std::size_t count = std::min(kMaxChunk, data.size() - offset);
            if (const int code = MPI_Bcast(data.data() + offset, static_cast<int>(count), MPI_BYTE,
                                           root, MPI_COMM_WORLD);
                code != MPI_SUCCESS)
                return mpiError("broadcast of " + std::to_string(data.size()) + " bytes", code);
        }
        return success();
    }

    [[nodiscard]] Result<void> barrier() override
    {
        if (const int code = MPI_Barrier(MPI_COMM_WORLD); code != MPI_SUCCESS)
            return mpiError("barrier", code);
        return success();
    }

private:
    int rank_;
    int worldSize_;
    bool ownsMpi_;
};

}  // namespace

bool mpiInitialized()
{
    int initialized = 0;
    MPI_Initialized(&initialized);
    return initialized != 0;
}

Result<std::unique_ptr<Collective>> openMpiCollective()
{
    if (collectiveOpen.exchange(true))
        return Error(ErrorCode::InvalidArgument,
                     "A collective is already open in this process; use that one.");
    auto refuse = [](Error error) {
        collectiveOpen = false;
        return error;
    };
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized != 0)
        return refuse(Error(ErrorCode::InvalidArgument,
                            "MPI was already finalised in this process and cannot start again; "
                            "open the collective once per process."));
    const bool ownsMpi = !mpiInitialized();
    if (ownsMpi) {
        int provided = 0;
        if (const int code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
            code != MPI_SUCCESS)
            return refuse(Error(ErrorCode::Io, "MPI could not start (" + describe(code)
                                                   + "); check the launcher's command line "
                                                     "and that Open MPI is installed."));
        if (provided < MPI_THREAD_FUNNELED) {
            MPI_Finalize();
            return refuse(Error(ErrorCode::Unsupported,
                                "The MPI library does not support threads calling into a "
                                "process whose main thread does the communication; use an MPI "
                                "built with thread support."));
        }
    }
    // Failures come back as error codes that we turn into Results instead of aborting the run.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank = 0;
    int worldSize = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
    return std::unique_ptr<Collective>(std::make_unique<MpiCollective>(rank, worldSize, ownsMpi));
}

}  // namespace sealtrain::trainer::internal
