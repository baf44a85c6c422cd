// Causal self-attention without the T×T matrices (flash attention) for bf16 and a head size of
// 64, on the tensor cores through mma.sync (m16n8k16, bf16 inputs, fp32 accumulation) with every
// accumulator in registers. It reads q, k and v straight from the packed qkv (B,T,3C) and writes
// y in the (B,T,C) layout the projection reads, so no layout change runs either. Each warp owns
// 16 rows of a 64-row tile; the block's four warps share the other side's 64-row tile in shared
// memory. Forward: per query tile, the key tiles up to the diagonal with an online softmax (in
// base 2); it keeps logsumexp (B,H,T) for backward. Backward recomputes the probabilities from
// it in two kernels with no atomics, so results are bit-identical run to run: one per key tile
// (dK, dV over the query tiles at and after it), one per query tile (dQ over the key tiles up to
// it), after D = rowsum(dO ∘ O). Any T works: rows past T are zero-filled and never written.
//
// Fragment layouts (PTX ISA, mma.m16n8k16 with .bf16): lane = 4·g + t; A (16×16) holds rows g and
// g+8 at columns 2t, 2t+1 and 2t+8, 2t+9; B (16×8) holds column g at rows 2t, 2t+1 and 2t+8,
// 2t+9; C (16×8) holds rows g and g+8 at columns 2t, 2t+1. A C tile pair is therefore an A
// fragment: the probabilities go from one product to the next without leaving registers.
#include "launch.cuh"
#include "sealtrain/trainer/cuda/kernels.h"

namespace sealtrain::trainer::cuda::kernels {
namespace {

using bf16 = __nv_bfloat16;

constexpr unsigned kHead = kFlashHeadSize;
constexpr unsigned kTile = 64;      // query and key rows per tile
constexpr unsigned kTileWarps = 4;  // each warp owns 16 rows of a tile
constexpr unsigned kTileThreads = kTileWarps * kWarp;
constexpr unsigned kLd = kHead + 8;  // tile row stride in elements: 144 bytes, no bank conflicts
constexpr unsigned kTileElements = kTile * kLd;
constexpr float kLog2e = 1.4426950408889634F;
constexpr float kLn2 = 0.6931471805599453F;

struct Lane {
    unsigned g;  // lane / 4: rows g and g + 8 of a fragment
    unsigned t;  // lane % 4: columns 2t, 2t + 1 (and + 8)
};

__device__ __forceinline__ Lane laneOf()
{
    const unsigned lane = threadIdx.x % kWarp;
    return {lane / 4, lane % 4};
}

// Two adjacent bf16 of a tile row as one register (the lower column in the low half).
__device__ __forceinline__ unsigned pairAt(const bf16* tile, unsigned row, unsigned column)
{
    return *reinterpret_cast<const unsigned*>(tile + row * kLd + column);
}

__device__ __forceinline__ unsigned packPair(float low, float high)
{
    const __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
    return *reinterpret_cast<const unsigned*>(&pair);
}

// A fragments of rows [row0, row0 + 16) × 64 columns of a tile, four k chunks of 16.
__device__ __forceinline__ void loadA(unsigned (&a)[4][4], const bf16* tile, unsigned row0,
                                      Lane lane)
{
#pragma unroll
    for (unsigned kc = 0; kc < 4; ++kc) {
        const unsigned column = kc * 16 + 2 * lane.t;
        a[kc][0] = pairAt(tile, row0 + lane.g, column);
        a[kc][1] = pairAt(tile, row0 + lane.g + 8, column);
        a[kc][2] = pairAt(tile, row0 + lane.g, column + 8);
        a[kc][3] = pairAt(tile, row0 + lane.g + 8, column + 8);
    }
}

__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    // Not volatile: the product depends on its operands alone, so the compiler may interleave
    // independent ones (volatile would keep each dependent chain in program order).
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// acc (16×64, eight C tiles) += a (16×64) · B, where B[k][n] = tile[n][k]: the tile's rows are
// B's columns (so a row-major K gives Kᵀ, and a transposed tile gives the matrix itself). The k
// chunks are the outer loop, so consecutive products go to different accumulators and overlap;
// each accumulator still adds its chunks in the order 0..3.
__device__ __forceinline__ void multiply(float (&acc)[8][4], const unsigned (&a)[4][4],
                                         const bf16* tile, Lane lane)
{
#pragma unroll
    for (unsigned kc = 0; kc < 4; ++kc) {
#pragma unroll
        for (unsigned nt = 0; nt < 8; ++nt) {
            const unsigned b[2] = {pairAt(tile, nt * 8 + lane.g, kc * 16 + 2 * lane.t),
                                   pairAt(tile, nt * 8 + lane.g, kc * 16 + 8 + 2 * lane.t)};
            mma(acc[nt], a[kc], b);
        }
    }
}

__device__ __forceinline__ void clear(float (&acc)[8][4])
{
#pragma unroll
    for (unsigned nt = 0; nt < 8; ++nt)
#pragma unroll
        for (unsigned i = 0; i < 4; ++i)
            acc[nt][i] = 0.0F;
}

// Eight C tiles (16×64) rounded to bf16 as the A fragments of a product over those 64 columns.
__device__ __forceinline__ void toA(unsigned (&a)[4][4], const float (&c)[8][4])
{
#pragma unroll
    for (unsigned kc = 0; kc < 4; ++kc) {
        a[kc][0] = packPair(c[2 * kc][0], c[2 * kc][1]);
        a[kc][1] = packPair(c[2 * kc][2], c[2 * kc][3]);
        a[kc][2] = packPair(c[2 * kc + 1][0], c[2 * kc + 1][1]);
        a[kc][3] = packPair(c[2 * kc + 1][2], c[2 * kc + 1][3]);
    }
}

// Sum or maximum over the four lanes that share a fragment row.
__device__ __forceinline__ float rowSum(float value)
{
    value += __shfl_xor_sync(0xffffffffU, value, 1);
    return value + __shfl_xor_sync(0xffffffffU, value, 2);
}
__device__ __forceinline__ float rowMax(float value)
{
    value = fmaxf(value, __shfl_xor_sync(0xffffffffU, value, 1));
    return fmaxf(value, __shfl_xor_sync(0xffffffffU, value, 2));
}

__device__ __forceinline__ Pack<bf16> zeroPack()
{
    Pack<bf16> pack;
#pragma unroll
    for (unsigned u = 0; u < Pack<bf16>::kSize; ++u)
        pack.values[u] = __float2bfloat16_rn(0.0F);
    return pack;
}

// Rows [0, valid) of a 64×64 block whose row r starts at base + r·stride, zeros after them; as
// it is (tile[r][d]) or transposed (tile[d][r]).
template <bool transpose>
__device__ __forceinline__ void loadTile(bf16* tile, const bf16* base, unsigned stride,
                                         unsigned valid)
{
    constexpr unsigned packsPerRow = kHead / 8;
    for (unsigned i = threadIdx.x; i < kTile * packsPerRow; i += kTileThreads) {
        const unsigned r = transpose ? i % kTile : i / packsPerRow;
        const unsigned p = transpose ? i / kTile : i % packsPerRow;
        const Pack<bf16> value =
            r < valid ? loadPack(base + static_cast<std::size_t>(r) * stride + p * 8) : zeroPack();
        if constexpr (transpose) {
#pragma unroll
            for (unsigned u = 0; u < 8; ++u)
                tile[(p * 8 + u) * kLd + r] = value.values[u];
        } else {
            storePack(tile + r * kLd + p * 8, value);
        }
    }
}

// Rows g and g + 8 of eight C tiles, times `scale`, to rows row0 + g and row0 + g + 8 of a
// bf16 matrix with row stride `stride` (rows at or past `valid` skipped).
__device__ __forceinline__ void storeRows(bf16* base, unsigned stride, unsigned row0,
                                          unsigned valid, const float (&c)[8][4],
                                          const float (&scale)[2], Lane lane)
{
#pragma unroll
    for (unsigned half = 0; half < 2; ++half) {
        const unsigned row = row0 + lane.g + 8 * half;
        if (row >= valid)
            continue;
        bf16* target = base + static_cast<std::size_t>(row) * stride + 2 * lane.t;
#pragma unroll
        for (unsigned nt = 0; nt < 8; ++nt)
            *reinterpret_cast<__nv_bfloat162*>(target + nt * 8) = __floats2bfloat162_rn(
                c[nt][2 * half] * scale[half], c[nt][2 * half + 1] * scale[half]);
    }
}

struct Head {
    const bf16* q;  // row t of this head's q at q + t·stride; k and v follow at + width, + 2·width
    unsigned stride;
    unsigned width;
    std::size_t outOffset;  // this head's first element in a (B,T,C) tensor
};

__device__ __forceinline__ Head headOf(const bf16* qkv, unsigned seq, unsigned heads)
{
    const unsigned b = blockIdx.y / heads;
    const unsigned h = blockIdx.y % heads;
    const unsigned width = heads * kHead;
    return {qkv + static_cast<std::size_t>(b) * seq * 3 * width + h * kHead, 3 * width, width,
            static_cast<std::size_t>(b) * seq * width + h * kHead};
}

__global__ void __launch_bounds__(kTileThreads)
    flashForwardKernel(bf16* out, float* lse, const bf16* qkv, unsigned seq, unsigned heads,
                       float scale)
{
    __shared__ __align__(16) bf16 ks[kTileElements];
    __shared__ __align__(16) bf16 vts[kTileElements];  // V transposed: [d][key]
    const Head head = headOf(qkv, seq, heads);
    const Lane lane = laneOf();
    const unsigned warpRow = threadIdx.x / kWarp * 16;
    const unsigned queryBlock = gridDim.x - 1 - blockIdx.x;  // the longest tiles first
    const unsigned q0 = queryBlock * kTile;
    const unsigned rows[2] = {q0 + warpRow + lane.g, q0 + warpRow + lane.g + 8};
    const float scaleLog2 = scale * kLog2e;
    loadTile<false>(ks, head.q + static_cast<std::size_t>(q0) * head.stride, head.stride,
                    min(kTile, seq - q0));
    __syncthreads();
    unsigned qa[4][4];
    loadA(qa, ks, warpRow, lane);
    float o[8][4];
    clear(o);
    float largest[2] = {-INFINITY, -INFINITY};
    float sum[2] = {0.0F, 0.0F};
    for (unsigned kb = 0; kb <= queryBlock; ++kb) {
        const unsigned k0 = kb * kTile;
        __syncthreads();  // the previous tiles (and Q's) are consumed
        const bf16* keys = head.q + head.width + static_cast<std::size_t>(k0) * head.stride;
        loadTile<false>(ks, keys, head.stride, min(kTile, seq - k0));
        loadTile<true>(vts, keys + head.width, head.stride, min(kTile, seq - k0));
        __syncthreads();
        float s[8][4];
        clear(s);
        multiply(s, qa, ks, lane);  // S = Q Kᵀ
        float tileMax[2] = {-INFINITY, -INFINITY};
#pragma unroll
        for (unsigned nt = 0; nt < 8; ++nt)
#pragma unroll
            for (unsigned i = 0; i < 4; ++i) {
                const unsigned key = k0 + nt * 8 + 2 * lane.t + (i & 1U);
                s[nt][i] = key <= rows[i / 2] ? s[nt][i] * scaleLog2 : -INFINITY;
                tileMax[i / 2] = fmaxf(tileMax[i / 2], s[nt][i]);
            }
        float correction[2];
        float tileSum[2] = {0.0F, 0.0F};
#pragma unroll
        for (unsigned r = 0; r < 2; ++r) {
            const float next = fmaxf(largest[r], rowMax(tileMax[r]));  // finite: key k0 counts
            correction[r] = exp2f(largest[r] - next);                  // 0 on the first tile
            largest[r] = next;
        }
#pragma unroll
        for (unsigned nt = 0; nt < 8; ++nt)
#pragma unroll
            for (unsigned i = 0; i < 4; ++i) {
                s[nt][i] = exp2f(s[nt][i] - largest[i / 2]);
                tileSum[i / 2] += s[nt][i];
                o[nt][i] *= correction[i / 2];
            }
#pragma unroll
        for (unsigned r = 0; r < 2; ++r)
            sum[r] = sum[r] * correction[r] + rowSum(tileSum[r]);
        unsigned pa[4][4];
        toA(pa, s);
        multiply(o, pa, vts, lane);  // O += P V
    }
    const float inverse[2] = {1.0F / sum[0], 1.0F / sum[1]};
    storeRows(out + head.outOffset, head.width, q0 + warpRow, seq, o, inverse, lane);
    if (lane.t == 0) {
#pragma unroll
        for (unsigned r = 0; r < 2; ++r)
            if (rows[r] < seq)
                lse[static_cast<std::size_t>(blockIdx.y) * seq + rows[r]] =
                    largest[r] * kLn2 + logf(sum[r]);
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

// dK and dV of one key tile, over the query tiles at and after it. Each warp: 16 keys.
__global__ void __launch_bounds__(kTileThreads)
    flashBackwardKeyValueKernel(bf16* dqkv, const bf16* qkv, const bf16* dout, const float* lse,
                                const float* dots, unsigned seq, unsigned heads, float scale)
{
    __shared__ __align__(16) bf16 qs[kTileElements];    // Q [query][d]
    __shared__ __align__(16) bf16 qts[kTileElements];   // Qᵀ [d][query]
    __shared__ __align__(16) bf16 dos[kTileElements];   // dO [query][d]
    __shared__ __align__(16) bf16 doTs[kTileElements];  // dOᵀ [d][query]
    __shared__ float tileLse[kTile];
    __shared__ float tileDots[kTile];
    const Head head = headOf(qkv, seq, heads);
    const Lane lane = laneOf();
    const unsigned warpRow = threadIdx.x / kWarp * 16;
    const unsigned blocks = gridDim.x;
    const unsigned keyBlock = blockIdx.x;  // key tile 0, the longest, first
    const unsigned k0 = keyBlock * kTile;
    const unsigned keys[2] = {k0 + warpRow + lane.g, k0 + warpRow + lane.g + 8};
    const float scaleLog2 = scale * kLog2e;
    const float* rowLse = lse + static_cast<std::size_t>(blockIdx.y) * seq;
    const float* rowDots = dots + static_cast<std::size_t>(blockIdx.y) * seq;
    const bf16* keyRows = head.q + head.width + static_cast<std::size_t>(k0) * head.stride;
    loadTile<false>(qs, keyRows, head.stride, min(kTile, seq - k0));
    loadTile<false>(dos, keyRows + head.width, head.stride, min(kTile, seq - k0));
    __syncthreads();
    unsigned ka[4][4];
    unsigned va[4][4];
    loadA(ka, qs, warpRow, lane);
    loadA(va, dos, warpRow, lane);
    float dk[8][4];
    float dv[8][4];
    clear(dk);
    clear(dv);
    for (unsigned qb = keyBlock; qb < blocks; ++qb) {
        const unsigned q0 = qb * kTile;
        const unsigned valid = min(kTile, seq - q0);
        __syncthreads();  // the previous query tile (and K's and V's) are consumed
        const bf16* queries = head.q + static_cast<std::size_t>(q0) * head.stride;
        const bf16* douts = dout + head.outOffset + static_cast<std::size_t>(q0) * head.width;
        loadTile<false>(qs, queries, head.stride, valid);
        loadTile<true>(qts, queries, head.stride, valid);
        loadTile<false>(dos, douts, head.width, valid);
        loadTile<true>(doTs, douts, head.width, valid);
        for (unsigned i = threadIdx.x; i < kTile; i += kTileThreads) {
            tileLse[i] = i < valid ? rowLse[q0 + i] * kLog2e : 0.0F;
            tileDots[i] = i < valid ? rowDots[q0 + i] : 0.0F;
        }
        __syncthreads();
        float p[8][4];
        clear(p);
        multiply(p, ka, qs, lane);  // Sᵀ = K_w Qᵀ (16 keys × 64 queries)
#pragma unroll
        for (unsigned nt = 0; nt < 8; ++nt)
#pragma unroll
            for (unsigned i = 0; i < 4; ++i) {
                const unsigned column = nt * 8 + 2 * lane.t + (i & 1U);
                const unsigned query = q0 + column;
                p[nt][i] = query >= keys[i / 2] && query < seq
                               ? exp2f(p[nt][i] * scaleLog2 - tileLse[column])
                               : 0.0F;
            }
        unsigned pa[4][4];
        toA(pa, p);
        multiply(dv, pa, doTs, lane);  // dV_w += Pᵀ_w dO
        float ds[8][4];
        clear(ds);
        multiply(ds, va, dos, lane);  // dPᵀ_w = V_w dOᵀ
#pragma unroll
        for (unsigned nt = 0; nt < 8; ++nt)
#pragma unroll
            for (unsigned i = 0; i < 4; ++i)
                ds[nt][i] = p[nt][i] * (ds[nt][i] - tileDots[nt * 8 + 2 * lane.t + (i & 1U)]);
        unsigned dsa[4][4];
        toA(dsa, ds);
        multiply(dk, dsa, qts, lane);  // dK_w += dSᵀ_w Q
    }
    bf16* target = dqkv + (head.q - qkv) + head.width;
    const float dkScale[2] = {scale, scale};
    const float one[2] = {1.0F, 1.0F};
    storeRows(target, head.stride, k0 + warpRow, seq, dk, dkScale, lane);
    storeRows(target + head.width, head.stride, k0 + warpRow, seq, dv, one, lane);
}

// dQ of one query tile, over the key tiles up to the diagonal. Each warp: 16 queries.
__global__ void __launch_bounds__(kTileThreads)
    flashBackwardQueryKernel(bf16* dqkv, const bf16* qkv, const bf16* dout, const float* lse,
                             const float* dots, unsigned seq, unsigned heads, float scale)
{
    __shared__ __align__(16) bf16 ks[kTileElements];   // K [key][d]
    __shared__ __align__(16) bf16 kts[kTileElements];  // Kᵀ [d][key]
    __shared__ __align__(16) bf16 vs[kTileElements];   // V [key][d]
    const Head head = headOf(qkv, seq, heads);
    const Lane lane = laneOf();
    const unsigned warpRow = threadIdx.x / kWarp * 16;
    const unsigned queryBlock = gridDim.x - 1 - blockIdx.x;
    const unsigned q0 = queryBlock * kTile;
    const unsigned rows[2] = {q0 + warpRow + lane.g, q0 + warpRow + lane.g + 8};
    const float scaleLog2 = scale * kLog2e;
    float rowLse[2];
    float rowDot[2];
#pragma unroll
    for (unsigned r = 0; r < 2; ++r) {
        const std::size_t at = static_cast<std::size_t>(blockIdx.y) * seq + rows[r];
        rowLse[r] = rows[r] < seq ? lse[at] * kLog2e : 0.0F;
        rowDot[r] = rows[r] < seq ? dots[at] : 0.0F;
    }
    loadTile<false>(ks, head.q + static_cast<std::size_t>(q0) * head.stride, head.stride,
                    min(kTile, seq - q0));
    loadTile<false>(vs, dout + head.outOffset + static_cast<std::size_t>(q0) * head.width,
                    head.width, min(kTile, seq - q0));
    __syncthreads();
    unsigned qa[4][4];
    unsigned doa[4][4];
    loadA(qa, ks, warpRow, lane);
    loadA(doa, vs, warpRow, lane);
    float dq[8][4];
    clear(dq);
    for (unsigned kb = 0; kb <= queryBlock; ++kb) {
        const unsigned k0 = kb * kTile;
        const unsigned valid = min(kTile, seq - k0);
        __syncthreads();
        const bf16* keys = head.q + head.width + static_cast<std::size_t>(k0) * head.stride;
        loadTile<false>(ks, keys, head.stride, valid);
        loadTile<true>(kts, keys, head.stride, valid);
        loadTile<false>(vs, keys + head.width, head.stride, valid);
        __syncthreads();
        float p[8][4];
        clear(p);
        multiply(p, qa, ks, lane);  // S_w = Q_w Kᵀ
#pragma unroll
        for (unsigned nt = 0; nt < 8; ++nt)
#pragma unroll
            for (unsigned i = 0; i < 4; ++i) {
                const unsigned key = k0 + nt * 8 + 2 * lane.t + (i & 1U);
                const unsigned row = rows[i / 2];
                p[nt][i] =
                    key <= row && row < seq ? exp2f(p[nt][i] * scaleLog2 - rowLse[i / 2]) : 0.0F;
            }
        float ds[8][4];
        clear(ds);
        multiply(ds, doa, vs, lane);  // dP_w = dO_w Vᵀ
#pragma unroll
        for (unsigned nt = 0; nt < 8; ++nt)
#pragma unroll
            for (unsigned i = 0; i < 4; ++i)
                ds[nt][i] = p[nt][i] * (ds[nt][i] - rowDot[i / 2]);
        unsigned dsa[4][4];
        toA(dsa, ds);
        multiply(dq, dsa, kts, lane);  // dQ_w += dS_w K
    }
    const float dqScale[2] = {scale, scale};
    storeRows(dqkv + (head.q - qkv), head.stride, q0 + warpRow, seq, dq, dqScale, lane);
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
    const float scale = 1.0F / sqrtf(static_cast<float>(kHead));
    flashForwardKernel<<<tileGrid(dims), kTileThreads, 0, stream>>>(
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
    const auto seq = static_cast<unsigned>(dims.seq);
    const auto heads = static_cast<unsigned>(dims.heads);
    const float scale = 1.0F / sqrtf(static_cast<float>(kHead));
    launchPerRow(flashDotsKernel, rows, stream, dots, out, dout, static_cast<unsigned>(rows), seq,
                 heads);
    flashBackwardKeyValueKernel<<<tileGrid(dims), kTileThreads, 0, stream>>>(
        dqkv, qkv, dout, lse, dots, seq, heads, scale);
    checkLaunch();
    flashBackwardQueryKernel<<<tileGrid(dims), kTileThreads, 0, stream>>>(dqkv, qkv, dout, lse,
                                                                          dots, seq, heads, scale);
    checkLaunch();
}

}  // namespace sealtrain::trainer::cuda::kernels
