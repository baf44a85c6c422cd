// Base models to fine-tune from (base_model.h; docs/formats/hf-gpt2.md, "Base models").
#include "sealtrain/formats/base_model.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/safetensors.h"
#include "sealtrain/formats/safetensors_reader.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sealtrain::trainer {
namespace {

// The token id a config names under `key`, or GPT-2's 50256 when it names none (transformers'
// default).
std::int64_t specialToken(const nlohmann::json& config, const char* key)
{
    const auto found = config.find(key);
    if (found == config.end() || !found->is_number_integer())
        return 50256;
    return found->get<std::int64_t>();
}

// The rows of `name` (with or without GPT2LMHeadModel's "transformer." prefix), or 0.
std::size_t rowsOf(const SafetensorsFile& file, const std::string& name)
{
    for (const std::string& candidate : {name, "transformer." + name}) {
        const auto found = file.tensors.find(candidate);
        if (found != file.tensors.end() && found->second.shape.size() == 2)
            return found->second.shape[0];
    }
    return 0;
}

}  // namespace

Result<PreparedBaseModel> prepareBaseModel(std::string_view configJson,
                                           std::span<const std::uint8_t> safetensors)
{
    auto config = parseGpt2Config(configJson);
    if (!config)
        return config.error();
    auto file = decodeSafetensors(safetensors);
    if (!file)
        return file.error().withContext("The folder's model.safetensors can not be read");
    auto parameters = importGpt2Parameters(*config, *file);
    if (!parameters)
        return parameters.error();
    const auto parsed = nlohmann::json::parse(configJson, nullptr, /*allow_exceptions=*/false);
    PreparedBaseModel prepared;
    prepared.config = *config;
    prepared.tokens = {specialToken(parsed, "bos_token_id"), specialToken(parsed, "eos_token_id")};
    auto encoded = encodeSafetensors(gptExportEntries(*config, *parameters), {{"format", "pt"}});
    if (!encoded)
        return encoded.error();
    prepared.safetensors = std::move(encoded).value();
    prepared.configJson = gpt2ConfigJson(prepared.config, prepared.tokens);
    return prepared;
}

Result<std::vector<float>> loadInitialParameters(const std::filesystem::path& path,
                                                 const crypto::DataKeyResolver& dataKeys,
                                                 const crypto::KekResolver& keks,
                                                 const std::string& expectedSha256,
                                                 const GptConfig& config)
{
    const std::string label = path.filename().string();
    auto source = FileSource::open(path);
    if (!source)
        return source.error();
    auto info = crypto::inspectSealedObject(**source);
    if (!info)
        return info.error().withContext("The model to start from, '" + label + "',");
    // The control plane hands over the one object's data key; a KEK opens it otherwise (a test,
    // or the control plane's own trainer).
    auto reader = dataKeys(info->objectId).ok() ? crypto::SealedReader::open(**source, dataKeys)
                                                : crypto::SealedReader::open(**source, keks);
    if (!reader)
        return reader.error().withContext("The model to start from, '" + label + "',");
    const std::string& type = reader->metadata().contentType;
    if (type != kBaseModelContentType && type != kCheckpointContentType)
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The sealed file '{}' is neither a base model nor a checkpoint "
                                 "(content type '{}'); start from a model version.",
                                 label, type));
    MemorySink plaintext;
    SEALTRAIN_TRY(reader->readAll(plaintext));
    if (toHex(crypto::sha256(plaintext.bytes())) != expectedSha256)
        return Error(ErrorCode::Unauthenticated,
                     fmt::format("The model to start from, '{}', is not the one the control plane "
                                 "authorised (SHA-256 {} expected); do not train from it.",
                                 label, expectedSha256));
    auto file = decodeSafetensors(plaintext.bytes());
    if (!file)
        return file.error().withContext("The model to start from, '" + label + "',");
    // The shape is checked with sentences first; the importer then checks every tensor.
    const std::size_t vocab = rowsOf(*file, "wte.weight");
    if (vocab != config.vocabSize)
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The model to start from has a vocabulary of {} tokens but the "
                                 "dataset's tokenizer has {}; import the dataset with the model's "
                                 "tokenizer.",
                                 vocab, config.vocabSize));
    const std::size_t positions = rowsOf(*file, "wpe.weight");
    if (positions != config.contextLength)
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The model to start from has a context of {} positions but the "
                                 "run has {}; set the context to the model's.",
                                 positions, config.contextLength));
    return importGpt2Parameters(config, *file);
}

}  // namespace sealtrain::trainer
