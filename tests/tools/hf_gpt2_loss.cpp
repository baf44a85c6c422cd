// Imports a Hugging Face GPT-2 folder (config.json and model.safetensors, as save_pretrained
// writes them) with Sealtrain's importer (formats/hf_gpt2.h) and prints the CPU model's loss on
// the batch in BATCH (a safetensors file with I32 tensors "tokens" and "targets", both (batch,
// seq)), as %.17g: what tests/scripts/transformers_interop.py compares with transformers' own.
//
// Usage: hf_gpt2_loss FOLDER BATCH
#include "sealtrain/formats/hf_gpt2.h"
#include "sealtrain/formats/safetensors_reader.h"
#include "sealtrain/trainer/gpt.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace sealtrain::trainer;

namespace {

std::vector<std::uint8_t> readAll(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int fail(const std::string& message)
{
    std::fprintf(stderr, "hf_gpt2_loss: %s\n", message.c_str());
    return 1;
}

std::vector<std::int32_t> ints(const SafetensorsTensor& tensor)
{
    std::vector<std::int32_t> values(tensor.data.size() / sizeof(std::int32_t));
    std::memcpy(values.data(), tensor.data.data(), values.size() * sizeof(std::int32_t));
    return values;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 3)
        return fail("usage: hf_gpt2_loss FOLDER BATCH");
    const std::string folder = argv[1];
    const std::vector<std::uint8_t> configBytes = readAll(folder + "/config.json");
    auto config = parseGpt2Config(std::string(configBytes.begin(), configBytes.end()));
    if (!config)
        return fail(config.error().message());
    const std::vector<std::uint8_t> weightBytes = readAll(folder + "/model.safetensors");
    auto weights = decodeSafetensors(weightBytes);
    if (!weights)
        return fail(weights.error().message());
    auto parameters = importGpt2Parameters(*config, *weights);
    if (!parameters)
        return fail(parameters.error().message());

    const std::vector<std::uint8_t> batchBytes = readAll(argv[2]);
    auto batchFile = decodeSafetensors(batchBytes);
    if (!batchFile || batchFile->tensors.count("tokens") == 0
        || batchFile->tensors.count("targets") == 0)
        return fail("the batch file needs I32 tensors tokens and targets");
    const SafetensorsTensor& tokenTensor = batchFile->tensors.at("tokens");
    if (tokenTensor.shape.size() != 2)
        return fail("tokens must be (batch, seq)");
    const std::size_t batch = tokenTensor.shape[0];
    const std::size_t seq = tokenTensor.shape[1];
    auto model = Gpt<float>::create(*config, batch, seq);
    if (!model)
        return fail(model.error().message());
    std::copy(parameters->begin(), parameters->end(), model->parameters().begin());
    auto loss =
        model->forward(ints(tokenTensor), ints(batchFile->tensors.at("targets")), batch, seq);
    if (!loss)
        return fail(loss.error().message());
    std::printf("%.17g\n", static_cast<double>(*loss));
    return 0;
}
