// Causal self-attention without the T×T matrices (flash attention) for bf16 and a head size of
// 64, on the tensor cores through WMMA (16×16×16 bf16 products, fp32 accumulation). It reads q,
// k and v straight from the packed qkv (B,T,3C) and writes y in the (B,T,C) layout the
// projection reads, so no layout change runs either. Forward: per 64-row query tile, the key
// tiles up to the diagonal with an online softmax; it keeps logsumexp (B,H,T) for backward.
// Backward recomputes the probabilities from it in two kernels with no atomics, so results are
// bit-identical run to run: one per key tile (dK, dV over the query tiles at and after it), one
// per query tile (dQ over the key tiles up to it), after D = rowsum(dO ∘ O). Any T works: rows
// past T are zero-filled and never written.
#include "launch.cuh"
#include "sealtrain/trainer/cuda/kernels.h"

#include <mma.h>

namespace sealtrain::trainer::cuda::kernels {
namespace {

using namespace nvcuda;
using bf16 = __nv_bfloat16;

constexpr unsigned kHead = kFlashHeadSize;
constexpr unsigned kTile = 64;            // query and key rows per tile
constexpr unsigned kTileWarps = 4;        // each warp owns 16 rows of a tile
constexpr unsigned kTileThreads = kTileWarps * kWarp;
constexpr unsigned kLd = kHead + 8;       // bf16 tile row stride in elements (144 bytes)
constexpr unsigned kLdF = kTile + 4;      // fp32 tile row stride in elements (272 bytes)
constexpr unsigned kHalf = kTile / 2;     // columns per lane: two lanes share a row
constexpr unsigned kBf16Tile = kTile * kLd * sizeof(bf16);
constexpr unsigned kFloatTile = kTile * kLdF * sizeof(float);

using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major>;
using FragBCol = wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major>;
using FragBRow = wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

// Rows [0, valid) of a 64×64 tile whose row r starts at base + r·stride, zeros after them.
__device__ __forceinline__ void loadTile(bf16* tile, const bf16* base, unsigned stride,
                                         unsigned valid)
{
    constexpr unsigned packsPerRow = kHead / 8;
    for (unsigned i = threadIdx.x; i < kTile * packsPerRow; i += kTileThreads) {
        const unsigned r = i / packsPerRow;
        const unsigned p = i % packsPerRow;
        int4 value = make_int4(0, 0, 0, 0);
        if (r < valid)
            value = *reinterpret_cast<const int4*>(base + static_cast<std::size_t>(r) * stride
                                                   + p * 8);
        *reinterpret_cast<int4*>(tile + r * kLd + p * 8) = value;
    }
}

// out (16×64 fp32, row stride kLdF) = a (16×64 bf16 rows, row-major, stride kLd) times b, where
// b is a 64×64 bf16 tile used transposed (bᵀ: "col") or as it is ("row").
template <bool transposeB>
__device__ __forceinline__ void product(FragC (&acc)[4], const bf16* a, const bf16* b)
{
#pragma unroll
    for (unsigned n = 0; n < 4; ++n) {
#pragma unroll
        for (unsigned k = 0; k < 4; ++k) {
            FragA left;
            wmma::load_matrix_sync(left, a + k * 16, kLd);
            if constexpr (transposeB) {
                FragBCol right;
                wmma::load_matrix_sync(right, b + n * 16 * kLd + k * 16, kLd);
                wmma::mma_sync(acc[n], left, right, acc[n]);
            } else {
                FragBRow right;
                wmma::load_matrix_sync(right, b + k * 16 * kLd + n * 16, kLd);
                wmma::mma_sync(acc[n], left, right, acc[n]);
            }
        }
    }
}

__device__ __forceinline__ void zero(FragC (&acc)[4])
{
#pragma unroll
    for (unsigned n = 0; n < 4; ++n)
        wmma::fill_fragment(acc[n], 0.0F);
}

__device__ __forceinline__ void store(float* out, FragC (&acc)[4])
{
#pragma unroll
    for (unsigned n = 0; n < 4; ++n)
        wmma::store_matrix_sync(out + n * 16, acc[n], kLdF, wmma::mem_row_major);
}

// 32 values of a lane's half row, scaled and rounded to bf16, to global memory.
__device__ __forceinline__ void writeHalfRow(bf16* target, const float* row, float scale)
{
#pragma unroll
    for (unsigned c = 0; c < kHalf; c += 8) {
        Pack<bf16> pack;
#pragma unroll
        for (unsigned u = 0; u < 8; ++u)
            pack.values[u] = __float2bfloat16_rn(row[c + u] * scale);
        storePack(target + c, pack);
    }
}

struct Head {
    unsigned b;
    unsigned h;
    unsigned width;
};

__device__ __forceinline__ Head headOf(unsigned heads)
{
    return {blockIdx.y / heads, blockIdx.y % heads, heads * kHead};
}

__global__ void __launch_bounds__(kTileThreads)
    flashForwardKernel(bf16* out, float* lse, const bf16* qkv, unsigned seq, unsigned heads,
                       float scale)
{
    extern __shared__ __align__(128) unsigned char shared[];
    bf16* qs = reinterpret_cast<bf16*>(shared);
    bf16* ks = qs + kTile * kLd;
    bf16* vs = ks + kTile * kLd;
    bf16* ps = vs + kTile * kLd;
    auto* ss = reinterpret_cast<float*>(ps + kTile * kLd);
    float* os = ss + kTile * kLdF;
    const Head head = headOf(heads);
    const unsigned stride = 3 * head.width;
    const bf16* qBase = qkv + static_cast<std::size_t>(head.b) * seq * stride + head.h * kHead;
    const bf16* kBase = qBase + head.width;
    const bf16* vBase = qBase + 2 * head.width;
    const unsigned queryBlock = gridDim.x - 1 - blockIdx.x;  // the longest tiles first
    const unsigned q0 = queryBlock * kTile;
    const unsigned warp = threadIdx.x / kWarp;
    const unsigned lane = threadIdx.x % kWarp;
    const unsigned row = lane / 2;
    const unsigned half = lane % 2;
    const unsigned query = q0 + warp * 16 + row;
    bf16* pw = ps + warp * 16 * kLd;
    float* sw = ss + warp * 16 * kLdF;
    float* ow = os + warp * 16 * kLdF;
    loadTile(qs, qBase + static_cast<std::size_t>(q0) * stride, stride, min(kTile, seq - q0));
    for (unsigned i = threadIdx.x; i < kTile * kLdF; i += kTileThreads)
        os[i] = 0.0F;
    float rowMax = -INFINITY;
    float rowSum = 0.0F;
    for (unsigned kb = 0; kb <= queryBlock; ++kb) {
        const unsigned k0 = kb * kTile;
        __syncthreads();  // the previous key tile is consumed (and Q and O are in place)
        loadTile(ks, kBase + static_cast<std::size_t>(k0) * stride, stride, min(kTile, seq - k0));
        loadTile(vs, vBase + static_cast<std::size_t>(k0) * stride, stride, min(kTile, seq - k0));
        __syncthreads();
        FragC acc[4];
        zero(acc);
        product<true>(acc, qs + warp * 16 * kLd, ks);
        store(sw, acc);
        __syncwarp();
        // Online softmax over this lane's half of its row (key ≤ query; key k0 always is).
        const float* sRow = sw + row * kLdF + half * kHalf;
        float localMax = -INFINITY;
#pragma unroll
        for (unsigned c = 0; c < kHalf; ++c)
            if (k0 + half * kHalf + c <= query)
                localMax = fmaxf(localMax, sRow[c] * scale);
        localMax = fmaxf(localMax, __shfl_xor_sync(0xffffffffU, localMax, 1));
        const float newMax = fmaxf(rowMax, localMax);
        float localSum = 0.0F;
        bf16* pRow = pw + row * kLd + half * kHalf;
#pragma unroll
        for (unsigned c = 0; c < kHalf; ++c) {
            const float p =
                k0 + half * kHalf + c <= query ? __expf(sRow[c] * scale - newMax) : 0.0F;
            pRow[c] = __float2bfloat16_rn(p);
            localSum += p;
        }
        localSum += __shfl_xor_sync(0xffffffffU, localSum, 1);
        const float correction = __expf(rowMax - newMax);  // 0 on the first tile
        rowSum = rowSum * correction + localSum;
        rowMax = newMax;
        float* oRow = ow + row * kLdF + half * kHalf;
#pragma unroll
        for (unsigned c = 0; c < kHalf; ++c)
            oRow[c] *= correction;
        __syncwarp();
#pragma unroll
        for (unsigned n = 0; n < 4; ++n)
            wmma::load_matrix_sync(acc[n], ow + n * 16, kLdF, wmma::mem_row_major);
        product<false>(acc, pw, vs);
        store(ow, acc);
        __syncwarp();
    }
    if (query < seq) {
        writeHalfRow(out + (static_cast<std::size_t>(head.b) * seq + query) * head.width
                         + head.h * kHead + half * kHalf,
                     ow + row * kLdF + half * kHalf, 1.0F / rowSum);
        if (half == 0)
            lse[static_cast<std::size_t>(blockIdx.y) * seq + query] = rowMax + logf(rowSum);
    }
}

// dots(b, h, t) = Σ_d dO(b, t, h, d)·O(b, t, h, d): one warp per (b, t, h), two values a lane.
__global__ void flashDotsKernel(float* dots, const bf16* out, const bf16* dout, unsigned rows,
                                unsigned seq, unsigned heads)
{
    const unsigned r = blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp;
    const unsigned lane = threadIdx.x % kWarp;
    if (r >= rows)
        return;
    const std::size_t at = static_cast<std::size_t>(r) * kHead + 2 * lane;
    float sum = __bfloat162float(out[at]) * __bfloat162float(dout[at])
                + __bfloat162float(out[at + 1]) * __bfloat162float(dout[at + 1]);
    sum = warpSum(sum);
    if (lane == 0) {
        const unsigned h = r % heads;
        const unsigned bt = r / heads;
        dots[(static_cast<std::size_t>(bt / seq) * heads + h) * seq + bt % seq] = sum;
    }
}

// dK and dV of one key tile, over the query tiles at and after it.
__global__ void __launch_bounds__(kTileThreads)
    flashBackwardKeyValueKernel(bf16* dqkv, const bf16* qkv, const bf16* dout, const float* lse,
                                const float* dots, unsigned seq, unsigned heads, float scale)
{
    extern __shared__ __align__(128) unsigned char shared[];
    bf16* qs = reinterpret_cast<bf16*>(shared);
    bf16* dos = qs + kTile * kLd;
    bf16* ks = dos + kTile * kLd;
    bf16* vs = ks + kTile * kLd;
    bf16* pts = vs + kTile * kLd;
    bf16* dss = pts + kTile * kLd;
    auto* ss = reinterpret_cast<float*>(dss + kTile * kLd);
    float* tileLse = ss + kTile * kLdF;
    float* tileDots = tileLse + kTile;
    const Head head = headOf(heads);
    const unsigned stride = 3 * head.width;
    const bf16* qBase = qkv + static_cast<std::size_t>(head.b) * seq * stride + head.h * kHead;
    const bf16* doBase = dout + static_cast<std::size_t>(head.b) * seq * head.width
                         + head.h * kHead;
    const unsigned blocks = gridDim.x;
    const unsigned keyBlock = blockIdx.x;  // the longest tiles (key tile 0) first
    const unsigned k0 = keyBlock * kTile;
    const unsigned warp = threadIdx.x / kWarp;
    const unsigned lane = threadIdx.x % kWarp;
    const unsigned row = lane / 2;
    const unsigned half = lane % 2;
    const unsigned key = k0 + warp * 16 + row;
    bf16* ptw = pts + warp * 16 * kLd;
    bf16* dsw = dss + warp * 16 * kLd;
    float* sw = ss + warp * 16 * kLdF;
    const float* rowLse = lse + static_cast<std::size_t>(blockIdx.y) * seq;
    const float* rowDots = dots + static_cast<std::size_t>(blockIdx.y) * seq;
    loadTile(ks, qBase + head.width + static_cast<std::size_t>(k0) * stride, stride,
             min(kTile, seq - k0));
    loadTile(vs, qBase + 2 * head.width + static_cast<std::size_t>(k0) * stride, stride,
             min(kTile, seq - k0));
    FragC dk[4];
    FragC dv[4];
    zero(dk);
    zero(dv);
    for (unsigned qb = keyBlock; qb < blocks; ++qb) {
        const unsigned q0 = qb * kTile;
        __syncthreads();  // the previous query tile is consumed
        loadTile(qs, qBase + static_cast<std::size_t>(q0) * stride, stride, min(kTile, seq - q0));
        loadTile(dos, doBase + static_cast<std::size_t>(q0) * head.width, head.width,
                 min(kTile, seq - q0));
        for (unsigned i = threadIdx.x; i < kTile; i += kTileThreads) {
            tileLse[i] = q0 + i < seq ? rowLse[q0 + i] : 0.0F;
            tileDots[i] = q0 + i < seq ? rowDots[q0 + i] : 0.0F;
        }
        __syncthreads();
        // Sᵀ (16 keys × 64 queries) = K_w Qᵀ, then Pᵀ where query ≥ key and query < T.
        FragC acc[4];
        zero(acc);
        product<true>(acc, ks + warp * 16 * kLd, qs);
        store(sw, acc);
        __syncwarp();
        float p[kHalf];
        const float* sRow = sw + row * kLdF + half * kHalf;
        bf16* ptRow = ptw + row * kLd + half * kHalf;
#pragma unroll
        for (unsigned c = 0; c < kHalf; ++c) {
            const unsigned query = q0 + half * kHalf + c;
            p[c] = query >= key && query < seq
                       ? __expf(sRow[c] * scale - tileLse[half * kHalf + c])
                       : 0.0F;
            ptRow[c] = __float2bfloat16_rn(p[c]);
        }
        __syncwarp();
        product<false>(dv, ptw, dos);  // dV_w += Pᵀ_w dO
        zero(acc);
        product<true>(acc, vs + warp * 16 * kLd, dos);  // dPᵀ_w = V_w dOᵀ
        store(sw, acc);
        __syncwarp();
        bf16* dsRow = dsw + row * kLd + half * kHalf;
#pragma unroll
        for (unsigned c = 0; c < kHalf; ++c)
            dsRow[c] = __float2bfloat16_rn(p[c] * (sRow[c] - tileDots[half * kHalf + c]));
        __syncwarp();
        product<false>(dk, dsw, qs);  // dK_w += dSᵀ_w Q
    }
    const std::size_t keyRow = (static_cast<std::size_t>(head.b) * seq + key) * stride
                               + head.h * kHead + half * kHalf;
    store(sw, dk);
    __syncwarp();
    if (key < seq)
        writeHalfRow(dqkv + keyRow + head.width, sw + row * kLdF + half * kHalf, scale);
    __syncwarp();
    store(sw, dv);
    __syncwarp();
    if (key < seq)
        writeHalfRow(dqkv + keyRow + 2 * head.width, sw + row * kLdF + half * kHalf, 1.0F);
}

// dQ of one query tile, over the key tiles up to the diagonal.
__global__ void __launch_bounds__(kTileThreads)
    flashBackwardQueryKernel(bf16* dqkv, const bf16* qkv, const bf16* dout, const float* lse,
                             const float* dots, unsigned seq, unsigned heads, float scale)
{
    extern __shared__ __align__(128) unsigned char shared[];
    bf16* qs = reinterpret_cast<bf16*>(shared);
    bf16* dos = qs + kTile * kLd;
    bf16* ks = dos + kTile * kLd;
    bf16* vs = ks + kTile * kLd;
    bf16* dss = vs + kTile * kLd;
    auto* ss = reinterpret_cast<float*>(dss + kTile * kLd);
    const Head head = headOf(heads);
    const unsigned stride = 3 * head.width;
    const bf16* qBase = qkv + static_cast<std::size_t>(head.b) * seq * stride + head.h * kHead;
    const bf16* doBase = dout + static_cast<std::size_t>(head.b) * seq * head.width
                         + head.h * kHead;
    const unsigned queryBlock = gridDim.x - 1 - blockIdx.x;
    const unsigned q0 = queryBlock * kTile;
    const unsigned warp = threadIdx.x / kWarp;
    const unsigned lane = threadIdx.x % kWarp;
    const unsigned row = lane / 2;
    const unsigned half = lane % 2;
    const unsigned query = q0 + warp * 16 + row;
    bf16* dsw = dss + warp * 16 * kLd;
    float* sw = ss + warp * 16 * kLdF;
    const std::size_t at = static_cast<std::size_t>(blockIdx.y) * seq + query;
    const float myLse = query < seq ? lse[at] : 0.0F;
    const float myDot = query < seq ? dots[at] : 0.0F;
    loadTile(qs, qBase + static_cast<std::size_t>(q0) * stride, stride, min(kTile, seq - q0));
    loadTile(dos, doBase + static_cast<std::size_t>(q0) * head.width, head.width,
             min(kTile, seq - q0));
    FragC dq[4];
    zero(dq);
    for (unsigned kb = 0; kb <= queryBlock; ++kb) {
        const unsigned k0 = kb * kTile;
        __syncthreads();
        loadTile(ks, qBase + head.width + static_cast<std::size_t>(k0) * stride, stride,
                 min(kTile, seq - k0));
        loadTile(vs, qBase + 2 * head.width + static_cast<std::size_t>(k0) * stride, stride,
                 min(kTile, seq - k0));
        __syncthreads();
        FragC acc[4];
        zero(acc);
        product<true>(acc, qs + warp * 16 * kLd, ks);  // S_w = Q_w Kᵀ
        store(sw, acc);
        __syncwarp();
        float p[kHalf];
        const float* sRow = sw + row * kLdF + half * kHalf;
#pragma unroll
        for (unsigned c = 0; c < kHalf; ++c)
            p[c] = k0 + half * kHalf + c <= query && query < seq
                       ? __expf(sRow[c] * scale - myLse)
                       : 0.0F;
        __syncwarp();
        zero(acc);
        product<true>(acc, dos + warp * 16 * kLd, vs);  // dP_w = dO_w Vᵀ
        store(sw, acc);
        __syncwarp();
        bf16* dsRow = dsw + row * kLd + half * kHalf;
#pragma unroll
        for (unsigned c = 0; c < kHalf; ++c)
            dsRow[c] = __float2bfloat16_rn(p[c] * (sRow[c] - myDot));
        __syncwarp();
        product<false>(dq, dsw, ks);  // dQ_w += dS_w K
    }
    store(sw, dq);
    __syncwarp();
    if (query < seq)
        writeHalfRow(dqkv + (static_cast<std::size_t>(head.b) * seq + query) * stride
                         + head.h * kHead + half * kHalf,
                     sw + row * kLdF + half * kHalf, scale);
}

constexpr unsigned kForwardShared = 4 * kBf16Tile + 2 * kFloatTile;
constexpr unsigned kKeyValueShared = 6 * kBf16Tile + kFloatTile + 2 * kTile * sizeof(float);
constexpr unsigned kQueryShared = 5 * kBf16Tile + kFloatTile;

// Each kernel's shared-memory limit raised past the default 48 KB, once per process.
void allowSharedMemory()
{
    static const bool done = [] {
        SEALTRAIN_CUDA_CHECK(cudaFuncSetAttribute(
            flashForwardKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kForwardShared));
        SEALTRAIN_CUDA_CHECK(cudaFuncSetAttribute(flashBackwardKeyValueKernel,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  kKeyValueShared));
        SEALTRAIN_CUDA_CHECK(cudaFuncSetAttribute(
            flashBackwardQueryKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kQueryShared));
        return true;
    }();
    (void)done;
}

dim3 tileGrid(const AttentionDims& dims)
{
    return {static_cast<unsigned>((dims.seq + kTile - 1) / kTile),
            static_cast<unsigned>(dims.batch * dims.heads), 1};
}

}  // namespace

bool flashAttentionFits(const AttentionDims& dims)
{
    return dims.headSize == kHead && dims.batch * dims.heads < 65536
           && 3 * dims.batch * dims.seq * dims.heads * kHead < (std::size_t{1} << 31U);
}

void flashAttentionForward(__nv_bfloat16* out, float* lse, const __nv_bfloat16* qkv,
                           const AttentionDims& dims, cudaStream_t stream)
{
    if (dims.batch * dims.seq * dims.heads == 0)
        return;
    allowSharedMemory();
    const float scale = 1.0F / sqrtf(static_cast<float>(kHead));
    flashForwardKernel<<<tileGrid(dims), kTileThreads, kForwardShared, stream>>>(
        out, lse, qkv, static_cast<unsigned>(dims.seq), static_cast<unsigned>(dims.heads), scale);
    checkLaunch();
}

void flashAttentionBackward(__nv_bfloat16* dqkv, float* dots, const __nv_bfloat16* dout,
                            const __nv_bfloat16* out, const __nv_bfloat16* qkv, const float* lse,
                            const AttentionDims& dims, cudaStream_t stream)
{
    const std::size_t rows = dims.batch * dims.seq * dims.heads;
    if (rows == 0)
        return;
    allowSharedMemory();
    const auto seq = static_cast<unsigned>(dims.seq);
    const auto heads = static_cast<unsigned>(dims.heads);
    const float scale = 1.0F / sqrtf(static_cast<float>(kHead));
    launchPerRow(flashDotsKernel, rows, stream, dots, out, dout, static_cast<unsigned>(rows), seq,
                 heads);
    flashBackwardKeyValueKernel<<<tileGrid(dims), kTileThreads, kKeyValueShared, stream>>>(
        dqkv, qkv, dout, lse, dots, seq, heads, scale);
    checkLaunch();
    flashBackwardQueryKernel<<<tileGrid(dims), kTileThreads, kQueryShared, stream>>>(
        dqkv, qkv, dout, lse, dots, seq, heads, scale);
    checkLaunch();
}

}  // namespace sealtrain::trainer::cuda::kernels
