// Reading safetensors files (the format safetensors.h writes): the header is parsed and checked
// (every tensor inside the data, no overlaps, sizes that match shapes) before any tensor is
// handed out. Used to load checkpoints; the reader keeps views into the caller's bytes.
#pragma once

#include "sealtrain/base/result.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace sealtrain::trainer {

struct SafetensorsTensor {
    std::string dtype;  // "F32", "F64" or "I32"
    std::vector<std::size_t> shape;
    std::span<const std::uint8_t> data;  // into the bytes given to decodeSafetensors
};

struct SafetensorsFile {
    std::map<std::string, SafetensorsTensor> tensors;
    std::map<std::string, std::string> metadata;
};

// Parses `bytes` (which must outlive the result). Integrity, naming what is wrong, for a header
// that is not the format: a bad length, JSON that is not an object of tensors, a dtype other
// than F32/F64/I32, offsets outside the data or overlapping, or a size that disagrees with the
// shape.
[[nodiscard]] Result<SafetensorsFile> decodeSafetensors(std::span<const std::uint8_t> bytes);

// Integrity when `file` has no F32 tensor `name` of exactly `shape`. A reader checks every tensor
// it needs this way before it allocates for them: what it then allocates is bounded by the bytes
// the file holds, never by a size the file only claims.
[[nodiscard]] Result<void> checkF32Tensor(const SafetensorsFile& file, const std::string& name,
                                          const std::vector<std::size_t>& shape);

// Copies an F32 tensor of exactly `shape` into `out` (out.size() elements). Integrity when the
// tensor is missing or has another dtype or shape.
[[nodiscard]] Result<void> readF32Tensor(const SafetensorsFile& file, const std::string& name,
                                         const std::vector<std::size_t>& shape,
                                         std::span<float> out);

}  // namespace sealtrain::trainer
