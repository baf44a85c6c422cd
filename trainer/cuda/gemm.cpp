// cuBLASLt and cuBLAS products for the CUDA backend (gemm.h).
#include "sealtrain/trainer/cuda/gemm.h"

#include "sealtrain/trainer/cuda/cuda_check.h"

#include <memory>

namespace sealtrain::trainer::cuda {
namespace {

constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20U;  // cuBLASLt's advice for Hopper
constexpr std::uint32_t kMinimumAlignmentBytes = 16;

int toInt(std::size_t value)
{
    return static_cast<int>(value);
}

std::int64_t toInt64(std::size_t value)
{
    return static_cast<std::int64_t>(value);
}

cudaDataType_t dataType(ElementType type)
{
    return type == ElementType::Float32 ? CUDA_R_32F : CUDA_R_16BF;
}

cublasOperation_t operation(bool transpose)
{
    return transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
}

cublasLtEpilogue_t ltEpilogue(GemmEpilogue epilogue)
{
    switch (epilogue) {
    case GemmEpilogue::Bias: return CUBLASLT_EPILOGUE_BIAS;
    case GemmEpilogue::GeluBias: return CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    case GemmEpilogue::GeluBackward: return CUBLASLT_EPILOGUE_DGELU;
    case GemmEpilogue::None: break;
    }
    return CUBLASLT_EPILOGUE_DEFAULT;
}

struct DescDeleter {
    void operator()(cublasLtMatmulDescOpaque_t* desc) const { cublasLtMatmulDescDestroy(desc); }
};
struct LayoutDeleter {
    void operator()(cublasLtMatrixLayoutOpaque_t* layout) const
    {
        cublasLtMatrixLayoutDestroy(layout);
    }
};
struct PreferenceDeleter {
    void operator()(cublasLtMatmulPreferenceOpaque_t* preference) const
    {
        cublasLtMatmulPreferenceDestroy(preference);
    }
};
using DescHandle = std::unique_ptr<cublasLtMatmulDescOpaque_t, DescDeleter>;
using LayoutHandle = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, LayoutDeleter>;
using PreferenceHandle = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, PreferenceDeleter>;

LayoutHandle matrixLayout(cudaDataType_t type, std::size_t rows, std::size_t cols,
                          std::size_t leading)
{
    cublasLtMatrixLayout_t layout = nullptr;
    SEALTRAIN_CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&layout, type, static_cast<std::uint64_t>(rows),
                                   static_cast<std::uint64_t>(cols), toInt64(leading)));
    return LayoutHandle(layout);
}

template <typename Value>
void setAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                  const Value& value)
{
    SEALTRAIN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)));
}

}  // namespace

CublasError::CublasError(cublasStatus_t status, const char* expression, const char* file, int line)
    : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expression
                         + " failed: " + cublasGetStatusName(status) + " ("
                         + cublasGetStatusString(status) + ")")
{
}

void throwOnCublasError(cublasStatus_t status, const char* expression, const char* file, int line)
{
    if (status != CUBLAS_STATUS_SUCCESS)
        throw CublasError(status, expression, file, line);
}

Gemm::Gemm(ElementType type)
    : type_(type)
    , workspaceBytes_(kWorkspaceBytes)
{
    try {
        SEALTRAIN_CUBLAS_CHECK(cublasLtCreate(&lt_));
        SEALTRAIN_CUBLAS_CHECK(cublasCreate(&blas_));
        SEALTRAIN_CUDA_CHECK(cudaMalloc(&workspace_, workspaceBytes_));
    } catch (...) {
        if (workspace_ != nullptr)
            cudaFree(workspace_);
        if (blas_ != nullptr)
            cublasDestroy(blas_);
        if (lt_ != nullptr)
            cublasLtDestroy(lt_);
        throw;
    }
}

Gemm::~Gemm()
{
    // Destructors must not throw; a failure here has nothing left to report to.
    cudaFree(workspace_);
    cublasDestroy(blas_);
    cublasLtDestroy(lt_);
}

namespace {

// A call's descriptor and matrix layouts, as cuBLASLt's heuristic and matmul take them.
struct Described {
    DescHandle desc;
    LayoutHandle a;
    LayoutHandle b;
    LayoutHandle d;
};

Described describe(const GemmCall& call, cudaDataType_t type)
{
    cublasLtMatmulDesc_t rawDesc = nullptr;
    SEALTRAIN_CUBLAS_CHECK(cublasLtMatmulDescCreate(&rawDesc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    Described described{DescHandle(rawDesc), nullptr, nullptr, nullptr};
    setAttribute(rawDesc, CUBLASLT_MATMUL_DESC_TRANSA, operation(call.transposeA));
    setAttribute(rawDesc, CUBLASLT_MATMUL_DESC_TRANSB, operation(call.transposeB));
    setAttribute(rawDesc, CUBLASLT_MATMUL_DESC_EPILOGUE, ltEpilogue(call.epilogue));
    if (call.epilogue == GemmEpilogue::Bias || call.epilogue == GemmEpilogue::GeluBias)
        setAttribute(rawDesc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, call.bias);
    if (call.epilogue == GemmEpilogue::GeluBias || call.epilogue == GemmEpilogue::GeluBackward) {
        setAttribute(rawDesc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, call.aux);
        setAttribute(rawDesc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, toInt64(call.ldd));
    }
    described.a = call.transposeA ? matrixLayout(type, call.k, call.m, call.lda)
                                  : matrixLayout(type, call.m, call.k, call.lda);
    described.b = call.transposeB ? matrixLayout(type, call.n, call.k, call.ldb)
                                  : matrixLayout(type, call.k, call.n, call.ldb);
    described.d = matrixLayout(type, call.m, call.n, call.ldd);
    return described;
}

}  // namespace

const cublasLtMatmulAlgo_t* Gemm::algorithm(const GemmCall& call, cublasLtMatmulDesc_t desc,
                                            cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                            cublasLtMatrixLayout_t d)
{
    const ShapeKey key{call.transposeA,  call.transposeB, call.m,
                       call.n,           call.k,          call.lda,
                       call.ldb,         call.ldd,        static_cast<int>(call.epilogue),
                       call.beta != 0.0F};
    if (const auto found = algorithms_.find(key); found != algorithms_.end())
        return &found->second;
    cublasLtMatmulPreference_t rawPreference = nullptr;
    SEALTRAIN_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&rawPreference));
    const PreferenceHandle preference(rawPreference);
    const std::uint64_t bytes = workspaceBytes_;
    SEALTRAIN_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        rawPreference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes, sizeof(bytes)));
    // Tensors inside the flat parameter buffer are only 16-byte aligned (CudaGpt requires a
    // width that is a multiple of 8); the default assumes 256.
    const std::uint32_t alignment = kMinimumAlignmentBytes;
    for (const auto attribute :
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
          CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
        SEALTRAIN_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(rawPreference, attribute,
                                                                    &alignment, sizeof(alignment)));
    cublasLtMatmulHeuristicResult_t heuristic{};
    int returned = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
        lt_, desc, a, b, d, d, rawPreference, 1, &heuristic, &returned);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED)
        return nullptr;
    throwOnCublasError(status, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
    if (returned == 0)
        return nullptr;
    return &algorithms_.emplace(key, heuristic.algo).first->second;
}

bool Gemm::supports(const GemmCall& call)
{
    const Described described = describe(call, dataType(type_));
    return algorithm(call, described.desc.get(), described.a.get(), described.b.get(),
                     described.d.get())
           != nullptr;
}

void Gemm::run(const GemmCall& call, cudaStream_t stream)
{
    const Described described = describe(call, dataType(type_));
    const cublasLtMatmulAlgo_t* chosen = algorithm(call, described.desc.get(), described.a.get(),
                                                   described.b.get(), described.d.get());
    if (chosen == nullptr)
        throwOnCublasError(CUBLAS_STATUS_NOT_SUPPORTED,
                           "cublasLtMatmulAlgoGetHeuristic (no algorithm for this product)",
                           __FILE__, __LINE__);
    SEALTRAIN_CUBLAS_CHECK(cublasLtMatmul(lt_, described.desc.get(), &call.alpha, call.a,
                                          described.a.get(), call.b, described.b.get(), &call.beta,
                                          call.d, described.d.get(), call.d, described.d.get(),
                                          chosen, workspace_, workspaceBytes_, stream));
}

void Gemm::runBatched(const BatchedGemmCall& call, cudaStream_t stream)
{
    const cudaDataType_t type = dataType(type_);
    SEALTRAIN_CUBLAS_CHECK(cublasSetStream(blas_, stream));
    SEALTRAIN_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        blas_, operation(call.transposeA), operation(call.transposeB), toInt(call.m), toInt(call.n),
        toInt(call.k), &call.alpha, call.a, type, toInt(call.lda), toInt64(call.strideA), call.b,
        type, toInt(call.ldb), toInt64(call.strideB), &call.beta, call.c, type, toInt(call.ldc),
        toInt64(call.strideC), toInt(call.batch), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace sealtrain::trainer::cuda
