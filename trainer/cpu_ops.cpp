// The GPT's operations on the CPU (cpu_ops.h): GEMMs through BLAS, the rest in plain loops that
// the compiler vectorises, with OpenMP only over work whose outputs are disjoint (deterministic
// for any thread count).
#include "sealtrain/trainer/cpu_ops.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace sealtrain::trainer::cpu {

namespace {

// Below this many multiply-adds a parallel region costs more than it saves (and on a loaded
// machine far more: idle threads spin); the tests' tiny models then run serially.
bool parallelWorthIt(std::size_t work)
{
    return work >= (std::size_t{1} << 16U);
}

int blasInt(std::size_t value)
{
    return static_cast<int>(value);  // GptConfig::validate() bounds every dimension
}

// C(m,n) = alpha · op(A)(m,k) · op(B)(k,n) + beta · C, all row-major.
void gemm(bool transA, bool transB, std::size_t m, std::size_t n, std::size_t k, float alpha,
          const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
          std::size_t ldc)
{
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, blasInt(m), blasInt(n), blasInt(k), alpha, a,
                blasInt(lda), b, blasInt(ldb), beta, c, blasInt(ldc));
}

void gemm(bool transA, bool transB, std::size_t m, std::size_t n, std::size_t k, double alpha,
          const double* a, std::size_t lda, const double* b, std::size_t ldb, double beta,
          double* c, std::size_t ldc)
{
    cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, blasInt(m), blasInt(n), blasInt(k), alpha, a,
                blasInt(lda), b, blasInt(ldb), beta, c, blasInt(ldc));
}

}  // namespace

template <typename Real>
void encoderForward(Real* out, const std::int32_t* tokens, const Real* wte, const Real* wpe,
                    std::size_t batch, std::size_t seq, std::size_t width)
{
#pragma omp parallel for collapse(2) if (parallelWorthIt(batch * seq * width))
    for (std::size_t b = 0; b < batch; ++b) {
        for (std::size_t t = 0; t < seq; ++t) {
            Real* row = out + (b * seq + t) * width;
            const Real* tokenRow = wte + static_cast<std::size_t>(tokens[b * seq + t]) * width;
            const Real* positionRow = wpe + t * width;
            for (std::size_t i = 0; i < width; ++i)
                row[i] = tokenRow[i] + positionRow[i];
        }
    }
}

template <typename Real>
void encoderBackward(Real* dwte, Real* dwpe, const Real* dout, const std::int32_t* tokens,
                     std::size_t batch, std::size_t seq, std::size_t width)
{
    // Serial: several positions may share a token, and their sum must have one order.
    for (std::size_t b = 0; b < batch; ++b) {
        for (std::size_t t = 0; t < seq; ++t) {
            const Real* grad = dout + (b * seq + t) * width;
            Real* tokenGrad = dwte + static_cast<std::size_t>(tokens[b * seq + t]) * width;
            Real* positionGrad = dwpe + t * width;
            for (std::size_t i = 0; i < width; ++i) {
                tokenGrad[i] += grad[i];
                positionGrad[i] += grad[i];
            }
        }
    }
}

template <typename Real>
void layerNormForward(Real* out, Real* mean, Real* rstd, const Real* in, const Real* weight,
                      const Real* bias, std::size_t rows, std::size_t width)
{
    const auto n = static_cast<Real>(width);
#pragma omp parallel for if (parallelWorthIt(rows * width))
    for (std::size_t r = 0; r < rows; ++r) {
        const Real* x = in + r * width;
        Real sum = 0;
        for (std::size_t i = 0; i < width; ++i)
            sum += x[i];
        const Real m = sum / n;
        Real squares = 0;
        for (std::size_t i = 0; i < width; ++i)
            squares += (x[i] - m) * (x[i] - m);
        const Real s = Real(1) / std::sqrt(squares / n + static_cast<Real>(kLayerNormEpsilon));
        Real* y = out + r * width;
        for (std::size_t i = 0; i < width; ++i)
            y[i] = (x[i] - m) * s * weight[i] + bias[i];
        mean[r] = m;
        rstd[r] = s;
    }
}

template <typename Real>
void layerNormBackward(Real* din, Real* dweight, Real* dbias, const Real* dout, const Real* in,
                       const Real* weight, const Real* mean, const Real* rstd, std::size_t rows,
                       std::size_t width)
{
    const auto n = static_cast<Real>(width);
    // dx = rstd · (dnorm − mean(dnorm) − norm · mean(dnorm · norm)), dnorm = dout · weight.
#pragma omp parallel for if (parallelWorthIt(rows * width))
    for (std::size_t r = 0; r < rows; ++r) {
        const Real* x = in + r * width;
        const Real* dy = dout + r * width;
        Real meanDnorm = 0;
        Real meanDnormNorm = 0;
        for (std::size_t i = 0; i < width; ++i) {
            const Real norm = (x[i] - mean[r]) * rstd[r];
            const Real dnorm = dy[i] * weight[i];
            meanDnorm += dnorm;
            meanDnormNorm += dnorm * norm;
        }
        meanDnorm /= n;
        meanDnormNorm /= n;
        Real* dx = din + r * width;
        for (std::size_t i = 0; i < width; ++i) {
            const Real norm = (x[i] - mean[r]) * rstd[r];
            const Real dnorm = dy[i] * weight[i];
            dx[i] += rstd[r] * (dnorm - meanDnorm - norm * meanDnormNorm);
        }
    }
    // Parameter gradients sum over rows: rows outside, channels inside, one order.
    for (std::size_t r = 0; r < rows; ++r) {
        const Real* x = in + r * width;
        const Real* dy = dout + r * width;
        for (std::size_t i = 0; i < width; ++i) {
            dbias[i] += dy[i];
            dweight[i] += dy[i] * (x[i] - mean[r]) * rstd[r];
        }
    }
}

template <typename Real>
void matmulForward(Real* out, const Real* in, const Real* weight, const Real* bias,
                   const MatmulShape& shape)
{
    gemm(false, false, shape.rows, shape.outWidth, shape.inWidth, Real(1), in, shape.inWidth,
         weight, shape.outWidth, Real(0), out, shape.outWidth);
    if (bias == nullptr)
        return;
#pragma omp parallel for if (parallelWorthIt(shape.rows * shape.outWidth))
    for (std::size_t r = 0; r < shape.rows; ++r) {
        Real* row = out + r * shape.outWidth;
        for (std::size_t o = 0; o < shape.outWidth; ++o)
            row[o] += bias[o];
    }
}

template <typename Real>
void matmulBackward(Real* din, Real* dweight, Real* dbias, const Real* dout, const Real* in,
                    const Real* weight, const MatmulShape& shape)
{
    // din(rows, in) += dout(rows, out) · weight(in, out)ᵀ
    gemm(false, true, shape.rows, shape.inWidth, shape.outWidth, Real(1), dout, shape.outWidth,
         weight, shape.outWidth, Real(1), din, shape.inWidth);
    // dweight(in, out) += in(rows, in)ᵀ · dout(rows, out)
    gemm(true, false, shape.inWidth, shape.outWidth, shape.rows, Real(1), in, shape.inWidth, dout,
         shape.outWidth, Real(1), dweight, shape.outWidth);
    if (dbias == nullptr)
        return;
    for (std::size_t r = 0; r < shape.rows; ++r) {
        const Real* row = dout + r * shape.outWidth;
        for (std::size_t o = 0; o < shape.outWidth; ++o)
            dbias[o] += row[o];
    }
}

template <typename Real>
void lmHeadForward(Real* logits, const Real* in, const Real* wte, const LmHeadShape& shape)
{
    gemm(false, true, shape.rows, shape.paddedVocab, shape.width, Real(1), in, shape.width, wte,
         shape.width, Real(0), logits, shape.paddedVocab);
}

template <typename Real>
void lmHeadBackward(Real* din, Real* dwte, const Real* dlogits, const Real* in, const Real* wte,
                    const LmHeadShape& shape)
{
    // din(rows, width) += dlogits(rows, vocab) · wte(vocab, width)
    gemm(false, false, shape.rows, shape.width, shape.paddedVocab, Real(1), dlogits,
         shape.paddedVocab, wte, shape.width, Real(1), din, shape.width);
    // dwte(vocab, width) += dlogits(rows, vocab)ᵀ · in(rows, width)
    gemm(true, false, shape.paddedVocab, shape.width, shape.rows, Real(1), dlogits,
         shape.paddedVocab, in, shape.width, Real(1), dwte, shape.width);
}

template <typename Real>
void attentionForward(Real* out, Real* att, const Real* qkv, const AttentionShape& shape)
{
    const std::size_t seq = shape.seq;
    const std::size_t width = shape.width;
    const std::size_t headSize = width / shape.heads;
    const Real scale = Real(1) / std::sqrt(static_cast<Real>(headSize));
    const bool parallel = parallelWorthIt(shape.batch * shape.heads * seq * seq * headSize);
#pragma omp parallel for collapse(3) if (parallel)
    for (std::size_t b = 0; b < shape.batch; ++b) {
        for (std::size_t h = 0; h < shape.heads; ++h) {
            for (std::size_t t = 0; t < seq; ++t) {
                const Real* q = qkv + (b * seq + t) * 3 * width + h * headSize;
                Real* attRow = att + ((b * shape.heads + h) * seq + t) * seq;
                Real maxScore = -std::numeric_limits<Real>::infinity();
                for (std::size_t j = 0; j <= t; ++j) {
                    const Real* k = qkv + (b * seq + j) * 3 * width + width + h * headSize;
                    Real dot = 0;
                    for (std::size_t i = 0; i < headSize; ++i)
                        dot += q[i] * k[i];
                    attRow[j] = dot * scale;
                    maxScore = std::max(maxScore, attRow[j]);
                }
                Real sum = 0;
                for (std::size_t j = 0; j <= t; ++j) {
                    attRow[j] = std::exp(attRow[j] - maxScore);
                    sum += attRow[j];
                }
                for (std::size_t j = 0; j <= t; ++j)
                    attRow[j] /= sum;
                for (std::size_t j = t + 1; j < seq; ++j)
                    attRow[j] = 0;

                Real* y = out + (b * seq + t) * width + h * headSize;
                std::fill(y, y + headSize, Real(0));
                for (std::size_t j = 0; j <= t; ++j) {
                    const Real* v = qkv + (b * seq + j) * 3 * width + 2 * width + h * headSize;
                    for (std::size_t i = 0; i < headSize; ++i)
                        y[i] += attRow[j] * v[i];
                }
            }
        }
    }
}

template <typename Real>
void attentionBackward(Real* dqkv, const Real* dout, const Real* qkv, const Real* att,
                       const AttentionShape& shape)
{
    const std::size_t seq = shape.seq;
    const std::size_t width = shape.width;
    const std::size_t headSize = width / shape.heads;
    const Real scale = Real(1) / std::sqrt(static_cast<Real>(headSize));
    // One (batch, head) per thread: its gradients touch only that head's channels of that
    // sequence, and within it positions are visited in one order.
    const bool parallel = parallelWorthIt(shape.batch * shape.heads * seq * seq * headSize);
#pragma omp parallel for collapse(2) if (parallel)
    for (std::size_t b = 0; b < shape.batch; ++b) {
        for (std::size_t h = 0; h < shape.heads; ++h) {
            std::vector<Real> dscores(seq);
            for (std::size_t t = 0; t < seq; ++t) {
                const Real* attRow = att + ((b * shape.heads + h) * seq + t) * seq;
                const Real* dy = dout + (b * seq + t) * width + h * headSize;
                const std::size_t rowQ = (b * seq + t) * 3 * width + h * headSize;
                // Through y_t = Σ_j att_tj · v_j.
                Real weighted = 0;
                for (std::size_t j = 0; j <= t; ++j) {
                    const std::size_t rowV = (b * seq + j) * 3 * width + 2 * width + h * headSize;
                    Real datt = 0;
                    for (std::size_t i = 0; i < headSize; ++i) {
                        datt += dy[i] * qkv[rowV + i];
                        dqkv[rowV + i] += attRow[j] * dy[i];
                    }
                    dscores[j] = datt;
                    weighted += attRow[j] * datt;
                }
                // Through the softmax, then the scaled dot products q_t · k_j.
                for (std::size_t j = 0; j <= t; ++j) {
                    const Real dscore = attRow[j] * (dscores[j] - weighted) * scale;
                    const std::size_t rowK = (b * seq + j) * 3 * width + width + h * headSize;
                    for (std::size_t i = 0; i < headSize; ++i) {
                        dqkv[rowQ + i] += dscore * qkv[rowK + i];
                        dqkv[rowK + i] += dscore * qkv[rowQ + i];
                    }
                }
            }
        }
    }
}

namespace {

template <typename Real>
constexpr Real kGeluScale = static_cast<Real>(0.7978845608028654);  // sqrt(2/π)
template <typename Real>
constexpr Real kGeluCubic = static_cast<Real>(0.044715);

}  // namespace

template <typename Real>
void geluForward(Real* out, const Real* in, std::size_t count)
{
#pragma omp parallel for if (parallelWorthIt(count))
    for (std::size_t i = 0; i < count; ++i) {
        const Real x = in[i];
        const Real u = kGeluScale<Real> * (x + kGeluCubic<Real> * x * x * x);
        out[i] = Real(0.5) * x * (Real(1) + std::tanh(u));
    }
}

template <typename Real>
void geluBackward(Real* din, const Real* dout, const Real* in, std::size_t count)
{
#pragma omp parallel for if (parallelWorthIt(count))
    for (std::size_t i = 0; i < count; ++i) {
        const Real x = in[i];
        const Real u = kGeluScale<Real> * (x + kGeluCubic<Real> * x * x * x);
        const Real tanhU = std::tanh(u);
        const Real du = kGeluScale<Real> * (Real(1) + Real(3) * kGeluCubic<Real> * x * x);
        const Real grad =
            Real(0.5) * (Real(1) + tanhU) + Real(0.5) * x * (Real(1) - tanhU * tanhU) * du;
        din[i] += grad * dout[i];
    }
}

template <typename Real>
void residualForward(Real* out, const Real* a, const Real* b, std::size_t count)
{
#pragma omp parallel for if (parallelWorthIt(count))
    for (std::size_t i = 0; i < count; ++i)
        out[i] = a[i] + b[i];
}

template <typename Real>
void residualBackward(Real* da, Real* db, const Real* dout, std::size_t count)
{
#pragma omp parallel for if (parallelWorthIt(count))
    for (std::size_t i = 0; i < count; ++i) {
        da[i] += dout[i];
        db[i] += dout[i];
    }
}

template <typename Real>
std::size_t crossEntropyForward(Real* losses, Real* probs, const Real* logits,
                                const std::int32_t* targets, const CrossEntropyShape& shape)
{
#pragma omp parallel for if (parallelWorthIt(shape.rows * shape.vocab))
    for (std::size_t r = 0; r < shape.rows; ++r) {
        const Real* z = logits + r * shape.paddedVocab;
        Real* p = probs + r * shape.paddedVocab;
        Real maxLogit = -std::numeric_limits<Real>::infinity();
        for (std::size_t i = 0; i < shape.vocab; ++i)
            maxLogit = std::max(maxLogit, z[i]);
        Real sum = 0;
        for (std::size_t i = 0; i < shape.vocab; ++i) {
            p[i] = std::exp(z[i] - maxLogit);
            sum += p[i];
        }
        for (std::size_t i = 0; i < shape.vocab; ++i)
            p[i] /= sum;
        for (std::size_t i = shape.vocab; i < shape.paddedVocab; ++i)
            p[i] = 0;
        const std::int32_t target = targets[r];
        // −log softmax(z)_y = log Σ exp(z − max) + max − z_y, accurate even when p_y underflows.
        losses[r] =
            target < 0 ? Real(0) : std::log(sum) + maxLogit - z[static_cast<std::size_t>(target)];
    }
    return static_cast<std::size_t>(
        std::count_if(targets, targets + shape.rows, [](std::int32_t t) { return t >= 0; }));
}

template <typename Real>
void crossEntropyBackward(Real* dlogits, const Real* dlosses, const Real* probs,
                          const std::int32_t* targets, const CrossEntropyShape& shape)
{
#pragma omp parallel for if (parallelWorthIt(shape.rows * shape.vocab))
    for (std::size_t r = 0; r < shape.rows; ++r) {
        const std::int32_t target = targets[r];
        if (target < 0)
            continue;
        const Real* p = probs + r * shape.paddedVocab;
        Real* dz = dlogits + r * shape.paddedVocab;
        for (std::size_t i = 0; i < shape.vocab; ++i)
            dz[i] += dlosses[r] * p[i];
        dz[static_cast<std::size_t>(target)] -= dlosses[r];
    }
}

// Real is a type here, which cannot be parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define SEALTRAIN_INSTANTIATE_CPU_OPS(Real)                                                        \
    template void encoderForward<Real>(Real*, const std::int32_t*, const Real*, const Real*,       \
                                       std::size_t, std::size_t, std::size_t);                     \
    template void encoderBackward<Real>(Real*, Real*, const Real*, const std::int32_t*,            \
                                        std::size_t, std::size_t, std::size_t);                    \
    template void layerNormForward<Real>(Real*, Real*, Real*, const Real*, const Real*,            \
                                         const Real*, std::size_t, std::size_t);                   \
    template void layerNormBackward<Real>(Real*, Real*, Real*, const Real*, const Real*,           \
                                          const Real*, const Real*, const Real*, std::size_t,      \
                                          std::size_t);                                            \
    template void matmulForward<Real>(Real*, const Real*, const Real*, const Real*,                \
                                      const MatmulShape&);                                         \
    template void matmulBackward<Real>(Real*, Real*, Real*, const Real*, const Real*, const Real*, \
                                       const MatmulShape&);                                        \
    template void lmHeadForward<Real>(Real*, const Real*, const Real*, const LmHeadShape&);        \
    template void lmHeadBackward<Real>(Real*, Real*, const Real*, const Real*, const Real*,        \
                                       const LmHeadShape&);                                        \
    template void attentionForward<Real>(Real*, Real*, const Real*, const AttentionShape&);        \
    template void attentionBackward<Real>(Real*, const Real*, const Real*, const Real*,            \
                                          const AttentionShape&);                                  \
    template void geluForward<Real>(Real*, const Real*, std::size_t);                              \
    template void geluBackward<Real>(Real*, const Real*, const Real*, std::size_t);                \
    template void residualForward<Real>(Real*, const Real*, const Real*, std::size_t);             \
    template void residualBackward<Real>(Real*, Real*, const Real*, std::size_t);                  \
    template std::size_t crossEntropyForward<Real>(Real*, Real*, const Real*, const std::int32_t*, \
                                                   const CrossEntropyShape&);                      \
    template void crossEntropyBackward<Real>(Real*, const Real*, const Real*, const std::int32_t*, \
                                             const CrossEntropyShape&);

// NOLINTEND(bugprone-macro-parentheses)

SEALTRAIN_INSTANTIATE_CPU_OPS(float)
SEALTRAIN_INSTANTIATE_CPU_OPS(double)

}  // namespace sealtrain::trainer::cpu
