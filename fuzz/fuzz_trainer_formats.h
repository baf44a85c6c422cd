// What fuzz_trainer_formats and make_fuzz_seeds agree on: the first byte of an input chooses the
// reader (its value modulo kReaders), the rest is that reader's input; the fixed shape of the
// base model the import reader checks a safetensors file against.
#pragma once

#include "sealtrain/formats/gpt_config.h"

#include <cstdint>

namespace sealtrain::fuzz {

enum class FormatReader : std::uint8_t {
    Safetensors = 0,       // decodeSafetensors, then every tensor read as F32
    Gpt2Config = 1,        // parseGpt2Config: an imported folder's config.json
    BaseModelImport = 2,   // prepareBaseModel: kImportShape's config.json and the fuzzed file
    LineageStatement = 3,  // parseLineageStatement: a worker's signed checkpoint statement
    Checkpoint = 4,        // decodeCheckpoint: a checkpoint's plaintext
    TrainingConfig = 5,    // TrainingConfig::fromJson: a checkpoint's recorded configuration
    BpeTokenizer = 6,      // Gpt2BpeTokenizer::fromText: vocab.json NUL merges.txt NUL a text
};
inline constexpr std::uint8_t kReaders = 7;

// A GPT-2 small enough for the fuzzer to import many times a second.
inline trainer::GptConfig importShape()
{
    trainer::GptConfig config;
    config.vocabSize = 20;
    config.paddedVocabSize = trainer::GptConfig::padVocab(config.vocabSize);
    config.contextLength = 8;
    config.layers = 1;
    config.heads = 2;
    config.width = 8;
    return config;
}

}  // namespace sealtrain::fuzz
