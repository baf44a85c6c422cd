// What fuzz_dataset_records and make_fuzz_seeds agree on: the first byte of an input picks the
// dataset input format (its value modulo kRecordFormats, in InputFormat's order), the rest is the
// uploaded file; JSONL and CSV records are read from the field kRecordField.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sealtrain::fuzz {

inline constexpr std::uint8_t kRecordFormats = 5;
inline constexpr const char* kRecordField = "text";
// Small, so that short inputs reach the oversized-record paths (a CSV row's bound is four times
// it and 4 KiB).
inline constexpr std::size_t kMaxRecordBytes = 64;

}  // namespace sealtrain::fuzz
