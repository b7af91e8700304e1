// Batched matmul for the tiniest matrices, m, n, k <= 16: the operands go from global memory straight into
// registers (mma.sync fragments for F16/BF16; FFMA operands for F32, further down); no shared memory, no barrier.
// bmm_frag32 (further down) takes the same path to F16/BF16 matrices up to 32 with one to four warps per matrix.
// F32 (bmm_frag_f32_nn_*; neither operand transposed): H100 harness cuda-native/dev/bmm/results-h100-frag32.txt,
//   cuBLAS / bmm_small / frag us: 2048 8^3 10.24 / 5.82 / 4.38, 2048 16^3 11.14 / 7.14 / 5.89, 8192 8^3 35.81 / 7.36
//   / 5.76 (two per warp), 8192 16^3 25.06 / 14.18 / 12.74; exact in-order fmaf, bit for bit bmm_small's sum.
//
// Regime: bmm_small stages each matrix into 16x16 shared-memory tiles, so at 8^3 three of every four
// 16-byte chunks it writes are zero padding and each warp load instruction fetches 128 bytes; the H100
// sweep at 8828290 has 8^3 batch 8192 at 9.2 us against a 4.9 us plain read of its bytes (16^3 batch
// 2048, the same 3.1 MB, 5.8 us). Chosen by BmmHeuristics.useFrag: F16/BF16, m, n, k <= 16, every
// stored row of even length (odd rows take element loads and lose to bmm_small: 9x15x7 batch 8192
// 10.05 against 9.73 us).
// Floor: batch·(m·k + k·n + m·n)·sizeof(T) / copy bandwidth (shared B counts k·n once); the math is
//   negligible at these sizes.
// Measured (H100 80GB HBM3; harness cuda-native/dev/bmm/results-h100-dcc8ffc-frag.txt, Java sweep
//   docs/benchmarks/h100/bmm.json at 6d84317, cuBLAS strided batched interleaved, L2 flushed): F16 batch
//   8192 8^3 5.54 us = 5.75x cuBLAS (bmm_small 9.34 in the harness), 16^3 8.77 us = 3.55x; batch 2048
//   8^3 4.26 us = 2.89x, 16^3 4.86 us = 2.56x; batch 512 8^3 4.06 us = 1.89x. BF16 the same within 0.1 us.
// Limits: m, n, k <= 16; batch < 2^31 (offsets are 64-bit); sm_80+ (mma.sync m16n8k16 with BF16, movmatrix).
//
// Design. One warp per matrix, MPW consecutive matrices per warp, all of a warp's loads issued before
// its first mma. Lane (g = lane / 4, t = lane % 4) of an 8x8 block of a row-major stored operand
// loads the pair (row g, columns 2t and 2t + 1) as one 32-bit load: a warp reads the block's 8 rows
// with one instruction (128 contiguous bytes when the block is a whole 8x8 matrix). That pair is the
// row-major A fragment of mma.m16n8k16 directly; where the fragment needs the other major (B stored
// [k][n], or A stored transposed) movmatrix.trans turns the block around in registers. Blocks past
// m, n or k are zero registers (warp-uniform), elements past the matrix edge are zero (per lane).
// C: lane stores (row g [+ 8], columns 2t, 2t + 1) of each 16x8 accumulator as one 32-bit store. NN shapes with
// n = 12 or 16 and B, C on 8 bytes take the _rows entry instead (bmm_frag_rows_body below; the same bits, fewer
// instructions).
// Odd row lengths or 2-byte-aligned views take element loads and stores in the same code.
// fp32 accumulation of k <= 16 products in the tensor core, one rounding to the output type.
#include "gapfill_types.cuh"
#include "bmm_mma.cuh"

using namespace gapfill;

namespace {

__device__ __forceinline__ uint32_t trans8x8(uint32_t x) {
    uint32_t y;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(y) : "r"(x));
    return y;
}

template <typename T> __device__ __forceinline__ uint32_t bits16(T v) {
    return static_cast<uint32_t>(*reinterpret_cast<const unsigned short*>(&v));
}

// Elements (r, c) and (r, c + 1) of a row-major rows x cols matrix M, packed low first; zero outside.
// vec: cols is even and M is 4-byte aligned, so (c even) the pair is one aligned 32-bit word.
template <typename T>
__device__ __forceinline__ uint32_t ld_pair(const T* __restrict__ M, int rows, int cols, int r, int c, bool vec) {
    if (r >= rows || c >= cols) return 0u;
    const T* p = M + (size_t)r * cols + c;
    if (vec) return __ldg(reinterpret_cast<const unsigned int*>(p));
    const uint32_t lo = bits16(p[0]);
    const uint32_t hi = c + 1 < cols ? bits16(p[1]) : 0u;
    return lo | (hi << 16);
}

template <typename T>
__device__ __forceinline__ void st_pair(T* __restrict__ M, int rows, int cols, int r, int c, float x, float y, bool vec) {
    if (r >= rows || c >= cols) return;
    T* p = M + (size_t)r * cols + c;
    if (vec) {
        *reinterpret_cast<uint32_t*>(p) = pack2<T>(x, y);
    } else {
        p[0] = from_float<T>(x);
        if (c + 1 < cols) p[1] = from_float<T>(y);
    }
}

// Raw loads of one matrix: A blocks (mb, kb) -> ra[mb + 2 kb], B blocks (kb, nb) -> rb[kb + 2 nb], in
// stored orientation (the transposes happen after all loads are in flight).
template <typename T, bool TA, bool TB>
__device__ __forceinline__ void load_raw(const T* __restrict__ A, const T* __restrict__ B, int m, int n, int k, bool va, bool vb,
                                         int g, int t, uint32_t (&ra)[4], uint32_t (&rb)[4]) {
#pragma unroll
    for (int kb = 0; kb < 2; ++kb) {
#pragma unroll
        for (int mb = 0; mb < 2; ++mb) {
            // !TA: A [m][k], pair (mb*8+g, kb*8+2t). TA: At [k][m], pair (kb*8+g, mb*8+2t), transposed later.
            ra[mb + 2 * kb] = !TA ? ld_pair(A, m, k, mb * 8 + g, kb * 8 + 2 * t, va) : ld_pair(A, k, m, kb * 8 + g, mb * 8 + 2 * t, va);
        }
#pragma unroll
        for (int nb = 0; nb < 2; ++nb) {
            // TB: Bt [n][k], pair (nb*8+g, kb*8+2t). !TB: B [k][n], pair (kb*8+g, nb*8+2t), transposed later.
            rb[kb + 2 * nb] = TB ? ld_pair(B, n, k, nb * 8 + g, kb * 8 + 2 * t, vb) : ld_pair(B, k, n, kb * 8 + g, nb * 8 + 2 * t, vb);
        }
    }
}

template <typename T, bool TA, bool TB, int MPW>
__device__ __forceinline__ void bmm_frag_body(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int batch, int m, int n,
                                              int k, int b_shared) {
    const int lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const long long warp = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const long long b0 = warp * MPW;
    if (b0 >= batch) return;  // warp-uniform
    const long long sa = (long long)m * k, sb = b_shared ? 0LL : (long long)k * n, sc = (long long)m * n;
    const bool va = ((TA ? m : k) % 2 == 0) && ((reinterpret_cast<uintptr_t>(A) & 3) == 0);
    const bool vb = ((TB ? k : n) % 2 == 0) && ((reinterpret_cast<uintptr_t>(B) & 3) == 0);
    const bool vc = (n % 2 == 0) && ((reinterpret_cast<uintptr_t>(C) & 3) == 0);
    const bool m1 = m > 8, n1 = n > 8;  // second row / column half (warp-uniform)

    uint32_t ra[MPW][4], rb[MPW][4];
#pragma unroll
    for (int i = 0; i < MPW; ++i) {
        const long long b = b0 + i;
        if (b < batch) {
            load_raw<T, TA, TB>(A + b * sa, B + b * sb, m, n, k, va, vb, g, t, ra[i], rb[i]);
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) ra[i][e] = rb[i][e] = 0u;
        }
    }
#pragma unroll
    for (int i = 0; i < MPW; ++i) {
        const long long b = b0 + i;
        if (b >= batch) break;  // warp-uniform
        uint32_t af[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) af[e] = TA ? trans8x8(ra[i][e]) : ra[i][e];
        T* Cb = C + b * sc;
#pragma unroll
        for (int nb = 0; nb < 2; ++nb) {
            if (nb == 1 && !n1) break;
            const uint32_t b0r = TB ? rb[i][2 * nb] : trans8x8(rb[i][2 * nb]);
            const uint32_t b1r = TB ? rb[i][2 * nb + 1] : trans8x8(rb[i][2 * nb + 1]);
            float acc[4] = {0.f, 0.f, 0.f, 0.f};
            MmaOp<T>::run(acc, af, b0r, b1r);
            st_pair<T>(Cb, m, n, g, nb * 8 + 2 * t, acc[0], acc[1], vc);
            if (m1) st_pair<T>(Cb, m, n, g + 8, nb * 8 + 2 * t, acc[2], acc[3], vc);
        }
    }
}

// ---------------------------------------------------------------- NN row chunks (bmm_frag and bmm_frag32, F16/BF16)
// Entries bmm_frag_<dtype>_nn_rows and bmm_frag32_<dtype>_nn_rows_w<W> (end of file), which the host launches instead of
// the NN pair-load entries where B and C allow it (BmmHeuristics.fragRows; entries of their own, so the
// pair-load kernels keep their code: one kernel holding both bodies ran 8^3 0.2-0.35 us slower at b428e5f): B and C move in row chunks of E = 4 or 8
// elements (8- or 16-byte loads and stores) instead of 32-bit pairs, so one warp instruction reads or writes whole
// contiguous rows. Lane (g, t) loads row k(g) of B, columns n0 + E·t .. + E - 1; register j of that chunk, taken over
// the warp, is an 8x8 matrix whose rows are 8 k's and whose columns are the n's {n0 + E·(c/2) + 2j + c%2}, and
// movmatrix.trans makes it the mma B fragment of an n8 tile with those columns. Only output columns are permuted:
// every output's products sit in the same k slots of the same mma steps as in the pair-load bodies above, so the two
// give the same bits (checked by the harness, cuda-native/dev/bmm/frag_ab.cu, "v1"), and the accumulators hold, per
// lane, C[row][n0 + E·t .. + E - 1]: one chunk store per row. A keeps the 32-bit pair loads.
// Measured (H100 80GB HBM3, harness cuda-native/dev/bmm/results-h100-11cae10-frag-ab.txt, L2 flushed, median of 61, us,
// pair loads -> row chunks; F16, BF16 within 0.1): 16^3 batch 512 4.48 -> 4.35, 2048 4.96 -> 4.83, 8192 8.74 -> 7.20;
// 32^3 batch 512 5.31 -> 4.99, 2048 8.19 -> 7.20, 8192 19.33 -> 16.58. At 8^3 the chunks lose (4.16 -> 4.32 at batch 512:
// half the lanes of a 16-column chunk plan idle), hence n > NW / 2 in fragRows.

// Elements (r, c .. c + E - 1) of a row-major rows x cols M, packed in pairs (low first); zero outside. The caller
// guarantees cols % E == 0 and M on 2E bytes (BmmHeuristics.fragRows), so a chunk is wholly in or wholly out: one aligned load.
template <typename T, int E>
__device__ __forceinline__ void ld_row_chunk(uint32_t (&o)[E / 2], const T* __restrict__ M, int rows, int cols, int r, int c) {
#pragma unroll
    for (int e = 0; e < E / 2; ++e) o[e] = 0u;
    if (r >= rows || c >= cols) return;
    const T* p = M + (size_t)r * cols + c;
    if constexpr (E == 8) {
        const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
        o[0] = v.x; o[1 % (E / 2)] = v.y; o[2 % (E / 2)] = v.z; o[3 % (E / 2)] = v.w;
    } else {
        const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
        o[0] = v.x; o[1 % (E / 2)] = v.y;
    }
}

template <typename T, int E>
__device__ __forceinline__ void st_row_chunk(T* __restrict__ M, int rows, int cols, int r, int c, const float (&v)[E]) {
    if (r >= rows || c >= cols) return;
    T* p = M + (size_t)r * cols + c;
    if constexpr (E == 8) {
        *reinterpret_cast<uint4*>(p) = make_uint4(pack2<T>(v[0], v[1]), pack2<T>(v[2], v[3 % E]), pack2<T>(v[4 % E], v[5 % E]),
                                                  pack2<T>(v[6 % E], v[7 % E]));
    } else {
        *reinterpret_cast<uint2*>(p) = make_uint2(pack2<T>(v[0], v[1]), pack2<T>(v[2], v[3]));
    }
}


// S: 16 (m, n, k <= 16) or 32. WM x WN warps per matrix (MT m16 tiles by NW columns each); MPW matrices per warp group.
template <typename T, int S, int WM, int WN, int MPW>
__device__ __forceinline__ void bmm_frag_rows_body(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int batch, int m,
                                                   int n, int k, int b_shared) {
    constexpr int KS = S / 16, MT = S / 16 / WM, NW = S / WN, E = NW / 4, NJ = E / 2;
    static_assert(MT >= 1 && MT * WM * 16 == S && NW * WN == S && (E == 4 || E == 8), "tiling");
    const int lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const long long warp = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const long long b0 = warp / (WM * WN) * MPW;
    if (b0 >= batch) return;  // warp-uniform
    const int sub = (int)(warp % (WM * WN));
    const int m0 = (sub / WN) * 16 * MT, n0 = (sub % WN) * NW;
    if (m0 >= m || n0 >= n) return;  // warp-uniform: none of C's elements are this warp's
    const bool va = k % 2 == 0 && (reinterpret_cast<uintptr_t>(A) & 3) == 0;
    const long long sa = (long long)m * k, sb = b_shared ? 0LL : (long long)k * n, sc = (long long)m * n;

    uint32_t ra[MPW][KS][MT][4];  // A fragments (a0: row g, low k half; a1: row g + 8; a2, a3: the high k half)
    uint32_t rb[MPW][KS][2][NJ];  // B row chunks by (k step, k half), stored orientation
#pragma unroll
    for (int i = 0; i < MPW; ++i) {
        const long long b = b0 + i;
        const bool bin = b < batch;  // warp-uniform
        const T* Ab = A + (bin ? b : b0) * sa;
        const T* Bb = B + (bin ? b : b0) * sb;
#pragma unroll
        for (int s = 0; s < KS; ++s) {
            const bool kin = bin && s * 16 < k;
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                const int r = m0 + mt * 16 + g;
                uint32_t* f = ra[i][s][mt];
                if (!kin || m0 + mt * 16 >= m) {
                    f[0] = f[1] = f[2] = f[3] = 0u;
                } else {
                    f[0] = ld_pair(Ab, m, k, r, 16 * s + 2 * t, va);
                    f[1] = ld_pair(Ab, m, k, r + 8, 16 * s + 2 * t, va);
                    f[2] = ld_pair(Ab, m, k, r, 16 * s + 8 + 2 * t, va);
                    f[3] = ld_pair(Ab, m, k, r + 8, 16 * s + 8 + 2 * t, va);
                }
            }
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                if (kin && 16 * s + 8 * h < k) {  // warp-uniform; lane (g, t) supplies row g of this half's 8x8 matrices
                    ld_row_chunk<T, E>(rb[i][s][h], Bb, k, n, 16 * s + 8 * h + g, n0 + E * t);
                } else {
#pragma unroll
                    for (int j = 0; j < NJ; ++j) rb[i][s][h][j] = 0u;
                }
            }
        }
    }
#pragma unroll
    for (int i = 0; i < MPW; ++i) {
        const long long b = b0 + i;
        if (b >= batch) break;  // warp-uniform
        float acc[MT][NJ][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int j = 0; j < NJ; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[mt][j][e] = 0.f;
#pragma unroll
        for (int s = 0; s < KS; ++s) {
            if (s * 16 >= k) break;  // warp-uniform
            uint32_t bf[NJ][2];
#pragma unroll
            for (int j = 0; j < NJ; ++j) {
                bf[j][0] = trans8x8(rb[i][s][0][j]);
                bf[j][1] = trans8x8(rb[i][s][1][j]);
            }
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                if (m0 + mt * 16 >= m) break;  // warp-uniform
#pragma unroll
                for (int j = 0; j < NJ; ++j) MmaOp<T>::run(acc[mt][j], ra[i][s][mt], bf[j][0], bf[j][1]);
            }
        }
        T* Cb = C + b * sc;
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
            if (m0 + mt * 16 >= m) break;  // warp-uniform
            const int r = m0 + mt * 16 + g;
            float v0[E], v1[E];
#pragma unroll
            for (int j = 0; j < NJ; ++j) {
                v0[2 * j] = acc[mt][j][0]; v0[2 * j + 1] = acc[mt][j][1];
                v1[2 * j] = acc[mt][j][2]; v1[2 * j + 1] = acc[mt][j][3];
            }
            st_row_chunk<T, E>(Cb, m, n, r, n0 + E * t, v0);
            st_row_chunk<T, E>(Cb, m, n, r + 8, n0 + E * t, v1);
        }
    }
}

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void bmm_frag(const T* A, const T* B, T* C, int batch, int m, int n, int k, int mpw, int b_shared) {
    if (mpw == 4) bmm_frag_body<T, TA, TB, 4>(A, B, C, batch, m, n, k, b_shared);
    else bmm_frag_body<T, TA, TB, 1>(A, B, C, batch, m, n, k, b_shared);
}

// ---------------------------------------------------------------- F32, exact in-order FFMA (no tensor cores)
// A [m][k] and B [k][n] as stored (F32 with a transposed operand takes bmm_small or the vendor). Two variants, S the
// largest m, n and k they take: S = 8 (R = 1 row, CT = 2 columns per lane) and S = 16 (R = 2, CT = 4). Lane (q = lane / 4,
// c = lane % 4) computes rows q (and q + 8) and columns c·CT .. c·CT + CT - 1: a warp covers S x S outputs. It reads
// its rows of A whole (float4 when k is a multiple of 4) and its CT columns of each of the k rows of B (one float2 or
// float4 per row; the eight lanes of a column group read the same bytes, so a B load instruction moves 32 or 64
// contiguous bytes), every load of all MPW matrices issued before the first FFMA. acc = fmaf(a[kk], b[kk], acc) for
// kk = 0, 1, ..., k-1 from acc = 0: bit for bit the sum bmm_small computes, so the CPU reference compares exactly.
__device__ __forceinline__ float ldg_or0(const float* p, bool in) { return in ? __ldg(p) : 0.f; }

template <int R, int CT, int S>
__device__ __forceinline__ void f32_load(const float* __restrict__ Ab, const float* __restrict__ Bb, int m, int n, int k, bool va, bool vb,
                                         int q, int c, float (&a)[R][S], float (&b)[S][CT]) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int row = q + 8 * r;
        const bool rin = row < m;
        const float* pa = Ab + (size_t)row * k;
#pragma unroll
        for (int k4 = 0; k4 < S / 4; ++k4) {
            if (va && rin && 4 * k4 < k) {
                const float4 v = __ldg(reinterpret_cast<const float4*>(pa + 4 * k4));
                a[r][4 * k4] = v.x; a[r][4 * k4 + 1] = v.y; a[r][4 * k4 + 2] = v.z; a[r][4 * k4 + 3] = v.w;
            } else {
#pragma unroll
                for (int e = 0; e < 4; ++e) a[r][4 * k4 + e] = ldg_or0(pa + 4 * k4 + e, rin && 4 * k4 + e < k);
            }
        }
    }
    const int c0 = c * CT;
#pragma unroll
    for (int kk = 0; kk < S; ++kk) {
        const float* pb = Bb + (size_t)kk * n + c0;
        const bool in = kk < k && c0 < n;
        if (CT == 4 && vb && in) {
            const float4 v = __ldg(reinterpret_cast<const float4*>(pb));
            b[kk][0] = v.x; b[kk][1 % CT] = v.y; b[kk][2 % CT] = v.z; b[kk][3 % CT] = v.w;
        } else if (CT == 2 && vb && in) {
            const float2 v = __ldg(reinterpret_cast<const float2*>(pb));
            b[kk][0] = v.x; b[kk][1 % CT] = v.y;
        } else {
#pragma unroll
            for (int j = 0; j < CT; ++j) b[kk][j] = ldg_or0(pb + j, kk < k && c0 + j < n);
        }
    }
}

template <int R, int CT, int MPW>
__device__ __forceinline__ void bmm_frag_f32_body(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int batch,
                                                  int m, int n, int k, int b_shared) {
    constexpr int S = 8 * R;
    static_assert(4 * CT == S, "a warp covers S x S outputs");
    const int lane = threadIdx.x & 31;
    const int q = lane >> 2, c = lane & 3;
    const long long warp = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const long long b0 = warp * MPW;
    if (b0 >= batch) return;  // warp-uniform
    const long long sa = (long long)m * k, sb = b_shared ? 0LL : (long long)k * n, sc = (long long)m * n;
    const bool va = k % 4 == 0 && aligned16(A);
    const bool vb = n % CT == 0 && (reinterpret_cast<uintptr_t>(B) & (CT * 4 - 1)) == 0;
    const bool vc = n % CT == 0 && (reinterpret_cast<uintptr_t>(C) & (CT * 4 - 1)) == 0;
    float a[MPW][R][S], b[MPW][S][CT];
#pragma unroll
    for (int i = 0; i < MPW; ++i) {
        const long long bi = b0 + i < batch ? b0 + i : b0;  // past the batch: a repeated load, never stored
        f32_load<R, CT, S>(A + bi * sa, B + bi * sb, m, n, k, va, vb, q, c, a[i], b[i]);
    }
    const int c0 = c * CT;
#pragma unroll
    for (int i = 0; i < MPW; ++i) {
        const long long bi = b0 + i;
        if (bi >= batch) break;  // warp-uniform
        float* Cb = C + bi * sc;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            float acc[CT];
#pragma unroll
            for (int j = 0; j < CT; ++j) acc[j] = 0.f;
#pragma unroll
            for (int kk = 0; kk < S; ++kk) {
                if (kk >= k) break;  // warp-uniform
#pragma unroll
                for (int j = 0; j < CT; ++j) acc[j] = fmaf(a[i][r][kk], b[i][kk][j], acc[j]);
            }
            const int row = q + 8 * r;
            if (row >= m || c0 >= n) continue;
            float* pc = Cb + (size_t)row * n + c0;
            if (CT == 4 && vc) {
                *reinterpret_cast<float4*>(pc) = make_float4(acc[0], acc[1 % CT], acc[2 % CT], acc[3 % CT]);
            } else if (CT == 2 && vc) {
                *reinterpret_cast<float2*>(pc) = make_float2(acc[0], acc[1 % CT]);
            } else {
#pragma unroll
                for (int j = 0; j < CT; ++j)
                    if (c0 + j < n) pc[j] = acc[j];
            }
        }
    }
}


// ---------------------------------------------------------------- F16/BF16 up to 32: bmm_frag32
// m, n, k <= 32, the same register path as bmm_frag: WM x WN warps per matrix, warp (i, j) computing rows
// 32/WM·i .. and columns 32/WN·j .. of C (MT = 2/WM m16 tiles by NT = 4/WN n8 tiles, k in two m16n8k16 steps). Each warp
// issues every load of its A rows (2·MT x 4 blocks of 8x8) and B columns (4 x NT blocks) before its first mma: up to 32
// 32-bit loads in flight per lane. Blocks past m, n or k are zero registers (warp-uniform), elements past the edge zero
// (per lane); a warp whose rows or columns lie wholly past m or n exits. fp32 accumulation of k <= 32 products in the
// tensor core (two steps), one rounding to the output type.
// Regime: 17..32 where bmm_small stages each matrix through shared memory (32^3 batch 512: small 6.94 us, cuBLAS 9.44 in
// the H100 sweep at 61a546a) and bmm_team pays its pipeline's fill (2048 32^3: team 10.54, cuBLAS 14.48).
template <typename T, bool TA, bool TB, int WM, int WN>
__device__ __forceinline__ void bmm_frag32_body(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int batch, int m, int n,
                                                int k, int b_shared) {
    constexpr int MT = 2 / WM, NT = 4 / WN, KB = 4;
    static_assert(MT * WM == 2 && NT * WN == 4, "a matrix's warps tile 32 x 32");
    const int lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const long long warp = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const long long b = warp / (WM * WN);
    if (b >= batch) return;  // warp-uniform
    const int sub = (int)(warp % (WM * WN));
    const int m0 = (sub / WN) * 16 * MT, n0 = (sub % WN) * 8 * NT;
    if (m0 >= m || n0 >= n) return;  // warp-uniform: none of C's elements are this warp's
    const bool va = ((TA ? m : k) % 2 == 0) && ((reinterpret_cast<uintptr_t>(A) & 3) == 0);
    const bool vb = ((TB ? k : n) % 2 == 0) && ((reinterpret_cast<uintptr_t>(B) & 3) == 0);
    const bool vc = (n % 2 == 0) && ((reinterpret_cast<uintptr_t>(C) & 3) == 0);
    const T* Ab = A + b * ((long long)m * k);
    const T* Bb = B + (b_shared ? 0LL : b * ((long long)k * n));
    T* Cb = C + b * ((long long)m * n);

    // Raw loads in stored orientation: A block (mb, kb) -> ra[mb][kb], B block (kb, nb) -> rb[kb][nb].
    uint32_t ra[2 * MT][KB], rb[KB][NT];
#pragma unroll
    for (int kb = 0; kb < KB; ++kb) {
        const bool kin = kb * 8 < k;
#pragma unroll
        for (int mb = 0; mb < 2 * MT; ++mb) {
            const int r0 = m0 + mb * 8;
            ra[mb][kb] = !(kin && r0 < m) ? 0u
                         : !TA ? ld_pair(Ab, m, k, r0 + g, kb * 8 + 2 * t, va)
                               : ld_pair(Ab, k, m, kb * 8 + g, r0 + 2 * t, va);
        }
#pragma unroll
        for (int nb = 0; nb < NT; ++nb) {
            const int c0 = n0 + nb * 8;
            rb[kb][nb] = !(kin && c0 < n) ? 0u
                         : TB ? ld_pair(Bb, n, k, c0 + g, kb * 8 + 2 * t, vb)
                              : ld_pair(Bb, k, n, kb * 8 + g, c0 + 2 * t, vb);
        }
    }
    float acc[MT][NT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nb = 0; nb < NT; ++nb)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[mt][nb][e] = 0.f;
#pragma unroll
    for (int s = 0; s < 2; ++s) {
        if (s * 16 >= k) break;  // warp-uniform
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
            if (m0 + mt * 16 >= m) break;  // warp-uniform
            uint32_t af[4] = {ra[2 * mt][2 * s], ra[2 * mt + 1][2 * s], ra[2 * mt][2 * s + 1], ra[2 * mt + 1][2 * s + 1]};
            if (TA) {
#pragma unroll
                for (int e = 0; e < 4; ++e) af[e] = trans8x8(af[e]);
            }
#pragma unroll
            for (int nb = 0; nb < NT; ++nb) {
                if (n0 + nb * 8 >= n) break;  // warp-uniform
                const uint32_t b0r = TB ? rb[2 * s][nb] : trans8x8(rb[2 * s][nb]);
                const uint32_t b1r = TB ? rb[2 * s + 1][nb] : trans8x8(rb[2 * s + 1][nb]);
                MmaOp<T>::run(acc[mt][nb], af, b0r, b1r);
            }
        }
    }
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
        const int r = m0 + mt * 16 + g;
#pragma unroll
        for (int nb = 0; nb < NT; ++nb) {
            const int c = n0 + nb * 8 + 2 * t;
            st_pair<T>(Cb, m, n, r, c, acc[mt][nb][0], acc[mt][nb][1], vc);
            st_pair<T>(Cb, m, n, r + 8, c, acc[mt][nb][2], acc[mt][nb][3], vc);
        }
    }
}

}  // namespace

// Entry points bmm_frag_<dtype>_<a><b>: same arguments as bmm_small, `mats` = matrices per warp, 1 or 4 (the
// two BmmHeuristics.fragPlan picks; 2 was measured and never wins there, so it is not compiled).
// Grid: ceil(batch / (mats * warps per block)) blocks; no dynamic shared memory. Needs m, n, k <= 16.
#define GAPFILL_BMM_FRAG(NAME, T, TA, TB)                                                                     \
    extern "C" __global__ void NAME(const T* A, const T* B, T* C, int batch, int m, int n, int k, int mats,  \
                                    int b_shared) {                                                           \
        bmm_frag<T, TA, TB>(A, B, C, batch, m, n, k, mats, b_shared);                                         \
    }

GAPFILL_BMM_FRAG(bmm_frag_f16_nn, __half, false, false)
GAPFILL_BMM_FRAG(bmm_frag_f16_nt, __half, false, true)
GAPFILL_BMM_FRAG(bmm_frag_f16_tn, __half, true, false)
GAPFILL_BMM_FRAG(bmm_frag_f16_tt, __half, true, true)
GAPFILL_BMM_FRAG(bmm_frag_bf16_nn, __nv_bfloat16, false, false)
GAPFILL_BMM_FRAG(bmm_frag_bf16_nt, __nv_bfloat16, false, true)
GAPFILL_BMM_FRAG(bmm_frag_bf16_tn, __nv_bfloat16, true, false)
GAPFILL_BMM_FRAG(bmm_frag_bf16_tt, __nv_bfloat16, true, true)

// F32, A and B as stored only (layout nn): bmm_frag_f32_nn_s<S>_w<MPW>, one entry per variant so that each gets its own
// register allocation. S = 8 takes m, n, k <= 8, S = 16 m, n, k <= 16; `mats` must equal MPW (the grid covers the batch
// with MPW matrices per warp).
#define GAPFILL_BMM_FRAG_F32(S, R, CT, MPW)                                                                             \
    extern "C" __global__ void bmm_frag_f32_nn_s##S##_w##MPW(const float* A, const float* B, float* C, int batch, int m,  \
                                                              int n, int k, int mats, int b_shared) {                  \
        bmm_frag_f32_body<R, CT, MPW>(A, B, C, batch, m, n, k, b_shared);                                                \
    }
GAPFILL_BMM_FRAG_F32(8, 1, 2, 1)
GAPFILL_BMM_FRAG_F32(8, 1, 2, 2)
GAPFILL_BMM_FRAG_F32(8, 1, 2, 4)
GAPFILL_BMM_FRAG_F32(16, 2, 4, 1)
GAPFILL_BMM_FRAG_F32(16, 2, 4, 2)

// F16/BF16 with m, n, k <= 32: bmm_frag32_<dtype>_<a><b>_w<W>, W = WM·WN warps per matrix (w1: one warp, 32 x 32; w2: two
// warps of 16 rows; w4: 2 x 2 warps of 16 x 16). Same arguments as bmm_frag (`mats` is ignored: one matrix per W warps);
// grid: ceil(batch·W / warps per block) blocks, no dynamic shared memory.
#define GAPFILL_BMM_FRAG32(NAME, T, TA, TB, W, WM, WN)                                                              \
    extern "C" __global__ void NAME##_w##W(const T* A, const T* B, T* C, int batch, int m, int n, int k, int mats, \
                                           int b_shared) {                                                         \
        bmm_frag32_body<T, TA, TB, WM, WN>(A, B, C, batch, m, n, k, b_shared);                                    \
    }
#define GAPFILL_BMM_FRAG32_ALL(NAME, T, TA, TB) \
    GAPFILL_BMM_FRAG32(NAME, T, TA, TB, 1, 1, 1) \
    GAPFILL_BMM_FRAG32(NAME, T, TA, TB, 2, 2, 1) \
    GAPFILL_BMM_FRAG32(NAME, T, TA, TB, 4, 2, 2)
GAPFILL_BMM_FRAG32_ALL(bmm_frag32_f16_nn, __half, false, false)
GAPFILL_BMM_FRAG32_ALL(bmm_frag32_f16_nt, __half, false, true)
GAPFILL_BMM_FRAG32_ALL(bmm_frag32_f16_tn, __half, true, false)
GAPFILL_BMM_FRAG32_ALL(bmm_frag32_f16_tt, __half, true, true)
GAPFILL_BMM_FRAG32_ALL(bmm_frag32_bf16_nn, __nv_bfloat16, false, false)
GAPFILL_BMM_FRAG32_ALL(bmm_frag32_bf16_nt, __nv_bfloat16, false, true)
GAPFILL_BMM_FRAG32_ALL(bmm_frag32_bf16_tn, __nv_bfloat16, true, false)
GAPFILL_BMM_FRAG32_ALL(bmm_frag32_bf16_tt, __nv_bfloat16, true, true)

// NN row-chunk entries (bmm_frag_rows_body): bmm_frag_<dtype>_nn_rows for m, n, k <= 16 (`mats` 1 or 4, grid as
// bmm_frag) and bmm_frag32_<dtype>_nn_rows_w<W> for m, n, k <= 32 (W as bmm_frag32). Only where BmmHeuristics.fragRows holds for the
// warp slice's width (16 columns: bmm_frag and w4; 32: w2 and w1); the host checks it (BmmHeuristics.fragRows).
#define GAPFILL_BMM_FRAG_ROWS(NAME, T)                                                                              \
    extern "C" __global__ void NAME(const T* A, const T* B, T* C, int batch, int m, int n, int k, int mats,        \
                                    int b_shared) {                                                                \
        if (mats == 4) bmm_frag_rows_body<T, 16, 1, 1, 4>(A, B, C, batch, m, n, k, b_shared);                       \
        else bmm_frag_rows_body<T, 16, 1, 1, 1>(A, B, C, batch, m, n, k, b_shared);                                 \
    }
GAPFILL_BMM_FRAG_ROWS(bmm_frag_f16_nn_rows, __half)
GAPFILL_BMM_FRAG_ROWS(bmm_frag_bf16_nn_rows, __nv_bfloat16)
#define GAPFILL_BMM_FRAG32_ROWS(NAME, T, W, WM, WN)                                                                 \
    extern "C" __global__ void NAME##_w##W(const T* A, const T* B, T* C, int batch, int m, int n, int k, int mats, \
                                           int b_shared) {                                                         \
        bmm_frag_rows_body<T, 32, WM, WN, 1>(A, B, C, batch, m, n, k, b_shared);                                   \
    }
#define GAPFILL_BMM_FRAG32_ROWS_ALL(NAME, T) \
    GAPFILL_BMM_FRAG32_ROWS(NAME, T, 1, 1, 1) \
    GAPFILL_BMM_FRAG32_ROWS(NAME, T, 2, 2, 1) \
    GAPFILL_BMM_FRAG32_ROWS(NAME, T, 4, 2, 2)
GAPFILL_BMM_FRAG32_ROWS_ALL(bmm_frag32_f16_nn_rows, __half)
GAPFILL_BMM_FRAG32_ROWS_ALL(bmm_frag32_bf16_nn_rows, __nv_bfloat16)
