// Batched matmul, streaming version: C[b] = op(A[b]) · op(B[b]), m, n, k <= 128, batch of many.
//
// Regime: the same problems as bmm_small.cu, but written for the point where the batch is large
// enough that the problem is bound by device memory (each matrix is read once): persistent blocks
// that keep several groups of matrices in flight through a cp.async ring of shared-memory stages.
// Floor: max(batch·(m·k + k·n + m·n)·sizeof(T) / copy bandwidth, 2·batch·m·n·k / math rate)
//   (shared B counts k·n once).
// Limits: m, n, k <= 128; batch·m·k, batch·k·n, batch·m·n < 2^31 elements; 2 <= stages <= 6;
//   dynamic shared memory = stages·stage + mats·C-slot (+ one B slot when B is shared), as computed by
//   BmmHeuristics.streamPlan (mirrored in cuda-native/dev/bmm/bench_bmm.cu).
//
// Design. Block i walks the groups g = i, i + grid, ... of `mats` consecutive matrices. A ring of
// `stages` shared-memory stages holds the A and B operands of the groups in flight (the stored
// layout, rows padded to the MMA tile with an odd number of 16-byte chunks per row, so ldmatrix is
// conflict-free). The loads of group g + (stages-1)·grid are issued (cp.async, 16/8/4 bytes as the
// row length and alignment allow; 2-byte rows are copied synchronously) before group g is computed,
// so a block always has stages-1 groups on the way. Per group: wait, barrier, prefetch, compute into
// a C staging area in shared memory, barrier, copy C out with the widest aligned vector (16 bytes
// when a row is a multiple of 16 bytes). The k padding of every stage is zeroed once at the start:
// the loader writes data positions only, and nothing else writes into the stages.
//   F16/BF16: each warp takes 32x32 output tiles (16x16 sub-tiles past m or n are skipped), four
//     ldmatrix.x4 per k16 step feed eight mma.sync.m16n8k16 (fp32 accumulation).
//   F32: each thread takes 4x4 tiles, k in order 0..k-1 with fmaf for every element, so the result is
//     bit for bit the sequential fmaf sum (as bmm_small.cu).
#include "gapfill_types.cuh"
#include "bmm_mma.cuh"
#include "bmm_ffma.cuh"

namespace gapfill_bmm_stream {
using namespace gapfill;

__host__ __device__ constexpr int rup(int x, int m) { return (x + m - 1) / m * m; }

// Shared-memory slot of one operand stored [rows][cols]: rows and cols padded to P (16 for tensor
// cores, 4 for FFMA), row stride an odd number of 16-byte chunks.
template <typename T> struct Geo {
    static constexpr int P = sizeof(T) == 2 ? 16 : 4;
    static constexpr int V = 16 / sizeof(T);
    int rows, cols, rows_p, cols_p, stride;
    __device__ __forceinline__ Geo(int r, int c) : rows(r), cols(c) {
        rows_p = rup(r, P);
        cols_p = rup(c, P);
        stride = cols_p + (((cols_p / V) % 2 == 0) ? V : 0);
    }
    __device__ __forceinline__ int elems() const { return rows_p * stride; }
};

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
// Waits until at most `pending` committed groups are still in flight (0 <= pending <= 4).
__device__ __forceinline__ void cp_async_wait_pending(int pending) {
    switch (pending) {
        case 0: cp_async_wait<0>(); break;
        case 1: cp_async_wait<1>(); break;
        case 2: cp_async_wait<2>(); break;
        case 3: cp_async_wait<3>(); break;
        default: cp_async_wait<4>(); break;
    }
}

template <int W> __device__ __forceinline__ void cp_async_w(void* dst, const void* src);
template <> __device__ __forceinline__ void cp_async_w<16>(void* dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src) : "memory");
}
template <> __device__ __forceinline__ void cp_async_w<8>(void* dst, const void* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(smem_addr(dst)), "l"(src) : "memory");
}
template <> __device__ __forceinline__ void cp_async_w<4>(void* dst, const void* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_addr(dst)), "l"(src) : "memory");
}

// Widest access (16, 8, 4 bytes, else sizeof(T)) that divides a row of `cols` elements and the base address.
template <typename T> __device__ __forceinline__ int access_width(const void* p, int cols) {
    const int bytes = cols * (int)sizeof(T);
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    int w = 16;
    while (w > (int)sizeof(T) && ((bytes % w) != 0 || (a % w) != 0)) w >>= 1;
    return w;
}

// Copies nm consecutive matrices (contiguous in global memory: nm·rows·cols elements from g) into
// slots `slot` elements apart, data positions only, W bytes per access (cp.async for W >= 4).
template <typename T, int W>
__device__ __forceinline__ void load_rows(T* s, const T* __restrict__ g, int nm, const Geo<T>& o, int slot) {
    constexpr int E = W / (int)sizeof(T);
    const int cpr = o.cols / E;
    const int total = nm * o.rows * cpr;
    for (int i = threadIdx.x; i < total; i += blockDim.x) {
        const int R = i / cpr, c = i - R * cpr;
        const int j = R / o.rows, r = R - j * o.rows;
        T* dst = s + j * slot + r * o.stride + c * E;
        const T* src = g + (size_t)i * E;
        if constexpr (W >= 4) {
            cp_async_w<W>(dst, src);
        } else {
            *dst = *src;
        }
    }
}
template <typename T>
__device__ __forceinline__ void load_any(T* s, const T* g, int nm, const Geo<T>& o, int slot, int w) {
    if (w == 16) load_rows<T, 16>(s, g, nm, o, slot);
    else if (w == 8) load_rows<T, 8>(s, g, nm, o, slot);
    else if (w == 4) load_rows<T, 4>(s, g, nm, o, slot);
    else if constexpr (sizeof(T) == 2) load_rows<T, 2>(s, g, nm, o, slot);
}

// Zeroes the k padding of nm slots: columns [cols, cols_p) of rows < rows when k runs along the
// stored columns, rows [rows, rows_p) (all cols_p columns) when it runs along the stored rows.
template <typename T>
__device__ __forceinline__ void zero_kpad(T* s, int nm, const Geo<T>& o, int slot, bool k_in_cols) {
    if (k_in_cols) {
        const int pad = o.cols_p - o.cols;
        const int total = nm * o.rows * pad;
        for (int i = threadIdx.x; i < total; i += blockDim.x) {
            const int R = i / pad, c = o.cols + (i - R * pad);
            const int j = R / o.rows, r = R - j * o.rows;
            s[j * slot + r * o.stride + c] = from_float<T>(0.f);
        }
    } else {
        const int prow = o.rows_p - o.rows;
        const int cpr = o.cols_p / Geo<T>::V;
        const int total = nm * prow * cpr;
        for (int i = threadIdx.x; i < total; i += blockDim.x) {
            const int R = i / cpr, c = i - R * cpr;
            const int j = R / prow, r = o.rows + (R - j * prow);
            *reinterpret_cast<uint4*>(s + j * slot + r * o.stride + c * Geo<T>::V) = make_uint4(0, 0, 0, 0);
        }
    }
}

// Copies nm matrices of C [rows][cols] from the staging slots to global memory (contiguous), W bytes per access.
template <typename T, int W> struct Chunk;
template <typename T> struct Chunk<T, 16> { using type = uint4; };
template <typename T> struct Chunk<T, 8> { using type = uint2; };
template <typename T> struct Chunk<T, 4> { using type = uint32_t; };
template <typename T> struct Chunk<T, 2> { using type = unsigned short; };

template <typename T, int W>
__device__ __forceinline__ void store_rows(T* __restrict__ g, const T* s, int nm, const Geo<T>& o, int slot) {
    constexpr int E = W / (int)sizeof(T);
    using C = typename Chunk<T, W>::type;
    const int cpr = o.cols / E;
    const int total = nm * o.rows * cpr;
    for (int i = threadIdx.x; i < total; i += blockDim.x) {
        const int R = i / cpr, c = i - R * cpr;
        const int j = R / o.rows, r = R - j * o.rows;
        *reinterpret_cast<C*>(g + (size_t)i * E) = *reinterpret_cast<const C*>(s + j * slot + r * o.stride + c * E);
    }
}
template <typename T>
__device__ __forceinline__ void store_any(T* g, const T* s, int nm, const Geo<T>& o, int slot, int w) {
    if (w == 16) store_rows<T, 16>(g, s, nm, o, slot);
    else if (w == 8) store_rows<T, 8>(g, s, nm, o, slot);
    else if (w == 4) store_rows<T, 4>(g, s, nm, o, slot);
    else if constexpr (sizeof(T) == 2) store_rows<T, 2>(g, s, nm, o, slot);
}


// ---------------------------------------------------------------- tensor cores (F16 / BF16)

// One group: every warp takes 32x32 output tiles (sub-tiles 16x16; those past the padded m or n are
// skipped, warp-uniformly) and writes them, rounded, to the C staging slots.
template <typename T, bool TA, bool TB>
__device__ __forceinline__ void mma_group(const T* sA, int aslot, const Geo<T>& ga, const T* sB, int bslot, const Geo<T>& gb,
                                          T* sC, int cslot, const Geo<T>& gc, int nm, int m, int n, int k) {
    const int warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5, lane = threadIdx.x & 31;
    const int mtiles = rup(m, 16) / 16, ntiles = rup(n, 16) / 16;
    const int mt2n = (mtiles + 1) / 2, nt2n = (ntiles + 1) / 2;
    const int per_mat = mt2n * nt2n;
    const int ksteps = rup(k, 16) / 16;
    for (int u = warp; u < nm * per_mat; u += nwarps) {  // warp-uniform
        const int j = u / per_mat, t = u - j * per_mat;
        const int mt0 = (t / nt2n) * 2, nt0 = (t % nt2n) * 2;
        const bool m1 = mt0 + 1 < mtiles, n1 = nt0 + 1 < ntiles;
        const T* a = sA + j * aslot;
        const T* b = sB + j * bslot;
        float acc[2][4][4];
        mma_tile32<T, TA, TB>(a, ga.stride, b, gb.stride, mt0, nt0, m1, n1, ksteps, acc);
        // acc[i][h][0..1]: row (mt0+i)*16 + lane/4, cols nt0*16 + h*8 + 2*(lane%4) + {0,1}; [2..3]: row + 8.
        T* c = sC + j * cslot;
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            if (i == 1 && !m1) break;
#pragma unroll
            for (int h = 0; h < 4; ++h) {
                if (h >= 2 && !n1) break;
                const int row = (mt0 + i) * 16 + (lane >> 2);
                const int col = nt0 * 16 + h * 8 + 2 * (lane & 3);
                *reinterpret_cast<uint32_t*>(c + row * gc.stride + col) = pack2<T>(acc[i][h][0], acc[i][h][1]);
                *reinterpret_cast<uint32_t*>(c + (row + 8) * gc.stride + col) = pack2<T>(acc[i][h][2], acc[i][h][3]);
            }
        }
    }
}

// ---------------------------------------------------------------- FFMA (F32, exact order)
// One group: every thread takes 4x4 output tiles, k in order (the padded k values are loaded but
// never multiplied in), and writes them to the C staging slots.
template <bool TA, bool TB>
__device__ __forceinline__ void ffma_group(const float* sA, int aslot, const Geo<float>& ga, const float* sB, int bslot,
                                           const Geo<float>& gb, float* sC, int cslot, const Geo<float>& gc, int nm, int m, int n,
                                           int k) {
    const int mt4 = rup(m, 4) / 4, nt4 = rup(n, 4) / 4;
    const int per_mat = mt4 * nt4;
    for (int u = threadIdx.x; u < nm * per_mat; u += blockDim.x) {
        const int j = u / per_mat, t = u - j * per_mat;
        const int r0 = (t / nt4) * 4, c0 = (t % nt4) * 4;
        const float* a = sA + j * aslot;
        const float* b = sB + j * bslot;
        float acc[4][4];
        ffma_tile4x4<TA, TB>(a, ga.stride, b, gb.stride, r0, c0, k, acc);
        float* c = sC + j * cslot;
#pragma unroll
        for (int i = 0; i < 4; ++i)
            *reinterpret_cast<float4*>(c + (r0 + i) * gc.stride + c0) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    }
}

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void bmm_stream(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int batch, int m,
                                           int n, int k, int mats, int stages, int b_shared) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const Geo<T> ga(TA ? k : m, TA ? m : k), gb(TB ? n : k, TB ? k : n), gc(m, n);
    const int aslot = ga.elems(), bslot = gb.elems(), cslot = gc.elems();
    const int stage = mats * (aslot + (b_shared ? 0 : bslot));
    T* const s0 = reinterpret_cast<T*>(smem_raw);
    T* const sC = s0 + stages * stage;
    T* const sBs = sC + mats * cslot;  // the shared B (b_shared only)
    const int groups = (batch + mats - 1) / mats;
    if ((int)blockIdx.x >= groups) return;  // whole block: no barrier is skipped by part of it
    const int wa = access_width<T>(A, ga.cols), wb = access_width<T>(B, gb.cols), wc = access_width<T>(C, gc.cols);
    if constexpr (sizeof(T) == 2) {  // MMA k16 steps read the k padding: zero it once, nothing else writes there
        for (int s = 0; s < stages; ++s) {
            zero_kpad(s0 + s * stage, mats, ga, aslot, !TA);
            if (!b_shared) zero_kpad(s0 + s * stage + mats * aslot, mats, gb, bslot, TB);
        }
        if (b_shared) zero_kpad(sBs, 1, gb, bslot, TB);
    }
    if (b_shared) load_any(sBs, B, 1, gb, bslot, wb);  // completes with the first group
    auto load_group = [&](int s, int g) {
        const int b0 = g * mats, nm = min(mats, batch - b0);
        T* st = s0 + s * stage;
        load_any(st, A + (size_t)b0 * m * k, nm, ga, aslot, wa);
        if (!b_shared) load_any(st + mats * aslot, B + (size_t)b0 * k * n, nm, gb, bslot, wb);
    };
    for (int s = 0; s < stages - 1; ++s) {
        const int g = blockIdx.x + s * gridDim.x;
        if (g < groups) load_group(s, g);
        cp_async_commit();
    }
    int s = 0;  // stage of the current group
    for (int g = blockIdx.x; g < groups; g += gridDim.x) {
        cp_async_wait_pending(stages - 2);  // this group's copies (by this thread) have landed
        __syncthreads();                    // ... everyone's; and the previous group's C copy-out is done
        {
            const int gn = g + (stages - 1) * gridDim.x;
            const int sn = s == 0 ? stages - 1 : s - 1;  // the stage computed in the previous iteration
            if (gn < groups) load_group(sn, gn);
            cp_async_commit();
        }
        const int b0 = g * mats, nm = min(mats, batch - b0);
        const T* st = s0 + s * stage;
        const T* sA = st;
        const T* sB = b_shared ? sBs : st + mats * aslot;
        const int bs = b_shared ? 0 : bslot;
        if constexpr (sizeof(T) == 2) {
            mma_group<T, TA, TB>(sA, aslot, ga, sB, bs, gb, sC, cslot, gc, nm, m, n, k);
        } else {
            ffma_group<TA, TB>(sA, aslot, ga, sB, bs, gb, sC, cslot, gc, nm, m, n, k);
        }
        __syncthreads();  // C staged
        store_any(C + (size_t)b0 * m * n, sC, nm, gc, cslot, wc);
        s = s + 1 == stages ? 0 : s + 1;
    }
    cp_async_wait<0>();  // no copy may be outstanding when the block exits
}

}  // namespace gapfill_bmm_stream

// Entry points: bmm_stream_<dtype>_<a><b>, a/b = n (as stored) or t (transposed). Grid: at most
// ceil(batch / mats) blocks (persistent: block i takes groups i, i + grid, ...), any multiple of 32
// threads up to 256; dynamic shared memory from BmmHeuristics.streamPlan.
#define GAPFILL_BMM_STREAM(NAME, T, TA, TB)                                                                          \
    extern "C" __global__ void __launch_bounds__(256, 2) NAME(const T* A, const T* B, T* C, int batch, int m, int n, \
                                                              int k, int mats, int stages, int b_shared) {           \
        gapfill_bmm_stream::bmm_stream<T, TA, TB>(A, B, C, batch, m, n, k, mats, stages, b_shared);                   \
    }

GAPFILL_BMM_STREAM(bmm_stream_f16_nn, __half, false, false)
GAPFILL_BMM_STREAM(bmm_stream_f16_nt, __half, false, true)
GAPFILL_BMM_STREAM(bmm_stream_f16_tn, __half, true, false)
GAPFILL_BMM_STREAM(bmm_stream_f16_tt, __half, true, true)
GAPFILL_BMM_STREAM(bmm_stream_bf16_nn, __nv_bfloat16, false, false)
GAPFILL_BMM_STREAM(bmm_stream_bf16_nt, __nv_bfloat16, false, true)
GAPFILL_BMM_STREAM(bmm_stream_bf16_tn, __nv_bfloat16, true, false)
GAPFILL_BMM_STREAM(bmm_stream_bf16_tt, __nv_bfloat16, true, true)
GAPFILL_BMM_STREAM(bmm_stream_f32_nn, float, false, false)
GAPFILL_BMM_STREAM(bmm_stream_f32_nt, float, false, true)
GAPFILL_BMM_STREAM(bmm_stream_f32_tn, float, true, false)
GAPFILL_BMM_STREAM(bmm_stream_f32_tt, float, true, true)
