// The fuzz targets' seed corpora (fuzz_seeds.h).
#include "fuzz_seeds.h"

#include "fuzz_dataset_records.h"
#include "fuzz_keys.h"
#include "fuzz_trainer_formats.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/chunked.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/dataset/import.h"
#include "sealtrain/dataset/tokenizer.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/hf_gpt2.h"
#include "sealtrain/formats/safetensors.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace sealtrain::fuzz {
namespace {

using namespace sealtrain::crypto;

void save(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes)
{
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
}

// `bytes` behind the byte that picks `reader`.
void saveFor(const std::filesystem::path& path, sealtrain::fuzz::FormatReader reader,
             std::span<const std::uint8_t> bytes)
{
    std::vector<std::uint8_t> input(bytes.size() + 1);
    input[0] = static_cast<std::uint8_t>(reader);
    std::copy(bytes.begin(), bytes.end(), input.begin() + 1);
    save(path, input);
}

void saveFor(const std::filesystem::path& path, sealtrain::fuzz::FormatReader reader,
             std::string_view text)
{
    saveFor(path, reader,
            std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

}  // namespace

bool writeFormatSeeds(const std::filesystem::path& folder)
{
    std::filesystem::create_directories(folder);
    using namespace sealtrain;
    using fuzz::FormatReader;
    trainer::TrainingConfig config;
    config.model = fuzz::importShape();
    config.batch = 2;
    config.schedule.totalSteps = 10;
    const std::size_t count = trainer::ParameterLayout(config.model).totalSize();
    std::vector<float> parameters(count);
    for (std::size_t i = 0; i < count; ++i)
        parameters[i] = static_cast<float>(i % 17) / 17.0F - 0.5F;
    // wte's padding rows are not exported: zero, as a checkpoint keeps them.
    std::fill(parameters.begin()
                  + static_cast<std::ptrdiff_t>(config.model.vocabSize * config.model.width),
              parameters.begin()
                  + static_cast<std::ptrdiff_t>(config.model.paddedVocabSize * config.model.width),
              0.0F);
    auto safetensors =
        trainer::encodeSafetensors(trainer::gptExportEntries(config.model, parameters));
    if (!safetensors)
        return false;
    saveFor(folder / "safetensors", FormatReader::Safetensors, *safetensors);
    saveFor(folder / "import", FormatReader::BaseModelImport, *safetensors);
    saveFor(folder / "config-tiny", FormatReader::Gpt2Config,
            trainer::gpt2ConfigJson(config.model, {0, 0}));
    saveFor(folder / "config-small", FormatReader::Gpt2Config,
            trainer::gpt2ConfigJson(trainer::GptConfig::gpt2Small(), {50256, 50256}));
    saveFor(folder / "training-config", FormatReader::TrainingConfig, config.toJson());

    trainer::CheckpointState state;
    state.config = config;
    state.step = 3;
    state.optimizerStep = 3;
    state.runId = "fuzz-run";
    state.jobId = "7";
    state.datasetId = "sha256:" + std::string(64, 'd');
    state.tokenizer = "byte";
    const std::vector<float> moments(count, 0.25F);
    auto checkpoint = trainer::encodeCheckpoint(state, {parameters, moments, moments});
    if (!checkpoint)
        return false;
    saveFor(folder / "checkpoint", FormatReader::Checkpoint, *checkpoint);

    trainer::CheckpointLineage lineage;
    lineage.subject = {"checkpoint-00000003.safetensors", toHex(crypto::sha256(*checkpoint))};
    lineage.job = "7";
    lineage.run = "fuzz-run";
    lineage.step = 3;
    lineage.configSha256 = toHex(crypto::sha256(asBytes(config.toJson())));
    lineage.dataset = state.datasetId;
    lineage.parent =
        trainer::CheckpointReference{"checkpoint-00000002.safetensors", std::string(64, 'a')};
    lineage.base = trainer::CheckpointReference{"gpt2@1", std::string(64, 'b')};
    saveFor(folder / "lineage", FormatReader::LineageStatement, trainer::lineageStatement(lineage));

    // The byte tokenizer as GPT-2 files, with merges added for "he", "ll" and "hell".
    std::string vocab = dataset::byteTokenizerGpt2Vocab();
    vocab.erase(vocab.rfind('}'));  // the closing brace and the line's end
    vocab += R"(,"he":256,"ll":257,"hell":258,"<|endoftext|>":259})";
    const std::string merges = "#version: 0.2\nh e\nl l\nhe ll\n";
    std::string tokenizer = vocab;
    tokenizer.push_back('\0');
    tokenizer += merges;
    tokenizer.push_back('\0');
    tokenizer += "hello, hell! \xE2\x82\xAC 12 's\n";
    saveFor(folder / "tokenizer", FormatReader::BpeTokenizer, tokenizer);
    return true;
}

bool writeCipherSeeds(const std::filesystem::path& sealedDir,
                      const std::filesystem::path& chunkedDir)
{
    std::filesystem::create_directories(sealedDir);
    std::filesystem::create_directories(chunkedDir);
    const Kek kek = fuzzKek();
    const std::uint8_t context[] = {'f', 'u', 'z', 'z'};
    const GcmNonce baseNonce{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    for (const std::size_t size : {0UL, 1UL, 100UL, 16383UL, 16384UL, 16385UL, 40000UL}) {
        std::vector<std::uint8_t> message(size);
        for (std::size_t i = 0; i < size; ++i)
            message[i] = static_cast<std::uint8_t>(i * 31);
        const std::string name = "size-" + std::to_string(size);

        sealtrain::MemorySink sealed;
        auto writer = SealedWriter::create(sealed, kek, {"application/octet-stream", "{}"});
        if (!writer || !writer->write(message) || !writer->finish())
            return false;
        save(sealedDir / name, sealed.bytes());

        sealtrain::MemorySink chunked;
        auto keyed = ChunkedWriter::create(kek.key, context, chunked);
        if (!keyed || !keyed->write(message) || !keyed->finish())
            return false;
        save(chunkedDir / name, chunked.bytes());

        sealtrain::MemorySink raw;
        auto rawWriter = ChunkedWriter::createRaw(kek.key, baseNonce, raw);
        if (!rawWriter || !rawWriter->write(message) || !rawWriter->finish())
            return false;
        save(chunkedDir / (name + "-raw"), raw.bytes());
    }
    return true;
}

bool writeStructuredTextSeeds(const std::filesystem::path& folder)
{
    std::filesystem::create_directories(folder);
    const std::pair<const char*, std::string_view> specs[] = {
        {"spec.yaml",
         "spec_version: 1\nname: notes-small\nproject: demo\ndataset: notes\n"
         "model: {layers: 4, heads: 4, width: 128, context: 128, init: gpt2@production}\n"
         "optimizer: {lr: 0.0006, min_lr: 0.00006, warmup: 10}\n"
         "schedule:\n  steps: 800\n  batch: 8\n  seed: 1337\n"
         "resources: {pool: cpu, device: cpu, threads: 2}\n"
         "limits: {max_restarts: 2, gpu_hours: 0.5}\n"
         "# a comment\nnotes: \"quoted: text\"\nlist:\n  - 1\n  - two\n  - null\n"},
        {"spec.json",
         R"({"spec_version": 1, "name": "notes-small", "project": "demo", "dataset": "notes",)"
         R"( "model": {"layers": 4, "heads": 4, "width": 128, "context": 128},)"
         R"( "schedule": {"steps": 800, "batch": 8}, "resources": {"pool": "gpu",)"
         R"( "device": "cuda", "gpus_per_node": 8, "nodes": 2}, "flags": [true, false, null,)"
         R"( 1.5e-3, "a\"b\u00e9"]})"},
    };
    for (const auto& [name, text] : specs)
        save(folder / name, std::vector<std::uint8_t>(text.begin(), text.end()));
    return true;
}

bool writeDatasetRecordSeeds(const std::filesystem::path& folder)
{
    std::filesystem::create_directories(folder);
    using dataset::InputFormat;
    // Each format's file with records that hold every kind of PII the screen finds, an
    // oversized record, a blank-line or separator edge and, where the format has them, quotes,
    // escapes and line breaks inside a record.
    const std::string pii = "mail jane.doe@example.com, call +44 20 7946 0958 or (555) 867-5309, "
                            "ssn 123-45-6789, card 4111 1111 1111 1111, at 10.1.2.3 and fe80::1";
    const std::string longText(kMaxRecordBytes + 8, 'x');
    const std::pair<InputFormat, std::string> files[] = {
        {InputFormat::TextFiles, pii + "\n"},
        {InputFormat::TextRecords,
         "first\nstill first\n\n\n" + pii + "\n \t\n" + longText + "\n\nlast\r\n"},
        {InputFormat::Jsonl,
         "{\"text\": \"one\", \"n\": 1}\n\n{\"text\": \"two\\nlines \\u00e9\"}\n"
         "not json\n{\"other\": 1}\n{\"text\": \""
             + longText + "\"}\n{\"text\": \"" + pii.substr(0, 60) + "\"}\n"},
        {InputFormat::Csv, "id,text\r\n1,plain\r\n2,\"quoted, with \"\"quotes\"\"\nand a line\"\r\n"
                           "3,\""
                               + pii.substr(60, 60) + "\"\n4,too,many\n5," + longText + "\n"},
        {InputFormat::Fortune, "%\nFirst fortune.\n%\nSecond,\n\n  with a blank line.\n%\n%\n\n%\n"
                                   + pii.substr(0, 50) + "\n%\n"},
    };
    for (const auto& [format, text] : files) {
        std::vector<std::uint8_t> input(text.size() + 1);
        input[0] = static_cast<std::uint8_t>(format);
        std::copy(text.begin(), text.end(), input.begin() + 1);
        save(folder / dataset::inputFormatName(format), input);
    }
    return true;
}

}  // namespace sealtrain::fuzz
