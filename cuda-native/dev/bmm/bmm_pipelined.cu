// EXPERIMENT (not shipped, not yet run on a GPU): a persistent, double-buffered variant of
// bmm_small's tensor-core path, for the regime where bmm_small loses to cuBLAS (F16/BF16, 48^3..128^3
// at batch >= 2048, 58-78 % of the floor at 71656b2).
//
// Why: in bmm_small every block loads its matrices, waits, computes and stores, and a wave of blocks
// does all of that in lock-step, so the memory system idles during the math and the stores. Here a
// block stays resident and walks the groups g = blockIdx.x, + gridDim.x, ...; while it computes group
// g from one shared-memory stage, cp.async fills the other stage with group g + gridDim.x.
// With stages == 1 (operands too large for two stages) it degrades to load/compute per group.
//
// Reuses bmm_small.cu's loader, SmemOperand and mma_tile (include it first). Entry points:
// bmm_pipe_f16_nn, bmm_pipe_bf16_nn (A [batch,m,k], B [batch,k,n]). Launch: grid = min(groups,
// resident blocks), dynamic smem = stages * (mats * A-slot + mats * B-slot) bytes.
#pragma once

namespace {

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait_group() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void pipe_load_group(T* stage, const T* A, const T* B, const SmemOperand<T>& a,
                                                const SmemOperand<T>& bo, int g, int mats, int batch, int m, int n, int k) {
    T* sA = stage;                              // [mats][a.rows_p][a.stride]
    T* sB = stage + (size_t)mats * a.elements();  // [mats][bo.rows_p][bo.stride]
    load_operand(sA, A, (long long)m * k, g * mats, mats, batch, a);
    load_operand(sB, B, (long long)k * n, g * mats, mats, batch, bo);
}

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void pipe_compute_group(const T* stage, T* __restrict__ C, const SmemOperand<T>& a,
                                                   const SmemOperand<T>& bo, int g, int mats, int batch, int m, int n, int k) {
    const T* sA = stage;
    const T* sB = stage + (size_t)mats * a.elements();
    const int warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5, lane = threadIdx.x & 31;
    const int mtiles = round_up(m, 16) / 16, ntiles = round_up(n, 16) / 16;
    const int per_mat = mtiles * ntiles;
    const bool pairs = (n % 2 == 0) && ((reinterpret_cast<uintptr_t>(C) & 3) == 0);
    const int b0 = g * mats;
    for (int u = warp; u < mats * per_mat; u += nwarps) {
        const int j = u / per_mat, mt = (u % per_mat) / ntiles, nt = u % ntiles;
        const int b = b0 + j;
        if (b >= batch) break;
        float acc[2][4] = {};
        mma_tile<T, TA, TB>(sA + (size_t)j * a.elements(), a, sB + (size_t)j * bo.elements(), bo, mt, nt, k, acc);
        T* Cb = C + (size_t)b * m * n;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int col = nt * 16 + h * 8 + 2 * (lane & 3);
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int row = mt * 16 + (lane >> 2) + half * 8;
                if (row >= m) continue;
                T* p = Cb + (size_t)row * n + col;
                const float x = acc[h][2 * half], y = acc[h][2 * half + 1];
                if (pairs && col + 1 < n) {
                    store_pair<T>(p, x, y);
                } else {
                    if (col < n) p[0] = from_float<T>(x);
                    if (col + 1 < n) p[1] = from_float<T>(y);
                }
            }
        }
    }
}

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void bmm_pipe_mma(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int batch,
                                             int m, int n, int k, int mats, int stages) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const SmemOperand<T> a(TA ? k : m, TA ? m : k);
    const SmemOperand<T> bo(TB ? n : k, TB ? k : n);
    const size_t stage_elems = (size_t)mats * (a.elements() + bo.elements());  // multiple of 8 elements
    T* stage0 = reinterpret_cast<T*>(smem_raw);
    T* stage1 = stage0 + stage_elems;
    const int groups = (batch + mats - 1) / mats;
    int g = blockIdx.x;
    if (stages == 2 && g < groups) {
        pipe_load_group<T, TA, TB>(stage0, A, B, a, bo, g, mats, batch, m, n, k);
        cp_async_commit();
    }
    for (int i = 0; g < groups; g += gridDim.x, ++i) {
        T* cur = (stages == 2 && (i & 1)) ? stage1 : stage0;
        if (stages == 2) {
            const int next = g + gridDim.x;
            if (next < groups) pipe_load_group<T, TA, TB>(cur == stage0 ? stage1 : stage0, A, B, a, bo, next, mats, batch, m, n, k);
            cp_async_commit();        // possibly empty: keeps "all but the newest group" meaning the current stage
            cp_async_wait_group<1>();
        } else {
            pipe_load_group<T, TA, TB>(cur, A, B, a, bo, g, mats, batch, m, n, k);
            cp_async_commit();
            cp_async_wait_group<0>();
        }
        __syncthreads();  // every thread's copies into `cur` are visible
        pipe_compute_group<T, TA, TB>(cur, C, a, bo, g, mats, batch, m, n, k);
        __syncthreads();  // `cur` is free to be refilled by the next iteration's prefetch
    }
}

}  // namespace

extern "C" __global__ void bmm_pipe_f16_nn(const __half* A, const __half* B, __half* C, int batch, int m, int n, int k, int mats,
                                           int stages) {
    bmm_pipe_mma<__half, false, false>(A, B, C, batch, m, n, k, mats, stages);
}
extern "C" __global__ void bmm_pipe_bf16_nn(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int batch, int m,
                                            int n, int k, int mats, int stages) {
    bmm_pipe_mma<__nv_bfloat16, false, false>(A, B, C, batch, m, n, k, mats, stages);
}
