// Writing tensors in the safetensors format (Hugging Face): an 8-byte little-endian header
// length, a JSON header {"name": {"dtype", "shape", "data_offsets": [begin, end]}, …,
// "__metadata__": {string: string}} padded with spaces to a multiple of 8 bytes, then the
// tensors' little-endian bytes back to back in the header's order.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/formats/gpt_config.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::trainer {

struct SafetensorsEntry {
    std::string name;                // letters, digits, '.', '_' and '-'
    std::string dtype;               // "F32", "F64" or "I32"
    std::vector<std::size_t> shape;  // row-major
    std::span<const std::byte> data;
};

// The bytes of one element of `dtype` ("F32", "F64" or "I32"); 0 for any other dtype.
[[nodiscard]] std::size_t safetensorsDtypeSize(std::string_view dtype);

// The file's bytes, or an error naming the entry whose name, dtype or size is wrong.
[[nodiscard]] Result<std::vector<std::uint8_t>>
encodeSafetensors(std::span<const SafetensorsEntry> entries,
                  const std::map<std::string, std::string>& metadata = {});

// The model's parameters under GPT2Model's names and shapes (ParameterLayout), with wte cut to
// vocabSize rows: what Hugging Face's GPT2Model.load_state_dict takes (after transposing
// nothing: Conv1D stores (in, out) as we do), for a span in the model's layout (its parameters,
// gradients or AdamW's moments); the entries point into `flat`.
[[nodiscard]] std::vector<SafetensorsEntry> gptExportEntries(const GptConfig& config,
                                                             std::span<const float> flat);

}  // namespace sealtrain::trainer
