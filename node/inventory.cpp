// A worker's inventory (inventory.h; docs/formats/worker-inventory.md): parsed strictly, written
// back in one canonical form.
#include "sealtrain/node/inventory.h"

#include "sealtrain/base/utf8.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <limits>
#include <utility>

namespace sealtrain::node {
namespace {

using Json = nlohmann::json;

constexpr std::size_t kMaxGpus = 64;
constexpr std::size_t kMaxModelName = 128;
constexpr std::size_t kMaxInventoryBytes = std::size_t{64} * 1024;

Error inventoryError(const std::string& field, const std::string& what)
{
    return Error(ErrorCode::InvalidArgument, fmt::format("The worker inventory's '{}' {}; see "
                                                         "docs/formats/worker-inventory.md.",
                                                         field, what));
}

Result<std::uint64_t> readUnsigned(const Json& value, const std::string& field)
{
    if (!value.is_number_unsigned()
        && !(value.is_number_integer() && value.get<std::int64_t>() >= 0))
        return inventoryError(field, "must be a whole number from 0");
    return value.get<std::uint64_t>();
}

// What a worker writes and people read (`worker list`): UTF-8 without control characters or
// invisible format characters, so that it can neither drive a terminal nor read as something
// else (issue #54).
// escapeControls changes exactly such text: C0 and C1 controls, DEL, bytes that are not UTF-8,
// invisible format characters.
bool isPlainText(std::string_view text)
{
    return escapeControls(text) == text;
}

Result<GpuInfo> parseGpu(const Json& item, const std::string& path)
{
    if (!item.is_object())
        return inventoryError(path, "must be an object");
    GpuInfo gpu;
    for (const auto& [key, value] : item.items()) {
        std::string field = path;
        field += ".";
        field += key;
        if (key == "model") {
            if (!value.is_string() || value.get<std::string>().size() > kMaxModelName
                || !isPlainText(value.get<std::string>()))
                return inventoryError(field, "must be a text of at most 128 bytes of UTF-8 "
                                             "without control or invisible format characters");
            gpu.model = value.get<std::string>();
        } else if (key == "memory_bytes") {
            SEALTRAIN_ASSIGN(gpu.memoryBytes, readUnsigned(value, field));
        } else {
            return inventoryError(field, "is not part of an inventory");
        }
    }
    return gpu;
}

}  // namespace

Result<WorkerInventory> parseWorkerInventory(std::string_view json)
{
    if (json.size() > kMaxInventoryBytes)
        return inventoryError("(whole)", "is larger than 64 KiB");
    const auto parsed = Json::parse(json, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object())
        return inventoryError("(whole)", "is not a JSON object");
    WorkerInventory inventory;
    for (const auto& [key, value] : parsed.items()) {
        if (key == "gpus") {
            if (!value.is_array() || value.size() > kMaxGpus)
                return inventoryError(key, "must be a list of at most 64 GPUs");
            for (std::size_t i = 0; i < value.size(); ++i) {
                auto gpu = parseGpu(value[i], fmt::format("gpus[{}]", i));
                if (!gpu)
                    return gpu.error();
                inventory.gpus.push_back(std::move(*gpu));
            }
        } else if (key == "cpu_cores") {
            std::uint64_t cores = 0;
            SEALTRAIN_ASSIGN(cores, readUnsigned(value, key));
            if (cores > std::numeric_limits<std::uint32_t>::max())
                return inventoryError(key, "is too large");
            inventory.cpuCores = static_cast<std::uint32_t>(cores);
        } else if (key == "interconnect_encrypted") {
            if (!value.is_boolean())
                return inventoryError(key, "must be true or false");
            inventory.interconnectEncrypted = value.get<bool>();
        } else if (key == "backend") {
            if (!value.is_string() || (value != "cpu" && value != "cuda"))
                return inventoryError(key, "must be \"cpu\" or \"cuda\"");
            inventory.backend = value.get<std::string>();
        } else {
            return inventoryError(key, "is not part of an inventory");
        }
    }
    return inventory;
}

std::string workerInventoryJson(const WorkerInventory& inventory)
{
    Json gpus = Json::array();
    for (const GpuInfo& gpu : inventory.gpus)
        gpus.push_back({{"model", gpu.model}, {"memory_bytes", gpu.memoryBytes}});
    const Json json = {{"gpus", gpus},
                       {"cpu_cores", inventory.cpuCores},
                       {"interconnect_encrypted", inventory.interconnectEncrypted},
                       {"backend", inventory.backend}};
    return json.dump();
}

}  // namespace sealtrain::node
