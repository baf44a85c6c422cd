// bench_checkpoint: the time to write a GPT-2 124M checkpoint with its AdamW moments (about
// 1.5 GB of safetensors) sealed and signed (writeCheckpoint: encode, seal under the checkpoints
// KEK, SHA-256 and sign the lineage statement, both files atomically and durably), beside the
// time to write the same plaintext bytes plainly (encode, then writeFileAtomically: the same
// atomic, fsync'd write without the cryptography), in the same run, alternating, best of N.
// Issue #17's goal: sealed and signed within 1.1× of plain.
//
//   bench_checkpoint [--folder DIR] [--runs N] [--layers L]
//
// DIR defaults to a fresh folder under the system's temporary directory (give one on the disk
// that checkpoints really go to); it is removed at the end. Times are wall-clock seconds.
#include "sealtrain/base/byte_io.h"
#include "sealtrain/crypto/kek.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/gpt_config.h"
#include "sealtrain/trainer/counter_rng.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using namespace sealtrain;
using namespace sealtrain::trainer;

namespace {

struct Options {
    std::filesystem::path folder;
    int runs = 4;
    std::size_t layers = 12;
};

bool parse(int argc, char** argv, Options& options)
{
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool hasValue = i + 1 < argc;
        if (arg == "--folder" && hasValue)
            options.folder = argv[++i];
        else if (arg == "--runs" && hasValue)
            options.runs = static_cast<int>(std::strtol(argv[++i], nullptr, 10));
        else if (arg == "--layers" && hasValue)
            options.layers = std::strtoul(argv[++i], nullptr, 10);
        else
            return false;
    }
    return options.runs > 0 && options.layers > 0;
}

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int run(const Options& options)
{
    TrainingConfig config;
    config.model = GptConfig::gpt2Small();
    config.model.layers = options.layers;
    config.batch = 16;
    const ParameterLayout layout(config.model);
    std::vector<float> parameters(layout.totalSize());
    std::vector<float> m(layout.totalSize());
    std::vector<float> v(layout.totalSize());
    const CounterRng rng(3);
    for (std::size_t i = 0; i < parameters.size(); ++i) {  // random bits, never zeros
        parameters[i] = static_cast<float>(rng.normal(0, i)) * 0.02F;
        m[i] = static_cast<float>(rng.normal(1, i)) * 1e-3F;
        v[i] = m[i] * m[i];
    }
    const CheckpointTensors tensors{parameters, m, v};
    CheckpointState state;
    state.config = config;
    state.runId = "bench";
    state.datasetId = "sha256:" + std::string(64, 'a');
    state.tokenizer = "gpt2-bpe";
    auto kek = crypto::generateKek(kCheckpointsKekId, 1);
    auto signer = crypto::SigningKey::generate();
    if (!kek || !signer) {
        std::fprintf(stderr, "bench_checkpoint: cannot make the keys.\n");
        return 1;
    }
    const std::filesystem::path folder =
        options.folder.empty()
            ? std::filesystem::temp_directory_path() / fmt::format("bench_checkpoint.{}", getpid())
            : options.folder;
    std::filesystem::create_directories(folder);

    std::vector<double> sealedTimes;
    std::vector<double> plainTimes;
    std::size_t bytes = 0;
    // Plain: encode, then the atomic write of those bytes.
    const auto plainWrite = [&]() -> double {
        const auto start = std::chrono::steady_clock::now();
        auto plaintext = encodeCheckpoint(state, tensors);
        if (!plaintext) {
            std::fprintf(stderr, "%s\n", plaintext.error().message().c_str());
            std::exit(1);
        }
        bytes = plaintext->size();
        if (auto written = writeFileAtomically(folder / "plain.safetensors", *plaintext,
                                               AtomicFileSink::Overwrite::Allow);
            !written) {
            std::fprintf(stderr, "%s\n", written.error().message().c_str());
            std::exit(1);
        }
        return secondsSince(start);
    };
    // Sealed and signed: writeCheckpoint does all of it (it encodes too).
    const auto sealedWrite = [&](std::uint64_t step) -> double {
        state.step = step;
        const auto start = std::chrono::steady_clock::now();
        auto sealed =
            writeCheckpoint(folder / "run", state, tensors, std::nullopt, *kek, *signer, 1);
        if (!sealed) {
            std::fprintf(stderr, "%s\n", sealed.error().message().c_str());
            std::exit(1);
        }
        return secondsSince(start);
    };
    for (int i = 0; i < options.runs; ++i) {
        // Alternating which goes first, so neither always meets the other's dirty pages.
        double plain = 0.0;
        double seconds = 0.0;
        if (i % 2 == 0) {
            plain = plainWrite();
            seconds = sealedWrite(static_cast<std::uint64_t>(i) + 1);
        } else {
            seconds = sealedWrite(static_cast<std::uint64_t>(i) + 1);
            plain = plainWrite();
        }
        std::printf("run %d: plain %.3f s, sealed and signed %.3f s (%.2fx)\n", i + 1, plain,
                    seconds, seconds / plain);
        plainTimes.push_back(plain);
        sealedTimes.push_back(seconds);
    }
    std::filesystem::remove_all(folder);
    const double gb = static_cast<double>(bytes) / 1e9;
    std::sort(plainTimes.begin(), plainTimes.end());
    std::sort(sealedTimes.begin(), sealedTimes.end());
    const double bestSealed = sealedTimes.front();
    const double bestPlain = plainTimes.front();
    const double medianSealed = sealedTimes[sealedTimes.size() / 2];
    const double medianPlain = plainTimes[plainTimes.size() / 2];
    std::printf("GPT-2 124M checkpoint with AdamW moments, %.2f GB, best of %d: sealed and signed "
                "%.3f s (%.2f GB/s), plain write %.3f s (%.2f GB/s): %.2fx plain; medians %.3f s "
                "and %.3f s: %.2fx (goal <= 1.10x)\n",
                gb, options.runs, bestSealed, gb / bestSealed, bestPlain, gb / bestPlain,
                bestSealed / bestPlain, medianSealed, medianPlain, medianSealed / medianPlain);
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    Options options;
    if (!parse(argc, argv, options)) {
        std::fprintf(stderr, "usage: bench_checkpoint [--folder DIR] [--runs N] [--layers L]\n");
        return 2;
    }
    return run(options);
}
