// Plain-loop sgemm and dgemm with CBLAS's meaning (C = alpha·op(A)·op(B) + beta·C; beta = 0
// does not read C), for the stand-alone GPU build on machines without a CBLAS (cblas/cblas.h).
#include <cblas.h>

#include <cstddef>

namespace {

template <typename Real>
void gemm(CBLAS_ORDER order, CBLAS_TRANSPOSE transA, CBLAS_TRANSPOSE transB, int m, int n, int k,
          Real alpha, const Real* a, int lda, const Real* b, int ldb, Real beta, Real* c, int ldc)
{
    // Column-major is the row-major product of the transposes with the roles of A and B swapped.
    if (order == CblasColMajor) {
        gemm(CblasRowMajor, transB, transA, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
        return;
    }
    const auto at = [&](int i, int l) {
        return transA == CblasNoTrans ? a[static_cast<std::ptrdiff_t>(i) * lda + l]
                                      : a[static_cast<std::ptrdiff_t>(l) * lda + i];
    };
    const auto bt = [&](int l, int j) {
        return transB == CblasNoTrans ? b[static_cast<std::ptrdiff_t>(l) * ldb + j]
                                      : b[static_cast<std::ptrdiff_t>(j) * ldb + l];
    };
#pragma omp parallel for
    for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
            Real sum = 0;
            for (int l = 0; l < k; ++l)
                sum += at(i, l) * bt(l, j);
            Real& out = c[static_cast<std::ptrdiff_t>(i) * ldc + j];
            out = beta == Real(0) ? alpha * sum : alpha * sum + beta * out;
        }
    }
}

}  // namespace

extern "C" void cblas_sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE transA, CBLAS_TRANSPOSE transB,
                            int m, int n, int k, float alpha, const float* a, int lda,
                            const float* b, int ldb, float beta, float* c, int ldc)
{
    gemm(order, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

extern "C" void cblas_dgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE transA, CBLAS_TRANSPOSE transB,
                            int m, int n, int k, double alpha, const double* a, int lda,
                            const double* b, int ldb, double beta, double* c, int ldc)
{
    gemm(order, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

extern "C" void openblas_set_num_threads(int /*threads*/)
{
}
