// What a worker reports about its node in each heartbeat and at enrolment
// (docs/formats/worker-inventory.md): the worker writes it, the control plane parses it strictly
// and keeps it for scheduling.
#pragma once

#include "sealtrain/base/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::node {

// What a worker reports about its node (docs/formats/worker-inventory.md): JSON
//   {"gpus": [{"model": "NVIDIA H200", "memory_bytes": 150000000000}], "cpu_cores": 16,
//    "interconnect_encrypted": false, "backend": "cuda"}
// parsed strictly (at most 64 GPUs; names at most 128 bytes).
struct GpuInfo {
    std::string model;
    std::uint64_t memoryBytes = 0;
};
struct WorkerInventory {
    std::vector<GpuInfo> gpus;
    std::uint32_t cpuCores = 0;
    bool interconnectEncrypted = false;
    std::string backend = "cpu";  // "cpu" or "cuda": what its trainer runs on
};
[[nodiscard]] Result<WorkerInventory> parseWorkerInventory(std::string_view json);
[[nodiscard]] std::string workerInventoryJson(const WorkerInventory& inventory);

}  // namespace sealtrain::node
