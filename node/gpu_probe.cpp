// dlopen-based probing of the CUDA driver, runtime, cuBLAS and NCCL. Only stable, unversioned
// entry points are used so that any release of these libraries answers.
#include "sealtrain/node/gpu_probe.h"

#include <dlfcn.h>

#include <array>
#include <cstdlib>
#include <fmt/format.h>

namespace sealtrain::node {
namespace {

struct Library {
    void* handle = nullptr;
    std::string path;
    std::string lastError;

    Library() = default;
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;
    ~Library()
    {
        if (handle != nullptr)
            dlclose(handle);
    }

    template <typename Fn>
    Fn symbol(const char* name) const
    {
        // POSIX guarantees object-to-function pointer conversion for dlsym results.
        return handle == nullptr ? nullptr : reinterpret_cast<Fn>(dlsym(handle, name));
    }
};

std::vector<std::string> searchDirectories()
{
    std::vector<std::string> dirs{""};  // the loader's own search path first
    for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
        if (const char* value = std::getenv(variable); value != nullptr && *value != '\0')
            dirs.push_back(std::string(value) + "/lib64/");
    }
    dirs.emplace_back("/usr/local/cuda/lib64/");
    return dirs;
}

// RTLD_NODELETE keeps a probed library mapped after dlclose: the CUDA libraries allocate
// process-lifetime buffers at load time, which would otherwise dangle (and read as leaks).
void open(Library& library, std::initializer_list<const char*> sonames)
{
    for (const auto& dir : searchDirectories()) {
        for (const char* soname : sonames) {
            const std::string candidate = dir + soname;
            if (void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)) {
                library.handle = handle;
                library.path = candidate;
                return;
            }
            if (library.lastError.empty())
                library.lastError = fmt::format("{} not found", soname);
        }
    }
}

LibraryProbe describe(const Library& library)
{
    LibraryProbe probe;
    probe.found = library.handle != nullptr;
    probe.detail = probe.found ? library.path : library.lastError;
    return probe;
}

void probeDriver(GpuProbe& result)
{
    Library cuda;
    open(cuda, {"libcuda.so.1", "libcuda.so"});
    result.driver = describe(cuda);
    if (cuda.handle == nullptr) {
        result.deviceError = "the NVIDIA driver (libcuda.so.1) is not installed";
        return;
    }
    using InitFn = int (*)(unsigned int);
    using IntOutFn = int (*)(int*);
    using DeviceGetFn = int (*)(int*, int);
    using NameFn = int (*)(char*, int, int);
    using TotalMemFn = int (*)(std::size_t*, int);
    using AttributeFn = int (*)(int*, int, int);
    const auto cuInit = cuda.symbol<InitFn>("cuInit");
    const auto cuDriverGetVersion = cuda.symbol<IntOutFn>("cuDriverGetVersion");
    const auto cuDeviceGetCount = cuda.symbol<IntOutFn>("cuDeviceGetCount");
    const auto cuDeviceGet = cuda.symbol<DeviceGetFn>("cuDeviceGet");
    const auto cuDeviceGetName = cuda.symbol<NameFn>("cuDeviceGetName");
    const auto cuDeviceTotalMem = cuda.symbol<TotalMemFn>("cuDeviceTotalMem_v2");
    const auto cuDeviceGetAttribute = cuda.symbol<AttributeFn>("cuDeviceGetAttribute");
    if (!cuInit || !cuDriverGetVersion || !cuDeviceGetCount || !cuDeviceGet || !cuDeviceGetName
        || !cuDeviceTotalMem || !cuDeviceGetAttribute) {
        result.deviceError = "the NVIDIA driver library lacks expected entry points";
        return;
    }
    int driverVersion = 0;
    if (cuDriverGetVersion(&driverVersion) == 0)
        result.driver.version = cudaVersionText(driverVersion);
    if (const int status = cuInit(0); status != 0) {
        result.deviceError =
            fmt::format("the NVIDIA driver did not initialise (CUresult {})", status);
        return;
    }
    int count = 0;
    if (cuDeviceGetCount(&count) != 0 || count == 0) {
        result.deviceError = "the NVIDIA driver sees no GPU";
        return;
    }
    constexpr int kComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    constexpr int kComputeCapabilityMinor = 76;
    for (int i = 0; i < count; ++i) {
        int device = 0;
        if (cuDeviceGet(&device, i) != 0)
            continue;
        GpuDevice info;
        info.index = i;
        std::array<char, 256> name{};
        if (cuDeviceGetName(name.data(), static_cast<int>(name.size()), device) == 0)
            info.name = name.data();
        std::size_t bytes = 0;
        if (cuDeviceTotalMem(&bytes, device) == 0)
            info.totalMemoryBytes = bytes;
        cuDeviceGetAttribute(&info.computeMajor, kComputeCapabilityMajor, device);
        cuDeviceGetAttribute(&info.computeMinor, kComputeCapabilityMinor, device);
        result.devices.push_back(std::move(info));
    }
}

void probeRuntime(GpuProbe& result)
{
    Library cudart;
    open(cudart, {"libcudart.so.13", "libcudart.so.12", "libcudart.so"});
    result.runtime = describe(cudart);
    using IntOutFn = int (*)(int*);
    if (const auto getVersion = cudart.symbol<IntOutFn>("cudaRuntimeGetVersion")) {
        int version = 0;
        if (getVersion(&version) == 0)
            result.runtime.version = cudaVersionText(version);
    }
}

void probeCublas(GpuProbe& result)
{
    Library cublas;
    open(cublas, {"libcublas.so.13", "libcublas.so.12", "libcublas.so"});
    result.cublas = describe(cublas);
    using PropertyFn = int (*)(int, int*);  // libraryPropertyType: 0 major, 1 minor, 2 patch
    if (const auto getProperty = cublas.symbol<PropertyFn>("cublasGetProperty")) {
        std::array<int, 3> parts{};
        bool ok = true;
        for (int i = 0; i < 3; ++i)
            ok = ok && getProperty(i, &parts[static_cast<std::size_t>(i)]) == 0;
        if (ok)
            result.cublas.version = fmt::format("{}.{}.{}", parts[0], parts[1], parts[2]);
    }
}

void probeNccl(GpuProbe& result)
{
    Library nccl;
    open(nccl, {"libnccl.so.2", "libnccl.so"});
    result.nccl = describe(nccl);
    using IntOutFn = int (*)(int*);
    if (const auto getVersion = nccl.symbol<IntOutFn>("ncclGetVersion")) {
        int version = 0;
        if (getVersion(&version) == 0)
            result.nccl.version = ncclVersionText(version);
    }
}

}  // namespace

std::string cudaVersionText(int encoded)
{
    return fmt::format("{}.{}", encoded / 1000, (encoded % 1000) / 10);
}

std::string ncclVersionText(int encoded)
{
    if (encoded >= 20900)
        return fmt::format("{}.{}.{}", encoded / 10000, (encoded % 10000) / 100, encoded % 100);
    return fmt::format("{}.{}.{}", encoded / 1000, (encoded % 1000) / 100, encoded % 100);
}

GpuProbe probeGpu()
{
    GpuProbe result;
    probeDriver(result);
    probeRuntime(result);
    probeCublas(result);
    probeNccl(result);
    return result;
}

}  // namespace sealtrain::node
