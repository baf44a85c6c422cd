// Data parallelism's promise (issue #7): N ranks, each training on its disjoint share of a global
// batch and averaging gradients through the collective, follow the run that one process makes
// on the whole batch, up to floating-point reassociation, and every rank holds bit-identical
// parameters after every step.
//
// A plain executable, run by CTest twice: under `mpirun -np 2` (the MPI collective) and as one
// process (the one-rank collective). Rank 0 trains a second model on the whole global batch with
// no collective at all, the one-process reference, step by step beside the data-parallel run.
// Exit 0 when every check holds, 1 otherwise.
#include "sealtrain/crypto/hash.h"
#include "sealtrain/trainer/collective.h"
#include "sealtrain/trainer/counter_rng.h"
#include "sealtrain/trainer/cpu_model.h"
#include "sealtrain/trainer/training.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace {

using sealtrain::trainer::AdamWParams;
using sealtrain::trainer::Collective;
using sealtrain::trainer::CounterRng;
using sealtrain::trainer::CpuModel;
using sealtrain::trainer::GptConfig;
using sealtrain::trainer::MicroBatch;
using sealtrain::trainer::TrainStepParams;

constexpr std::size_t kGlobalBatch = 8;  // sequences per step, split evenly over the ranks
constexpr std::size_t kSeq = 16;
constexpr std::size_t kSteps = 30;
constexpr std::uint64_t kSeed = 1234;
// How far the data-parallel loss may drift from the one-process loss, relative; why this bound
// holds is in docs/trainer.md ("Data parallelism").
constexpr double kLossRelativeBound = 1e-5;
// The same for the global gradient norm, which every rank computes after the all-reduce. The
// loss alone would not catch a missing division by the world size: clipping (max norm 1) hides a
// gradient twice too large from the parameters, but not from its norm.
constexpr double kNormRelativeBound = 1e-4;

GptConfig modelConfig()
{
    GptConfig config;
    config.vocabSize = 61;
    config.paddedVocabSize = GptConfig::padVocab(config.vocabSize);
    config.contextLength = kSeq;
    config.layers = 2;
    config.heads = 4;
    config.width = 32;
    return config;
}

// The global batch of `step`: each sequence an arithmetic progression modulo the vocabulary with
// its own start and stride, so the loss has something to learn and falls.
struct GlobalBatch {
    std::vector<std::int32_t> tokens;
    std::vector<std::int32_t> targets;
};
GlobalBatch globalBatch(std::size_t step, std::size_t vocab)
{
    const CounterRng rng(kSeed);
    GlobalBatch batch;
    for (std::size_t s = 0; s < kGlobalBatch; ++s) {
        const std::uint64_t sequence = step * kGlobalBatch + s;
        const std::uint64_t start = rng.bits(0, sequence) % vocab;
        const std::uint64_t stride = 1 + rng.bits(1, sequence) % 3;
        for (std::size_t t = 0; t <= kSeq; ++t) {
            const auto token = static_cast<std::int32_t>((start + stride * t) % vocab);
            if (t < kSeq)
                batch.tokens.push_back(token);
            if (t > 0)
                batch.targets.push_back(token);
        }
    }
    return batch;
}

sealtrain::crypto::Sha256Digest hashOf(std::span<const float> values)
{
    return sealtrain::crypto::sha256(std::span<const std::uint8_t>(
        reinterpret_cast<const std::uint8_t*>(values.data()),  // NOLINT: bytes of floats
        values.size_bytes()));
}

class Checks {
public:
    explicit Checks(int rank)
        : rank_(rank)
    {
    }
    void expect(bool condition, const char* what, std::size_t step)
    {
        ++count_;
        if (!condition) {
            ++failures_;
            std::printf("FAIL rank %d, step %zu: %s\n", rank_, step, what);
        }
    }
    [[nodiscard]] int failures() const { return failures_; }
    [[nodiscard]] int count() const { return count_; }

private:
    int rank_;
    int count_ = 0;
    int failures_ = 0;
};

// True on every rank when every rank's parameters hash like rank 0's.
bool identicalOnAllRanks(Collective& collective, std::span<const float> parameters, bool& ok)
{
    const auto mine = hashOf(parameters);
    auto rootHash = mine;
    ok = collective.broadcast(std::as_writable_bytes(std::span(rootHash)), 0).ok();
    std::vector<double> mismatches{rootHash == mine ? 0.0 : 1.0};
    ok = ok && collective.allReduceSum(mismatches).ok();
    return mismatches[0] == 0.0;
}

int run()
{
    auto opened = sealtrain::trainer::openCollective();
    if (!opened) {
        std::printf("FAIL: %s\n", opened.error().message().c_str());
        return 1;
    }
    Collective& collective = **opened;
    const int rank = collective.rank();
    const auto ranks = static_cast<std::size_t>(collective.worldSize());
    Checks checks(rank);
    if (kGlobalBatch % ranks != 0) {
        std::printf("FAIL: the global batch of %zu does not split over %zu ranks.\n", kGlobalBatch,
                    ranks);
        return 1;
    }
    checks.expect(collective.name() == (ranks == 1 ? "single" : "mpi"),
                  "mpirun's ranks talk over MPI, one process needs no MPI", 0);
    const std::size_t localBatch = kGlobalBatch / ranks;
    const GptConfig config = modelConfig();

    // Each rank starts from its own seed; rank 0's parameters then win by broadcast. The model
    // averages its gradients over the ranks through the collective.
    const AdamWParams adamParams{};
    auto created = CpuModel::create({config, {localBatch, kSeq}, adamParams});
    if (!created || !(*created)->initialize(kSeed + static_cast<std::uint64_t>(rank))) {
        std::printf("FAIL: the model can not be created.\n");
        return 1;
    }
    CpuModel& model = **created;
    bool collectiveOk = true;
    const bool sameBeforeBroadcast =
        identicalOnAllRanks(collective, model.gpt().parameters(), collectiveOk);
    checks.expect(collectiveOk, "the collective's hash exchange works", 0);
    checks.expect(ranks == 1 || !sameBeforeBroadcast,
                  "ranks seeded differently start with different parameters", 0);
    checks.expect(collective.broadcast(std::as_writable_bytes(model.gpt().parameters()), 0).ok(),
                  "rank 0 broadcasts the initial parameters", 0);
    checks.expect(model.joinRanks(collective).ok(), "the model joins the ranks", 0);

    // The one-process reference on rank 0: the whole global batch, no collective.
    std::unique_ptr<CpuModel> reference;
    if (rank == 0) {
        auto whole = CpuModel::create({config, {kGlobalBatch, kSeq}, adamParams});
        if (!whole || !(*whole)->initialize(kSeed)) {
            std::printf("FAIL: the reference model can not be created.\n");
            return 1;
        }
        reference = std::move(whole).value();
    }

    TrainStepParams params;
    params.seq = kSeq;
    params.learningRate = 1e-2;
    params.maxGradientNorm = 1.0;
    double worstRelative = 0.0;
    double worstNormRelative = 0.0;
    double firstLoss = 0.0;
    double lastLoss = 0.0;
    if (rank == 0)
        std::printf("%zu rank(s), collective '%s'\n%4s %14s %14s %10s %10s  %s\n", ranks,
                    std::string(collective.name()).c_str(), "step", "loss (ranks)", "loss (1 proc)",
                    "rel. diff", "norm diff", "parameters identical on all ranks");
    for (std::size_t step = 0; step < kSteps; ++step) {
        const GlobalBatch global = globalBatch(step, config.vocabSize);
        const std::size_t share = localBatch * kSeq;
        const auto first = static_cast<std::size_t>(rank) * share;
        const MicroBatch local{std::span(global.tokens).subspan(first, share),
                               std::span(global.targets).subspan(first, share)};
        params.batch = localBatch;
        auto result = sealtrain::trainer::trainStep(model, std::span(&local, 1), params);
        checks.expect(result.ok(), "the data-parallel step succeeds", step);
        if (!result)
            break;
        // Every rank's share has as many targets, so the mean of the ranks' means is the global
        // mean loss.
        std::vector<double> loss{result->loss};
        checks.expect(collective.allReduceSum(loss).ok(), "the losses are summed", step);
        loss[0] /= static_cast<double>(ranks);

        const bool identical =
            identicalOnAllRanks(collective, model.gpt().parameters(), collectiveOk);
        checks.expect(collectiveOk, "the collective's hash exchange works", step);
        checks.expect(identical, "every rank holds rank 0's parameters, bit for bit", step);

        if (rank != 0)
            continue;
        const MicroBatch whole{global.tokens, global.targets};
        params.batch = kGlobalBatch;
        auto expected = sealtrain::trainer::trainStep(*reference, std::span(&whole, 1), params);
        checks.expect(expected.ok(), "the one-process step succeeds", step);
        if (!expected)
            break;
        const double relative = std::abs(loss[0] - expected->loss) / std::abs(expected->loss);
        worstRelative = std::max(worstRelative, relative);
        const double normRelative = std::abs(result->gradientNorm - expected->gradientNorm)
                                    / std::abs(expected->gradientNorm);
        worstNormRelative = std::max(worstNormRelative, normRelative);
        std::printf("%4zu %14.9f %14.9f %10.2e %10.2e  %s\n", step, loss[0], expected->loss,
                    relative, normRelative, identical ? "yes" : "NO");
        checks.expect(relative <= kLossRelativeBound,
                      "the data-parallel loss matches the one-process loss within the bound", step);
        checks.expect(normRelative <= kNormRelativeBound,
                      "the data-parallel gradient norm matches the one-process norm within the "
                      "bound",
                      step);
        if (ranks == 1) {
            // One rank is the one-process run exactly: the collective adds nothing.
            checks.expect(loss[0] == expected->loss, "one rank's loss is bit-identical", step);
            checks.expect(hashOf(model.gpt().parameters()) == hashOf(reference->gpt().parameters()),
                          "one rank's parameters are bit-identical", step);
        }
        if (step == 0)
            firstLoss = expected->loss;
        lastLoss = expected->loss;
    }
    if (rank == 0) {
        checks.expect(lastLoss < 0.5 * firstLoss, "the model learns: the loss halves", kSteps);
        std::printf("worst relative loss difference %.2e (bound %.0e), gradient norm %.2e "
                    "(bound %.0e)\n",
                    worstRelative, kLossRelativeBound, worstNormRelative, kNormRelativeBound);
        std::printf("parameters' SHA-256 after %zu steps: ", kSteps);
        for (const std::uint8_t byte : hashOf(model.gpt().parameters()))
            std::printf("%02x", byte);
        std::printf("\n");
    }
    std::vector<double> failures{static_cast<double>(checks.failures())};
    if (!collective.allReduceSum(failures).ok())
        failures[0] = 1.0;
    if (rank == 0)
        std::printf("test_trainer_data_parallel: %d checks on rank 0, %.0f failed on all ranks\n",
                    checks.count(), failures[0]);
    return failures[0] == 0.0 ? 0 : 1;
}

}  // namespace

int main()
{
    return run();
}
