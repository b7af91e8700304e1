// Batched matmul on Hopper (sm_90a) with warpgroup MMA: C[b] = op(A[b]) · op(B[b]) for F16/BF16 with m, n, k <= 128,
// one matrix per block at a time. BmmHeuristics.useWg picks it on compute capability 9.0 from 9 output tiles of 32x32
// (8 where the rows are 8-byte, not 16-byte, multiples); the sm_80 SASS and the compute_80 PTX of this file trap
// (callers never launch them elsewhere).
//
// Why: the team kernels (bmm_team.cu) issue ~0.5 instructions per scheduler and cycle and spend them on ldmatrix and
// mma.sync; rows in 8-byte but not 16-byte multiples (e.g. 100 columns) ran them at 43-71 % of the copy floor
// (cuda-native/dev/bmm/results-h100-2b6804b-flat.txt, -flat-ncu.txt). wgmma reads both operands from shared memory, so a
// 64x128 slab over all of k is ceil(k/16) instructions per warpgroup. H100 harness (results-h100-wg.txt), f16
// 2048 100^3: cuBLAS 76.1 us, bmm_team8 71.6, this kernel 46.7 (88 % of the copy floor); 8192 100^3 253.4 / 261.3 / 176.7.
//
// Per matrix (block of two warpgroups, persistent over b = blockIdx.x, + gridDim.x, ...):
//   1. the operands, each one contiguous range, arrive by 16-byte cp.async.cg in a flat shared buffer;
//   2. the block moves them in 8-byte units into 128-byte-swizzled tiles [64-column block][128 rows][128 bytes]
//      (common/wgmma.cuh's layouts: the stored rows of each operand are the tile rows, 64 stored columns per row;
//      K-major where the stored columns are k, MN-major, transposed by the instruction, where they are m or n);
//   3. the next matrix's copy is issued; warpgroup w computes output rows 64w..64w+63, all 128 columns, over
//      ceil(k/16) m64n128k16 steps;
//   4. C is staged flat over A's tile (4-byte column pairs from the accumulators) and written as 16-byte chunks, whole
//      sectors (the 4-byte pairs straight to global memory write half sectors: 63.6 against 46.7 us at 2048 100^3);
//      A's k padding is zeroed again before the next matrix's moves.
// The tiles are zeroed once: the moves write data positions only, so the k padding (and every row or column past m, n,
// which only reaches outputs that are never stored) stays zero.
// Needs: stored column counts of A and B and n % 4 == 0; m·k, k·n and m·n % 8 == 0 (every operand a 16-byte multiple);
// A, B, C 16-byte aligned; B per matrix. Shared memory: 1024 (alignment) + 2 · 32 KiB tiles + 2 · (m·k + k·n) bytes.
#include "gapfill_types.cuh"
#include "bmm_mma.cuh"
#include "grouped_gemm_mma.cuh"  // cp.async commit and wait
#include "wgmma.cuh"

namespace gapfill_bmm_wg {
using namespace gapfill;

// n16 16-byte chunks from g to s (both 16-byte aligned), thread t of step.
__device__ __forceinline__ void copy_flat16(void* s, const void* __restrict__ g, int n16, int t, int step) {
    const char* src = reinterpret_cast<const char*>(g);
    char* dst = reinterpret_cast<char*>(s);
    for (int i = t; i < n16; i += step) cp_async16(dst + 16 * i, src + 16 * i);
}

enum : int {
    TILE = 2 * 128 * 128,  // bytes per operand tile: two 64-column blocks of 128 rows
    BLK = 128 * 128        // bytes per 64-column block
};

// Flat shared [rows][cols] -> swizzled tile, 8-byte units (cols % 4 == 0); the walk tracks (row, 8-byte unit).
template <typename T>
__device__ __forceinline__ void to_tile(unsigned char* tile, const T* f, int rows, int cols, int t, int step) {
    const int upr = cols / 4, total = rows * upr;
    int r = t / upr, u = t - (t / upr) * upr;
    const int qr = step / upr, qu = step - (step / upr) * upr;
    const T* src = f + t * 4;
    for (int i = t; i < total; i += step) {
        const int c = u * 4;
        const int off = (c >> 6) * BLK + r * 128 + ((((c >> 3) & 7) ^ (r & 7)) << 4) + (((c >> 2) & 1) << 3);
        *reinterpret_cast<uint2*>(tile + off) = *reinterpret_cast<const uint2*>(src);
        src += step * 4;
        u += qu;
        r += qr;
        if (u >= upr) { u -= upr; ++r; }
    }
}

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void bmm_wg(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int batch, int m, int n, int k) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const uint32_t raw = smem_addr(smem_raw);
    unsigned char* tiles = smem_raw + (((raw + 1023u) & ~1023u) - raw);
    unsigned char* tA = tiles;
    unsigned char* tB = tiles + TILE;
    T* flat = reinterpret_cast<T*>(tiles + 2 * TILE);
    const int tid = threadIdx.x, wg = tid >> 7, lane = tid & 31, w4 = (tid >> 5) & 3;
    const int mk = m * k, kn = k * n;
    const int ar = TA ? k : m, ac = TA ? m : k, br = TB ? n : k, bc = TB ? k : n;
    for (int i = tid; i < 2 * TILE / 16; i += blockDim.x) reinterpret_cast<uint4*>(tiles)[i] = make_uint4(0, 0, 0, 0);
    int b = blockIdx.x;
    if (b >= batch) return;
    auto load = [&](int bb) {
        copy_flat16(flat, A + (size_t)bb * mk, mk / 8, tid, blockDim.x);
        copy_flat16(flat + mk, B + (size_t)bb * kn, kn / 8, tid, blockDim.x);
    };
    load(b);
    gg::cp_async_commit();
    const int ksteps = (k + 15) / 16;
    const uint32_t a_u32 = smem_addr(tA), b_u32 = smem_addr(tB);
    const bool active = wg * 64 < m;
    const int kpad = ksteps * 16;
    bool first = true;
    for (; b < batch; b += gridDim.x) {
        gg::cp_async_wait<0>();
        __syncthreads();  // matrix b's flat copy landed; the tiles are free (every warpgroup waited for its wgmma)
        if (!first) {  // the previous C was staged over A's tile: zero its k padding again
            if (!TA) {  // K-major: columns k .. kpad - 1 of rows 0 .. m - 1, 8-byte units
                const int pu = (kpad - k) / 4;
                for (int i = tid; i < m * pu; i += blockDim.x) {
                    const int r = i / pu, c = k + (i - r * pu) * 4;
                    *reinterpret_cast<uint2*>(tA + (c >> 6) * BLK + r * 128 + ((((c >> 3) & 7) ^ (r & 7)) << 4) + (((c >> 2) & 1) << 3)) = make_uint2(0, 0);
                }
            } else {  // MN-major: rows k .. kpad - 1, columns 0 .. m - 1
                const int upr = m / 4;
                for (int i = tid; i < (kpad - k) * upr; i += blockDim.x) {
                    const int r = k + i / upr, c = (i - (i / upr) * upr) * 4;
                    *reinterpret_cast<uint2*>(tA + (c >> 6) * BLK + r * 128 + ((((c >> 3) & 7) ^ (r & 7)) << 4) + (((c >> 2) & 1) << 3)) = make_uint2(0, 0);
                }
            }
        }
        first = false;
        to_tile(tA, flat, ar, ac, tid, blockDim.x);
        to_tile(tB, flat + mk, br, bc, tid, blockDim.x);
        gg::fence_proxy_async_smem();
        __syncthreads();  // tiles ready for the async proxy; the flat buffer is free
        const int nb = b + gridDim.x;
        if (nb < batch) load(nb);
        gg::cp_async_commit();
        float d[64];
#pragma unroll
        for (int e = 0; e < 64; ++e) d[e] = 0.f;
        if (active) {
#pragma unroll
            for (int e = 0; e < 64; ++e) gg::wgmma_pin(d[e]);
            gg::wgmma_fence();
#pragma unroll
            for (int j = 0; j < 8; ++j) {  // k <= 128
                if (j >= ksteps) break;
                const uint64_t da = TA ? gg::wgmma_desc(a_u32 + wg * BLK + j * 2048, BLK, 1024)
                                       : gg::wgmma_desc(a_u32 + (j >> 2) * BLK + wg * (64 * 128) + (j & 3) * 32, 16, 1024);
                const uint64_t db = TB ? gg::wgmma_desc(b_u32 + (j >> 2) * BLK + (j & 3) * 32, 16, 1024)
                                       : gg::wgmma_desc(b_u32 + j * 2048, BLK, 1024);
                gg::wgmma_n128<T, TB ? 0 : 1, TA ? 1 : 0>(d, da, db);
            }
            gg::wgmma_commit();
#pragma unroll
            for (int e = 0; e < 64; ++e) gg::wgmma_pin(d[e]);
            gg::wgmma_wait<0>();
#pragma unroll
            for (int e = 0; e < 64; ++e) gg::wgmma_pin(d[e]);
        }
        // C staged flat over A's tile (every warpgroup's wgmma has read it), then written as 16-byte chunks
        const int g = lane >> 2, q = lane & 3;
        T* cs = reinterpret_cast<T*>(tA);
        __syncthreads();
        if (active) {
#pragma unroll
            for (int hr = 0; hr < 2; ++hr) {
                const int r = wg * 64 + w4 * 16 + g + hr * 8;
                if (r >= m) continue;
#pragma unroll
                for (int i = 0; i < 16; ++i) {
                    const int col = i * 8 + q * 2;
                    if (col < n) *reinterpret_cast<uint32_t*>(cs + r * n + col) = pack2<T>(d[4 * i + 2 * hr], d[4 * i + 2 * hr + 1]);
                }
            }
        }
        __syncthreads();  // the flat C is complete
        const uint4* src = reinterpret_cast<const uint4*>(cs);
        uint4* dst = reinterpret_cast<uint4*>(C + (size_t)b * m * n);
        for (int i = tid; i < m * n / 8; i += blockDim.x) dst[i] = src[i];
    }
    gg::cp_async_wait<0>();
#else
    (void)A; (void)B; (void)C; (void)batch; (void)m; (void)n; (void)k;
    __trap();
#endif
}

}  // namespace gapfill_bmm_wg

// Entry points: bmm_wg_<dtype>_<a><b>. Block: 256 threads (two warpgroups); grid: persistent, at most batch blocks;
// dynamic shared memory as in the header.
#define GAPFILL_BMM_WG(NAME, T, TA, TB)                                                                                  \
    extern "C" __global__ void __launch_bounds__(256, 2) NAME(const T* A, const T* B, T* C, int batch, int m, int n, int k) { \
        gapfill_bmm_wg::bmm_wg<T, TA, TB>(A, B, C, batch, m, n, k);                                                      \
    }
GAPFILL_BMM_WG(bmm_wg_f16_nn, __half, false, false)
GAPFILL_BMM_WG(bmm_wg_f16_nt, __half, false, true)
GAPFILL_BMM_WG(bmm_wg_f16_tn, __half, true, false)
GAPFILL_BMM_WG(bmm_wg_f16_tt, __half, true, true)
GAPFILL_BMM_WG(bmm_wg_bf16_nn, __nv_bfloat16, false, false)
GAPFILL_BMM_WG(bmm_wg_bf16_nt, __nv_bfloat16, false, true)
GAPFILL_BMM_WG(bmm_wg_bf16_tn, __nv_bfloat16, true, false)
GAPFILL_BMM_WG(bmm_wg_bf16_tt, __nv_bfloat16, true, true)
