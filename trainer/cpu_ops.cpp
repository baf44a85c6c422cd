// The GPT's operations on the CPU (cpu_ops.h): GEMMs through BLAS, the rest in plain loops that
// the compiler vectorises, with OpenMP only over work whose outputs are disjoint (deterministic
// for any thread count).
#include "sealtrain/trainer/cpu_ops.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

// The element loops are compiled for the x86-64 baseline (SSE2, 4 floats at a time) and, as
// clones that the loader picks by CPU, for AVX2 and AVX-512 (8 and 16). The clones compute the
// same bits: element-wise IEEE operations in the same order, and no FMA contraction
// (-ffp-contract=off, trainer/CMakeLists.txt). GCC only; other compilers build the baseline.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define SEALTRAIN_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SEALTRAIN_VECTOR_CLONES
#endif

namespace sealtrain::trainer::cpu {

namespace {

// Below this many multiply-adds a parallel region costs more than it saves (and on a loaded
// machine far more: idle threads spin); the tests' tiny models then run serially.
bool parallelWorthIt(std::size_t work)
{
    return work >= (std::size_t{1} << 16U);
}

// e^a for float a <= 0 in plain arithmetic that the compiler vectorises (libm's expf is one call
// per element): a = n·ln 2 + r with |r| <= ln(2)/2 (Cody and Waite's two-part ln 2), e^r from
// Cephes' degree-6 polynomial (within 2 ulp), 2^n put straight into the exponent bits. Results
// below 2^-125 are 0: they would be near or in the subnormal range, where every operation on
// them costs a microcode assist, and beside the 1 that GELU's gate and every softmax sum add
// them to they are 0 anyway.
[[gnu::always_inline]] inline float exponentialOfNonPositive(float a)
{
    constexpr float kLog2e = 1.44269504088896341F;
    constexpr float kLn2High = 0.693359375F;
    constexpr float kLn2Low = -2.12194440e-4F;
    constexpr float kRoundingShift = 12582912.0F;  // 1.5·2^23: adding it rounds to an integer
    a = std::max(a, -100.0F);                      // keeps n far inside int's range
    const float n = (a * kLog2e + kRoundingShift) - kRoundingShift;
    const float r = (a - n * kLn2High) - n * kLn2Low;
    float p = 1.9875691500e-4F;
    p = p * r + 1.3981999507e-3F;
    p = p * r + 8.3334519073e-3F;
    p = p * r + 4.1665795894e-2F;
    p = p * r + 1.6666665459e-1F;
    p = p * r + 5.0000001201e-1F;
    const float er = p * r * r + r + 1.0F;
    const auto exponent = static_cast<std::int32_t>(n);
    const std::uint32_t bits =
        exponent >= -125 ? static_cast<std::uint32_t>(exponent + 127) << 23U : 0U;
    return er * std::bit_cast<float>(bits);
}
[[gnu::always_inline]] inline double exponentialOfNonPositive(double a)
{
    return std::exp(a);  // the double model checks gradients: accuracy matters there, not speed
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

std::size_t threadCount()
{
    return static_cast<std::size_t>(omp_get_max_threads());
}

void setThreadCount(std::size_t threads)
{
    const int count = static_cast<int>(std::max<std::size_t>(threads, 1));
    omp_set_num_threads(count);
    openblas_set_num_threads(count);
}

template <typename Real>
SEALTRAIN_VECTOR_CLONES void encoderForward(Real* out, const std::int32_t* tokens, const Real* wte,
                                            const Real* wpe, std::size_t batch, std::size_t seq,
                                            std::size_t width)
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
SEALTRAIN_VECTOR_CLONES void encoderBackward(Real* dwte, Real* dwpe, const Real* dout,
                                             const std::int32_t* tokens, std::size_t batch,
                                             std::size_t seq, std::size_t width)
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
SEALTRAIN_VECTOR_CLONES void layerNormForward(Real* out, Real* mean, Real* rstd, const Real* in,
                                              const Real* weight, const Real* bias,
                                              std::size_t rows, std::size_t width)
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
SEALTRAIN_VECTOR_CLONES void layerNormBackward(Real* din, Real* dweight, Real* dbias,
                                               const Real* dout, const Real* in, const Real* weight,
                                               const Real* mean, const Real* rstd, std::size_t rows,
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
SEALTRAIN_VECTOR_CLONES void matmulForward(Real* out, const Real* in, const Real* weight,
                                           const Real* bias, const MatmulShape& shape)
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
SEALTRAIN_VECTOR_CLONES void matmulBackward(Real* din, Real* dweight, Real* dbias, const Real* dout,
                                            const Real* in, const Real* weight,
                                            const MatmulShape& shape)
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

namespace {

// Where one (sequence, head)'s q, k and v start inside qkv(batch, seq, 3·width); consecutive
// positions are 3·width apart, the leading dimension of the per-head GEMMs.
template <typename Real>
struct HeadView {
    const Real* q;
    const Real* k;
    const Real* v;
};
template <typename Real>
HeadView<Real> headView(const Real* qkv, const AttentionShape& shape, std::size_t b, std::size_t h)
{
    const std::size_t headSize = shape.width / shape.heads;
    const Real* base = qkv + b * shape.seq * 3 * shape.width + h * headSize;
    return {base, base + shape.width, base + 2 * shape.width};
}

// The per-head GEMMs go over blocks of query positions [first, end): a block only sees keys
// before `end`, so the masked upper triangle is computed only inside the diagonal blocks (about
// (1 + 1/blocks)/2 of the full seq × seq products instead of all of them).
constexpr std::size_t kQueryBlock = 64;

// Calls visit(b, h, first, end) for every (sequence, head, query block), in a fixed order.
template <typename Visit>
void forEachQueryBlock(const AttentionShape& shape, const Visit& visit)
{
    for (std::size_t b = 0; b < shape.batch; ++b) {
        for (std::size_t h = 0; h < shape.heads; ++h) {
            for (std::size_t first = 0; first < shape.seq; first += kQueryBlock)
                visit(b, h, first, std::min(first + kQueryBlock, shape.seq));
        }
    }
}

}  // namespace

template <typename Real>
SEALTRAIN_VECTOR_CLONES void attentionForward(Real* out, Real* att, const Real* qkv,
                                              const AttentionShape& shape)
{
    const std::size_t seq = shape.seq;
    const std::size_t width = shape.width;
    const std::size_t headSize = width / shape.heads;
    const std::size_t heads = shape.batch * shape.heads;
    const Real scale = Real(1) / std::sqrt(static_cast<Real>(headSize));
    // Scores: att(b,h)[t, j] = scale · q_t · k_j for j < end of t's block.
    forEachQueryBlock(shape, [&](std::size_t b, std::size_t h, std::size_t first, std::size_t end) {
        const HeadView<Real> view = headView(qkv, shape, b, h);
        Real* scores = att + ((b * shape.heads + h) * seq + first) * seq;
        gemm(false, true, end - first, end, headSize, scale, view.q + first * 3 * width, 3 * width,
             view.k, 3 * width, Real(0), scores, seq);
    });
    // Causal softmax of each row t over positions j <= t; the positions after t get 0.
#pragma omp parallel for if (parallelWorthIt(heads * seq * seq))
    for (std::size_t row = 0; row < heads * seq; ++row) {
        const std::size_t t = row % seq;
        Real* attRow = att + row * seq;
        Real maxScore = -std::numeric_limits<Real>::infinity();
        for (std::size_t j = 0; j <= t; ++j)
            maxScore = std::max(maxScore, attRow[j]);
        for (std::size_t j = 0; j <= t; ++j)
            attRow[j] = exponentialOfNonPositive(attRow[j] - maxScore);
        Real sum = 0;
        for (std::size_t j = 0; j <= t; ++j)
            sum += attRow[j];
        const Real inverse = Real(1) / sum;
        for (std::size_t j = 0; j <= t; ++j)
            attRow[j] *= inverse;
        std::fill(attRow + t + 1, attRow + seq, Real(0));
    }
    // Outputs: y_t = Σ_{j < end} att[t, j] · v_j, into the head's channels of out(batch, seq,
    // width).
    forEachQueryBlock(shape, [&](std::size_t b, std::size_t h, std::size_t first, std::size_t end) {
        const HeadView<Real> view = headView(qkv, shape, b, h);
        const Real* probabilities = att + ((b * shape.heads + h) * seq + first) * seq;
        gemm(false, false, end - first, headSize, end, Real(1), probabilities, seq, view.v,
             3 * width, Real(0), out + (b * seq + first) * width + h * headSize, width);
    });
}

template <typename Real>
SEALTRAIN_VECTOR_CLONES void attentionBackward(Real* dqkv, Real* scratch, const Real* dout,
                                               const Real* qkv, const Real* att,
                                               const AttentionShape& shape)
{
    const std::size_t seq = shape.seq;
    const std::size_t width = shape.width;
    const std::size_t headSize = width / shape.heads;
    const std::size_t heads = shape.batch * shape.heads;
    const Real scale = Real(1) / std::sqrt(static_cast<Real>(headSize));
    // Through Y = P·V, block by block: dP = dY·Vᵀ (into scratch) and dV += Pᵀ·dY.
    forEachQueryBlock(shape, [&](std::size_t b, std::size_t h, std::size_t first, std::size_t end) {
        const HeadView<Real> view = headView(qkv, shape, b, h);
        const std::size_t rows = ((b * shape.heads + h) * seq + first) * seq;
        const Real* dy = dout + (b * seq + first) * width + h * headSize;
        Real* dv = dqkv + (view.v - qkv);
        gemm(false, true, end - first, end, headSize, Real(1), dy, width, view.v, 3 * width,
             Real(0), scratch + rows, seq);
        gemm(true, false, end, headSize, end - first, Real(1), att + rows, seq, dy, width, Real(1),
             dv, 3 * width);
    });
    // Through the softmax and the scale: dS = scale · P ⊙ (dP − Σ_j P·dP), in place; P is 0 above
    // the diagonal, so dS is too.
#pragma omp parallel for if (parallelWorthIt(heads * seq * seq))
    for (std::size_t row = 0; row < heads * seq; ++row) {
        const std::size_t t = row % seq;
        const Real* p = att + row * seq;
        Real* d = scratch + row * seq;
        Real weighted = 0;
        for (std::size_t j = 0; j <= t; ++j)
            weighted += p[j] * d[j];
        for (std::size_t j = 0; j <= t; ++j)
            d[j] = scale * p[j] * (d[j] - weighted);
        std::fill(d + t + 1, d + seq, Real(0));
    }
    // Through S = Q·Kᵀ: dQ += dS·K and dK += dSᵀ·Q.
    forEachQueryBlock(shape, [&](std::size_t b, std::size_t h, std::size_t first, std::size_t end) {
        const HeadView<Real> view = headView(qkv, shape, b, h);
        const Real* dscores = scratch + ((b * shape.heads + h) * seq + first) * seq;
        Real* dq = dqkv + (view.q - qkv) + first * 3 * width;
        Real* dk = dqkv + (view.k - qkv);
        gemm(false, false, end - first, headSize, end, Real(1), dscores, seq, view.k, 3 * width,
             Real(1), dq, 3 * width);
        gemm(true, false, end, headSize, end - first, Real(1), dscores, seq,
             view.q + first * 3 * width, 3 * width, Real(1), dk, 3 * width);
    });
}

namespace {

template <typename Real>
constexpr Real kGeluScale = static_cast<Real>(0.7978845608028654);  // sqrt(2/π)
template <typename Real>
constexpr Real kGeluCubic = static_cast<Real>(0.044715);

// GELU's gate 0.5·(1 + tanh(u)) written as the logistic function of 2u, 1 / (1 + e^(−2u)), or
// e^(2u) / (1 + e^(2u)) for u < 0: the same value without tanh's cancellation for negative u,
// from one exponential of a non-positive number. Inlined, so that the loops over elements stay
// vectorised.
template <typename Real>
[[gnu::always_inline]] inline Real geluGate(Real x)
{
    const Real u = kGeluScale<Real> * (x + kGeluCubic<Real> * x * x * x);
    const Real e = exponentialOfNonPositive(Real(-2) * std::abs(u));
    return (u >= Real(0) ? Real(1) : e) / (Real(1) + e);
}

}  // namespace

template <typename Real>
SEALTRAIN_VECTOR_CLONES void geluForward(Real* out, const Real* in, std::size_t count)
{
#pragma omp parallel for simd if (parallel : parallelWorthIt(count))
    for (std::size_t i = 0; i < count; ++i)
        out[i] = in[i] * geluGate(in[i]);
}

template <typename Real>
SEALTRAIN_VECTOR_CLONES void geluBackward(Real* din, const Real* dout, const Real* in,
                                          std::size_t count)
{
    // d/dx [x·s(2u)] = s + x·2s(1 − s)·du/dx with s the gate (1 − tanh² = 4s(1 − s)).
#pragma omp parallel for simd if (parallel : parallelWorthIt(count))
    for (std::size_t i = 0; i < count; ++i) {
        const Real x = in[i];
        const Real gate = geluGate(x);
        const Real du = kGeluScale<Real> * (Real(1) + Real(3) * kGeluCubic<Real> * x * x);
        const Real grad = gate + Real(2) * x * gate * (Real(1) - gate) * du;
        din[i] += grad * dout[i];
    }
}

template <typename Real>
SEALTRAIN_VECTOR_CLONES void residualForward(Real* out, const Real* a, const Real* b,
                                             std::size_t count)
{
#pragma omp parallel for if (parallelWorthIt(count))
    for (std::size_t i = 0; i < count; ++i)
        out[i] = a[i] + b[i];
}

template <typename Real>
SEALTRAIN_VECTOR_CLONES void residualBackward(Real* da, Real* db, const Real* dout,
                                              std::size_t count)
{
#pragma omp parallel for if (parallelWorthIt(count))
    for (std::size_t i = 0; i < count; ++i) {
        da[i] += dout[i];
        db[i] += dout[i];
    }
}

template <typename Real>
SEALTRAIN_VECTOR_CLONES std::size_t
crossEntropyForward(Real* losses, Real* probs, const Real* logits, const std::int32_t* targets,
                    const CrossEntropyShape& shape)
{
#pragma omp parallel for if (parallelWorthIt(shape.rows * shape.vocab))
    for (std::size_t r = 0; r < shape.rows; ++r) {
        const Real* z = logits + r * shape.paddedVocab;
        Real* p = probs + r * shape.paddedVocab;
        Real maxLogit = -std::numeric_limits<Real>::infinity();
        for (std::size_t i = 0; i < shape.vocab; ++i)
            maxLogit = std::max(maxLogit, z[i]);
        for (std::size_t i = 0; i < shape.vocab; ++i)
            p[i] = exponentialOfNonPositive(z[i] - maxLogit);
        Real sum = 0;
        for (std::size_t i = 0; i < shape.vocab; ++i)
            sum += p[i];
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
SEALTRAIN_VECTOR_CLONES void crossEntropyBackward(Real* dlogits, const Real* dlosses,
                                                  const Real* probs, const std::int32_t* targets,
                                                  const CrossEntropyShape& shape)
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
    template void attentionBackward<Real>(Real*, Real*, const Real*, const Real*, const Real*,     \
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
