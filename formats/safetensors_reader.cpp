// Safetensors decoding (safetensors_reader.h).
#include "sealtrain/formats/safetensors_reader.h"

#include "sealtrain/formats/safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <utility>

namespace sealtrain::trainer {

static_assert(std::endian::native == std::endian::little,
              "safetensors stores little-endian values; this reader copies memory as it is");

namespace {

// Headers beyond this are not something we wrote (ours are a few kilobytes per layer).
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

Error malformed(const std::string& what)
{
    return Error(ErrorCode::Integrity, "The safetensors data is malformed (" + what
                                           + "); restore the file from a trusted copy.");
}

Result<SafetensorsTensor> parseTensor(const std::string& name, const nlohmann::json& entry,
                                      std::span<const std::uint8_t> data)
{
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape")
        || !entry.contains("data_offsets") || !entry["dtype"].is_string()
        || !entry["shape"].is_array() || !entry["data_offsets"].is_array()
        || entry["data_offsets"].size() != 2)
        return malformed("tensor '" + name + "' lacks dtype, shape or data_offsets");
    SafetensorsTensor tensor;
    tensor.dtype = entry["dtype"].get<std::string>();
    const std::size_t elementSize = safetensorsDtypeSize(tensor.dtype);
    if (elementSize == 0)
        return malformed("tensor '" + name + "' has an unsupported dtype");
    std::uint64_t elements = 1;
    for (const auto& dimension : entry["shape"]) {
        if (!dimension.is_number_unsigned())
            return malformed("tensor '" + name + "' has a shape that is not a list of sizes");
        const auto size = dimension.get<std::uint64_t>();
        if (size != 0 && elements > std::numeric_limits<std::uint32_t>::max() / size)
            return malformed("tensor '" + name + "' is too large");
        elements *= size;
        tensor.shape.push_back(static_cast<std::size_t>(size));
    }
    const auto& offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
        return malformed("tensor '" + name + "' has offsets that are not sizes");
    const auto begin = offsets[0].get<std::uint64_t>();
    const auto end = offsets[1].get<std::uint64_t>();
    if (begin > end || end > data.size())
        return malformed("tensor '" + name + "' lies outside the data");
    if (end - begin != elements * elementSize)
        return malformed("tensor '" + name + "' has a size that disagrees with its shape");
    tensor.data =
        data.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
    return tensor;
}

}  // namespace

Result<SafetensorsFile> decodeSafetensors(std::span<const std::uint8_t> bytes)
{
    if (bytes.size() < 8)
        return malformed("shorter than its 8-byte header length");
    std::uint64_t headerLength = 0;
    std::memcpy(&headerLength, bytes.data(), sizeof headerLength);
    if (headerLength > kMaxHeaderBytes || headerLength > bytes.size() - 8)
        return malformed("the header length runs past the end");
    const auto headerBytes = bytes.subspan(8, static_cast<std::size_t>(headerLength));
    const auto data = bytes.subspan(8 + static_cast<std::size_t>(headerLength));
    const auto header = nlohmann::json::parse(headerBytes.begin(), headerBytes.end(), nullptr,
                                              /*allow_exceptions=*/false);
    if (!header.is_object())
        return malformed("the header is not a JSON object");

    SafetensorsFile file;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    for (const auto& [name, entry] : header.items()) {
        if (name == "__metadata__") {
            if (!entry.is_object())
                return malformed("__metadata__ is not an object");
            for (const auto& [key, value] : entry.items()) {
                if (!value.is_string())
                    return malformed("metadata '" + key + "' is not a string");
                file.metadata.emplace(key, value.get<std::string>());
            }
            continue;
        }
        auto tensor = parseTensor(name, entry, data);
        if (!tensor)
            return tensor.error();
        const auto begin = static_cast<std::uint64_t>(tensor->data.data() - data.data());
        ranges.emplace_back(begin, begin + tensor->data.size());
        file.tensors.emplace(name, std::move(tensor).value());
    }
    std::sort(ranges.begin(), ranges.end());
    for (std::size_t i = 1; i < ranges.size(); ++i) {
        if (ranges[i].first < ranges[i - 1].second)
            return malformed("two tensors overlap");
    }
    return file;
}

Result<void> checkF32Tensor(const SafetensorsFile& file, const std::string& name,
                            const std::vector<std::size_t>& shape)
{
    const auto found = file.tensors.find(name);
    if (found == file.tensors.end())
        return Error(ErrorCode::Integrity, "The checkpoint has no tensor '" + name
                                               + "'; it was written for another model.");
    const SafetensorsTensor& tensor = found->second;
    if (tensor.dtype != "F32" || tensor.shape != shape)
        return Error(ErrorCode::Integrity, "The checkpoint's tensor '" + name
                                               + "' does not have the model's dtype and shape; "
                                                 "it was written for another model.");
    return success();
}

Result<void> readF32Tensor(const SafetensorsFile& file, const std::string& name,
                           const std::vector<std::size_t>& shape, std::span<float> out)
{
    SEALTRAIN_TRY(checkF32Tensor(file, name, shape));
    const SafetensorsTensor& tensor = file.tensors.at(name);
    if (tensor.data.size() != out.size() * sizeof(float))
        return Error(ErrorCode::Integrity, "The checkpoint's tensor '" + name
                                               + "' does not have the model's dtype and shape; "
                                                 "it was written for another model.");
    std::memcpy(out.data(), tensor.data.data(), tensor.data.size());
    return success();
}

}  // namespace sealtrain::trainer
