// Safetensors encoding (safetensors.h).
#include "sealtrain/formats/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace sealtrain::trainer {

static_assert(std::endian::native == std::endian::little,
              "safetensors stores little-endian values; this writer copies memory as it is");

namespace {

bool isPlainName(const std::string& name)
{
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')
               || ch == '.' || ch == '_' || ch == '-';
    });
}

std::string jsonString(const std::string& text)
{
    std::string out = "\"";
    for (const char ch : text) {
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += ch;
        } else if (static_cast<unsigned char>(ch) < 0x20) {
            static constexpr char hex[] = "0123456789abcdef";
            out += "\\u00";
            out += hex[static_cast<unsigned char>(ch) >> 4U];
            out += hex[static_cast<unsigned char>(ch) & 0xFU];
        } else {
            out += ch;
        }
    }
    return out + "\"";
}

}  // namespace

std::size_t safetensorsDtypeSize(std::string_view dtype)
{
    if (dtype == "F32" || dtype == "I32")
        return 4;
    if (dtype == "F64")
        return 8;
    return 0;
}

Result<std::vector<std::uint8_t>>
encodeSafetensors(std::span<const SafetensorsEntry> entries,
                  const std::map<std::string, std::string>& metadata)
{
    std::string header = "{";
    std::size_t offset = 0;
    for (const auto& entry : entries) {
        if (!isPlainName(entry.name) || entry.name == "__metadata__")
            return Error(ErrorCode::InvalidArgument,
                         "The tensor name '" + entry.name
                             + "' is not plain (letters, digits, '.', '_', '-'); rename it.");
        const std::size_t elementSize = safetensorsDtypeSize(entry.dtype);
        if (elementSize == 0)
            return Error(ErrorCode::Unsupported, "The tensor '" + entry.name
                                                     + "' has a dtype other than F32, F64 or "
                                                       "I32; convert it first.");
        std::size_t elements = 1;
        std::string shape = "[";
        for (std::size_t i = 0; i < entry.shape.size(); ++i) {
            elements *= entry.shape[i];
            shape += (i == 0 ? "" : ",") + std::to_string(entry.shape[i]);
        }
        shape += "]";
        if (elements * elementSize != entry.data.size())
            return Error(ErrorCode::InvalidArgument,
                         "The tensor '" + entry.name
                             + "' holds a different number of bytes than its shape says; fix "
                               "its shape.");
        if (header.size() > 1)
            header += ",";
        header += jsonString(entry.name) + ":{\"dtype\":\"" + entry.dtype + "\",\"shape\":" + shape
                  + ",\"data_offsets\":[" + std::to_string(offset) + ","
                  + std::to_string(offset + entry.data.size()) + "]}";
        offset += entry.data.size();
    }
    if (!metadata.empty()) {
        header += std::string(header.size() > 1 ? "," : "") + "\"__metadata__\":{";
        bool first = true;
        for (const auto& [key, value] : metadata) {
            header += (first ? "" : ",") + jsonString(key) + ":" + jsonString(value);
            first = false;
        }
        header += "}";
    }
    header += "}";
    header.append((8 - header.size() % 8) % 8, ' ');

    std::vector<std::uint8_t> bytes(8 + header.size() + offset);
    std::uint64_t headerSize = header.size();
    for (std::size_t i = 0; i < 8; ++i) {
        bytes[i] = static_cast<std::uint8_t>(headerSize & 0xFFU);
        headerSize >>= 8U;
    }
    std::memcpy(bytes.data() + 8, header.data(), header.size());
    std::size_t at = 8 + header.size();
    for (const auto& entry : entries) {
        if (!entry.data.empty())
            std::memcpy(bytes.data() + at, entry.data.data(), entry.data.size());
        at += entry.data.size();
    }
    return bytes;
}

std::vector<SafetensorsEntry> gptExportEntries(const GptConfig& config, std::span<const float> flat)
{
    const ParameterLayout layout(config);
    std::vector<SafetensorsEntry> entries;
    for (const auto& tensor : layout.tensors()) {
        SafetensorsEntry entry;
        entry.name = tensor.name;
        entry.dtype = "F32";
        entry.shape = tensor.shape;
        std::size_t size = tensor.size;
        if (tensor.offset == 0) {  // wte.weight: drop the padding rows
            entry.shape[0] = config.vocabSize;
            size = config.vocabSize * config.width;
        }
        entry.data = std::as_bytes(flat.subspan(tensor.offset, size));
        entries.push_back(std::move(entry));
    }
    return entries;
}

}  // namespace sealtrain::trainer
