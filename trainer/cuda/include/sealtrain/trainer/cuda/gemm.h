// Matrix products for the CUDA backend: cuBLASLt for the model's GEMMs (with its bias, GELU and
// GELU-backward epilogues) and cuBLAS strided-batched GEMMs for attention's per-head products.
// The calls themselves are described by gemm_call.h (which builds the model's); here they run.
// Inputs in the activation type (fp32 or bf16), accumulation and scaling in fp32, never TF32.
#pragma once

#include "sealtrain/trainer/cuda/gemm_call.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

namespace sealtrain::trainer::cuda {

// A failed cuBLAS or cuBLASLt call, with the file and line of the call (SEALTRAIN_CUBLAS_CHECK).
class CublasError final : public std::runtime_error {
public:
    CublasError(cublasStatus_t status, const char* expression, const char* file, int line);
};
void throwOnCublasError(cublasStatus_t status, const char* expression, const char* file, int line);

enum class ElementType { Float32, BFloat16 };

class Gemm final {
public:
    // Handles and a workspace on the current device, for products of `type`.
    explicit Gemm(ElementType type);
    Gemm(const Gemm&) = delete;
    Gemm& operator=(const Gemm&) = delete;
    Gemm(Gemm&&) = delete;
    Gemm& operator=(Gemm&&) = delete;
    ~Gemm();

    void run(const GemmCall& call, cudaStream_t stream);
    void runBatched(const BatchedGemmCall& call, cudaStream_t stream);
    // Whether cuBLASLt has an algorithm for the call's shape, type and epilogue (pointers are
    // not looked at); run() throws where this says no.
    [[nodiscard]] bool supports(const GemmCall& call);

private:
    // The algorithm for the call, chosen once per shape; null when cuBLASLt has none.
    const cublasLtMatmulAlgo_t* algorithm(const GemmCall& call, cublasLtMatmulDesc_t desc,
                                          cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                          cublasLtMatrixLayout_t d);

    // The heuristic's first algorithm for a shape, fixed on first use so that every later product
    // of that shape runs the same algorithm (bit-identical results run to run).
    using ShapeKey = std::tuple<bool, bool, std::size_t, std::size_t, std::size_t, std::size_t,
                                std::size_t, std::size_t, int, bool>;
    std::map<ShapeKey, cublasLtMatmulAlgo_t> algorithms_;
    ElementType type_;
    cublasLtHandle_t lt_ = nullptr;
    cublasHandle_t blas_ = nullptr;
    void* workspace_ = nullptr;
    std::size_t workspaceBytes_ = 0;
};

}  // namespace sealtrain::trainer::cuda

#define SEALTRAIN_CUBLAS_CHECK(expr)                                                               \
    ::sealtrain::trainer::cuda::throwOnCublasError((expr), #expr, __FILE__, __LINE__)
