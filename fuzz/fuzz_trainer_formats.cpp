// libFuzzer target: the readers of model files that reach the control plane from outside it — a
// Hugging Face folder a user imports (config.json, model.safetensors), a worker's signed checkpoint
// statement and its plaintext, the configuration a checkpoint records. The first byte picks the
// reader (fuzz_trainer_formats.h); seeds are valid files of each (make_fuzz_seeds). Any crash,
// sanitizer report, allocation past the fuzzer's limit (a size the input claims but does not hold)
// or accepted file that breaks the reader's own promise is a bug.
#include "fuzz_trainer_formats.h"

#include "sealtrain/base/utf8.h"
#include "sealtrain/dataset/tokenizer.h"
#include "sealtrain/formats/base_model.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/hf_gpt2.h"
#include "sealtrain/formats/safetensors.h"
#include "sealtrain/formats/safetensors_reader.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>
#include <vector>

namespace {

using namespace sealtrain;

void readSafetensors(std::span<const std::uint8_t> bytes)
{
    auto file = trainer::decodeSafetensors(bytes);
    if (!file)
        return;
    for (const auto& [name, tensor] : file->tensors) {
        // An accepted file holds every tensor it declares, inside the bytes, of its shape's size.
        std::size_t elements = 1;
        for (const std::size_t dimension : tensor.shape)
            if (__builtin_mul_overflow(elements, dimension, &elements))
                std::abort();
        const std::size_t width = trainer::safetensorsDtypeSize(tensor.dtype);
        std::size_t declared = 0;
        if (width == 0 || __builtin_mul_overflow(elements, width, &declared)
            || declared != tensor.data.size() || tensor.data.data() < bytes.data()
            || tensor.data.data() + tensor.data.size() > bytes.data() + bytes.size())
            std::abort();
        if (tensor.dtype != "F32")
            continue;
        std::vector<float> values(elements);
        if (!trainer::readF32Tensor(*file, name, tensor.shape, values))
            std::abort();
    }
}

void importBaseModel(std::span<const std::uint8_t> bytes)
{
    static const std::string config = trainer::gpt2ConfigJson(fuzz::importShape(), {0, 0});
    auto prepared = trainer::prepareBaseModel(config, bytes);
    if (!prepared)
        return;
    // What the import keeps is a file our own reader takes back, of the shape it was checked for.
    auto again = trainer::prepareBaseModel(prepared->configJson, prepared->safetensors);
    if (!again || again->safetensors != prepared->safetensors)
        std::abort();
}

void readCheckpoint(std::span<const std::uint8_t> bytes)
{
    auto decoded = trainer::decodeCheckpoint(bytes);
    if (!decoded)
        return;
    const std::size_t expected = trainer::ParameterLayout(decoded->state.config.model).totalSize();
    if (decoded->parameters.size() != expected || decoded->firstMoment.size() != expected
        || decoded->secondMoment.size() != expected)
        std::abort();
}

// vocab.json, merges.txt and a text, separated by NUL bytes: a tokenizer the files make encodes
// the text to ids of its vocabulary, and valid UTF-8 decodes back to itself.
void tokenize(std::string_view input)
{
    const auto first = input.find('\0');
    const auto second = first == std::string_view::npos ? first : input.find('\0', first + 1);
    if (second == std::string_view::npos)
        return;
    auto tokenizer = dataset::Gpt2BpeTokenizer::fromText(
        std::string(input.substr(0, first)),
        std::string(input.substr(first + 1, second - first - 1)));
    if (!tokenizer)
        return;
    const std::string_view text = input.substr(second + 1);
    std::vector<std::uint32_t> ids;
    (*tokenizer)->encode(text, ids);
    for (const std::uint32_t id : ids)
        if (id >= (*tokenizer)->info().vocabSize)
            std::abort();
    if (isValidUtf8(text)) {
        auto decoded = (*tokenizer)->decode(ids);
        if (!decoded || *decoded != text)
            std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0)
        return 0;
    const std::span<const std::uint8_t> rest(data + 1, size - 1);
    const std::string_view text(reinterpret_cast<const char*>(rest.data()), rest.size());
    switch (static_cast<fuzz::FormatReader>(data[0] % fuzz::kReaders)) {
    case fuzz::FormatReader::Safetensors: readSafetensors(rest); break;
    case fuzz::FormatReader::Gpt2Config:
        if (auto config = trainer::parseGpt2Config(text); config && !config->validate())
            std::abort();  // a config the importer takes is one the model can be built for
        break;
    case fuzz::FormatReader::BaseModelImport: importBaseModel(rest); break;
    case fuzz::FormatReader::LineageStatement:
        if (auto lineage = trainer::parseLineageStatement(text)) {
            // What it read, written again, reads the same.
            auto again = trainer::parseLineageStatement(trainer::lineageStatement(*lineage));
            if (!again || again->subject != lineage->subject || again->parent != lineage->parent
                || again->base != lineage->base || again->step != lineage->step)
                std::abort();
        }
        break;
    case fuzz::FormatReader::Checkpoint: readCheckpoint(rest); break;
    case fuzz::FormatReader::BpeTokenizer: tokenize(text); break;
    case fuzz::FormatReader::TrainingConfig:
        if (auto config = trainer::TrainingConfig::fromJson(text)) {
            auto again = trainer::TrainingConfig::fromJson(config->toJson());
            if (!again || !again->firstDifference(*config).empty())
                std::abort();
        }
        break;
    }
    return 0;
}
