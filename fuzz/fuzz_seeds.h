// The fuzz targets' seed corpora, made by make_fuzz_seeds for scripts/fuzz and by
// test_fuzz_replay, which replays them (and damaged copies of them) through the targets in the
// ordinary test run.
#pragma once

#include <filesystem>

namespace sealtrain::fuzz {

// Valid sealed objects under the fuzz KEK and valid chunked ciphertexts under the fuzz key
// (context "fuzz", and raw mode), at the sizes around the chunk boundaries; false when one
// could not be made.
[[nodiscard]] bool writeCipherSeeds(const std::filesystem::path& sealedDir,
                                    const std::filesystem::path& chunkedDir);

// One valid file for each reader of fuzz_trainer_formats, behind the byte that picks it.
[[nodiscard]] bool writeFormatSeeds(const std::filesystem::path& folder);

// Job specs as a submitter writes them, in YAML and in JSON (fuzz_structured_text).
[[nodiscard]] bool writeStructuredTextSeeds(const std::filesystem::path& folder);

// One upload in each dataset input format, behind the byte that picks it (fuzz_dataset_records).
[[nodiscard]] bool writeDatasetRecordSeeds(const std::filesystem::path& folder);

}  // namespace sealtrain::fuzz
