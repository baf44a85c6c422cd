// What NVIDIA software and GPUs this machine has, found at run time with dlopen, so that the
// same binary runs (and `doctor` reports) on machines with and without the CUDA stack.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::node {

struct GpuDevice {
    int index = 0;
    std::string name;
    int computeMajor = 0;
    int computeMinor = 0;
    std::uint64_t totalMemoryBytes = 0;
};

struct LibraryProbe {
    bool found = false;
    std::string version;  // "13.0" etc. when found
    std::string detail;   // the path loaded, or why it was not found
};

struct GpuProbe {
    LibraryProbe driver;   // libcuda.so.1: the driver API
    LibraryProbe runtime;  // libcudart
    LibraryProbe cublas;
    LibraryProbe nccl;
    std::vector<GpuDevice> devices;
    std::string deviceError;  // why no device was listed, when none was
};

[[nodiscard]] GpuProbe probeGpu();

// "major.minor" from CUDA's integer encoding (1000*major + 10*minor).
[[nodiscard]] std::string cudaVersionText(int encoded);
// "major.minor.patch" from NCCL's encoding (10000*major + 100*minor + patch since 2.9).
[[nodiscard]] std::string ncclVersionText(int encoded);

}  // namespace sealtrain::node
