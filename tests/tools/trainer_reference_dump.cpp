// Writes what tests/scripts/torch_reference.py compares against PyTorch: a tiny GPT's initial
// weights (model.safetensors, GPT2Model's names, with the config.json of formats/hf_gpt2.h), and in
// reference.safetensors the batch, our loss and gradients at those weights, and the losses,
// gradient norms and parameters of 10 training steps (two micro-batches each, clipping, AdamW,
// warm-up + cosine). The settings are in reference.safetensors' __metadata__, so the script reads
// them rather than repeating them.
//
// Usage: trainer_reference_dump DIRECTORY
#include "sealtrain/formats/hf_gpt2.h"
#include "sealtrain/formats/safetensors.h"
#include "sealtrain/trainer/counter_rng.h"
#include "sealtrain/trainer/cpu_model.h"
#include "sealtrain/trainer/training.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

using namespace sealtrain::trainer;

namespace {

bool writeFile(const std::string& path, const std::vector<std::uint8_t>& bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(out);
}

template <typename T>
SafetensorsEntry entry(std::string name, const char* dtype, std::vector<std::size_t> shape,
                       const std::vector<T>& values)
{
    return {std::move(name), dtype, std::move(shape), std::as_bytes(std::span<const T>(values))};
}

// Round-trips exactly through Python's float().
std::string number(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

int fail(const std::string& message)
{
    std::fprintf(stderr, "trainer_reference_dump: %s\n", message.c_str());
    return 1;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 2)
        return fail("usage: trainer_reference_dump DIRECTORY");
    const std::string directory = argv[1];

    GptConfig config;
    config.vocabSize = 61;  // not a multiple of the padding, so the padding is exercised
    config.paddedVocabSize = GptConfig::padVocab(61);
    config.contextLength = 16;
    config.layers = 2;
    config.heads = 4;
    config.width = 32;
    const std::size_t batch = 4;
    const std::size_t seq = 16;
    const std::size_t steps = 10;
    const AdamWParams adamw{0.9, 0.95, 1e-8, 0.1};
    const LearningRateSchedule schedule{5e-3, 5e-4, 3, steps};
    const double maxGradientNorm = 1.0;

    auto created = CpuModel::create({config, {batch, seq}, adamw});
    if (!created)
        return fail(created.error().message());
    CpuModel& cpuModel = **created;
    Gpt<float>& model = cpuModel.gpt();
    model.initialize(1234);
    const std::vector<float> initial(model.parameters().begin(), model.parameters().end());

    // Two micro-batches of random tokens; one target masked with -1.
    const CounterRng rng(99);
    std::vector<std::vector<std::int32_t>> tokens(2);
    std::vector<std::vector<std::int32_t>> targets(2);
    for (std::uint64_t m = 0; m < 2; ++m) {
        for (std::size_t i = 0; i < batch * seq; ++i) {
            tokens[m].push_back(static_cast<std::int32_t>(rng.bits(2 * m, i) % config.vocabSize));
            targets[m].push_back(
                static_cast<std::int32_t>(rng.bits(2 * m + 1, i) % config.vocabSize));
        }
    }
    targets[0][5] = -1;

    auto loss = model.forward(tokens[0], targets[0], batch, seq);
    if (!loss)
        return fail(loss.error().message());
    model.zeroGradients();
    model.backward();
    const std::vector<float> lossAtInit{*loss};
    const std::vector<float> gradients(model.gradients().begin(), model.gradients().end());

    const std::vector<MicroBatch> micro{{tokens[0], targets[0]}, {tokens[1], targets[1]}};
    std::vector<float> losses;
    std::vector<float> norms;
    for (std::size_t step = 0; step < steps; ++step) {
        const TrainStepParams params{batch, seq, schedule.at(step), maxGradientNorm};
        auto result = trainStep(cpuModel, micro, params);
        if (!result)
            return fail(result.error().message());
        losses.push_back(static_cast<float>(result->loss));
        norms.push_back(static_cast<float>(result->gradientNorm));
    }

    std::vector<SafetensorsEntry> weights = gptExportEntries(config, initial);
    auto weightBytes = encodeSafetensors(weights, {{"format", "pt"}});
    if (!weightBytes)
        return fail(weightBytes.error().message());

    std::vector<SafetensorsEntry> reference;
    for (std::size_t m = 0; m < 2; ++m) {
        reference.push_back(entry("tokens" + std::to_string(m), "I32", {batch, seq}, tokens[m]));
        reference.push_back(entry("targets" + std::to_string(m), "I32", {batch, seq}, targets[m]));
    }
    reference.push_back(entry("loss", "F32", {1}, lossAtInit));
    reference.push_back(entry("step_losses", "F32", {steps}, losses));
    reference.push_back(entry("step_grad_norms", "F32", {steps}, norms));
    for (auto grad : gptExportEntries(config, gradients)) {
        grad.name = "grad." + grad.name;
        reference.push_back(std::move(grad));
    }
    for (auto trained : gptExportEntries(model.config(), model.parameters())) {
        trained.name = "trained." + trained.name;
        reference.push_back(std::move(trained));
    }
    const std::map<std::string, std::string> metadata{
        {"vocab_size", std::to_string(config.vocabSize)},
        {"context_length", std::to_string(config.contextLength)},
        {"layers", std::to_string(config.layers)},
        {"heads", std::to_string(config.heads)},
        {"width", std::to_string(config.width)},
        {"steps", std::to_string(steps)},
        {"beta1", number(adamw.beta1)},
        {"beta2", number(adamw.beta2)},
        {"epsilon", number(adamw.epsilon)},
        {"weight_decay", number(adamw.weightDecay)},
        {"max_lr", number(schedule.maxRate)},
        {"min_lr", number(schedule.minRate)},
        {"warmup_steps", std::to_string(schedule.warmupSteps)},
        {"max_grad_norm", number(maxGradientNorm)},
    };
    auto referenceBytes = encodeSafetensors(reference, metadata);
    if (!referenceBytes)
        return fail(referenceBytes.error().message());
    // With config.json beside it, the folder is one transformers' GPT2LMHeadModel loads
    // (tests/scripts/transformers_interop.py).
    const std::string configJson = gpt2ConfigJson(config, {0, 0});
    if (!writeFile(directory + "/config.json", {configJson.begin(), configJson.end()})
        || !writeFile(directory + "/model.safetensors", *weightBytes)
        || !writeFile(directory + "/reference.safetensors", *referenceBytes))
        return fail("cannot write into " + directory);
    return 0;
}
