// depthwise_conv3x3/nhwc: y[n,i,j,c] = act(bias[c] + Σ_{p,q} w[c,p,q]·x[n, s·i+p−1, s·j+q−1, c] (+ res[n,i,j,c]))
// in one pass, NHWC, zero padding 1, stride s ∈ {1,2}, Ho = ceil(H/s), Wo = ceil(W/s).
//
// Regime: every NHWC shape, F32/F16/BF16, fp32 accumulation, sm_80+. Vector accesses (CPT channels in
// one access) when C % CPT == 0 and the pointers are aligned; a
// masked scalar path inside the same kernel otherwise (CPT·sizeof(T) = 4 or 8 bytes, below).
// Floor: (|x| + |y| (+ |res|) + |w| + |bias|) bytes / copy bandwidth.
// Measured (H100 SXM, commit named in docs/ops/depthwise_conv3x3.md, dev/depthwise_conv3x3 harness, bias
//   on): 0 failures in 3600 odd-shape cases × every configuration; f16 32×256×56×56 NONE 69.8 µs (49 %
//   of the 34.4 µs floor; previous kernel 159.4), SILU 110.7 (cuDNN composition 237); 24-84 % of the
//   floor over the sweep. Still latency-bound: 128 registers (fp32 taps + three accumulator rows + two
//   rows in flight) leave 16 warps per SM.
// Design: a thread owns CPT channels × WC neighbouring output columns × a strip of rps (≤ 16, balanced)
// output rows; CPT and WC per dtype and stride are listed at the instantiations below. Its 9·CPT fp32
// filter taps and CPT biases live in registers (the previous kernel read the taps from shared memory
// per fma). It walks the S·(rps−1)+3 input rows top to bottom in a rolled loop with the next two rows
// in flight, loading the S·(WC−1)+3 pixels of each row it needs (the column halo of a thread is its
// neighbours' pixels, which the same block loads: L1 hits), and adds each row into the ≤ 3 output
// rows that use it (a rolling window of accumulator rows), so every output receives its taps in the
// reference's order (p-major, then q), each one fp32 fma from acc = 0. An output row is finished right
// after its last input row (bias, residual, activation, one rounding, one streaming store per column).
// Thread order is (channel group within a chunk of cb groups, column group, chunk, strip, image): a
// block of 256 threads covers 256/cb column groups of cb·CPT channels, so the column halo stays inside
// the block; cb is chosen by the launcher (all groups when C/CPT ≤ 64).
// Limits: N·H·W·C < 2^31 (validated in Java); weights and bias in x's dtype.
//
// ptxas spill allowance: 4 bytes per kernel: F32 stride 1 at its 128-register bound spills one register (4 bytes)
// since F32 GELU_ERF is evaluated in double-float (nineteenth session); measured in docs/ops/depthwise_conv3x3.md.
#define GAPFILL_DWCONV_FASTACT_GUARD 1  // keeps the F16/BF16 s1 kernels at 128 registers (common/depthwise_conv3x3.cuh)
#include "depthwise_conv3x3.cuh"

using namespace gapfill;
using namespace gapfill::dwconv;

namespace {

// One input row as a thread holds it between its load and its use: the KC pixels × CPT channels it
// needs, packed in the input dtype.
template <typename T, int CPT, int KC> struct RowBuf {
    Pack<T, CPT> px[KC];
};

struct Geo {
    const void* img; int H, W, C, c0, nch, colBase; bool vec;
};

template <typename T, int CPT, int KC>
__device__ __forceinline__ RowBuf<T, CPT, KC> load_row(const Geo& g, int row, bool want) {
    RowBuf<T, CPT, KC> b;
    zero_packs(b.px);
    if (!(want && row >= 0 && row < g.H)) return b;
    const T* rp = static_cast<const T*>(g.img) + (size_t)row * g.W * g.C + g.c0;
#pragma unroll
    for (int k = 0; k < KC; ++k) {
        const int col = g.colBase + k;
        if (col < 0 || col >= g.W) continue;
        const T* p = rp + (size_t)col * g.C;
        if (g.vec) {
            using R = typename RawBits<CPT * (int)sizeof(T)>::type;
            b.px[k].raw = __ldg(reinterpret_cast<const R*>(p));
        } else {
#pragma unroll
            for (int e = 0; e < CPT; ++e)
                if (e < g.nch) b.px[k].v[e] = __ldg(p + e);
        }
    }
    return b;
}

// acc[k][e] (+)= Σ_q w[p][q][e]·x[column S·k+q][e] in q order; fresh starts from +0 like the reference.
template <typename T, int S, int CPT, int WC, int KC>
__device__ __forceinline__ void taps(const float (&wr)[9][CPT], int p, const RowBuf<T, CPT, KC>& b, float (&acc)[WC][CPT],
                                     bool fresh) {
    float in[KC][CPT];
#pragma unroll
    for (int k = 0; k < KC; ++k)
#pragma unroll
        for (int e = 0; e < CPT; ++e) in[k][e] = to_float(b.px[k].v[e]);
    accumulate_tap_row<S, CPT, WC, KC>(wr, p, in, acc, fresh);
}

// bias, residual, activation, one rounding, one store per output column of the row. A: the activation class the
// stores are compiled for (store_row_as: ACT_NONE, ACT_RELU, ACT_RELU6), or -1: act tested per element (act_store).
template <int A, typename T, int CPT, int WC>
__device__ __forceinline__ void finish_cols(const T* __restrict__ res, T* __restrict__ y, size_t o, int C, int ncols,
                                            const Geo& g, bool hasBias, const float (&br)[CPT], int act,
                                            const float (&acc)[WC][CPT]) {
#pragma unroll
    for (int k = 0; k < WC; ++k) {
        if (k >= ncols) break;
        float v[1][CPT];
#pragma unroll
        for (int e = 0; e < CPT; ++e) v[0][e] = hasBias ? __fadd_rn(acc[k][e], br[e]) : acc[k][e];
        if (res != nullptr) add_residual<T, CPT>(res + o + (size_t)k * C, g.vec, g.nch, v[0]);
        if constexpr (A < 0) act_store<T, CPT>(y + o + (size_t)k * C, act, g.vec, g.nch, v[0]);
        else store_row_as<A, T, CPT, 1>(y + o + (size_t)k * C, C, act, g.vec, 1, g.nch, v);
    }
}

// The exact activations (NONE, RELU, RELU6) are tested once per row, not per column (as in the plane and ring
// kernels): H100 sweep at facac82 against 22e44b9, NHWC F32 stride 1 and F16/BF16/F32 stride 2, NONE/RELU 0.92-1.0×
// the time. The smooth ones keep the per-element test (that split measured 1.00-1.07× on GELU_ERF), and so do the
// F16/BF16 stride-1 kernels (the fallback when the ring kernel is off: four copies of the loop take ptxas from 128 to
// 145-149 registers, one block per SM instead of two).
template <typename T, int S, int CPT, int WC>
__device__ __forceinline__ void finish_row(const T* __restrict__ res, T* __restrict__ y, size_t o, int C, int ncols,
                                           const Geo& g, bool hasBias, const float (&br)[CPT], int act,
                                           const float (&acc)[WC][CPT]) {
    if (S == 1 && sizeof(T) == 2) finish_cols<-1, T, CPT, WC>(res, y, o, C, ncols, g, hasBias, br, act, acc);
    else if (act == ACT_NONE) finish_cols<ACT_NONE, T, CPT, WC>(res, y, o, C, ncols, g, hasBias, br, act, acc);
    else if (act == ACT_RELU) finish_cols<ACT_RELU, T, CPT, WC>(res, y, o, C, ncols, g, hasBias, br, act, acc);
    else if (act == ACT_RELU6) finish_cols<ACT_RELU6, T, CPT, WC>(res, y, o, C, ncols, g, hasBias, br, act, acc);
    else finish_cols<-1, T, CPT, WC>(res, y, o, C, ncols, g, hasBias, br, act, acc);
}

template <typename T, int S, int CPT, int WC>
__device__ __forceinline__ void dw_nhwc(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                        const T* __restrict__ res, T* __restrict__ y, int N, int H, int W, int C, int Ho,
                                        int Wo, int rps, int cb, int act, int vecOk) {
    static_assert(S == 1 || S == 2, "stride must be 1 or 2");
    constexpr int KC = S * (WC - 1) + 3;      // input columns per row: S·j0−1 … S·(j0+WC−1)+1
    const int groups = (C + CPT - 1) / CPT;   // channel groups
    const int chunks = (groups + cb - 1) / cb;
    const int colPairs = (Wo + WC - 1) / WC;
    const int strips = (Ho + rps - 1) / rps;
    // 32-bit: threads ≤ N·H·W·C < 2^31 (validated) plus rounding well under 2^31.
    unsigned idx = blockIdx.x * blockDim.x + threadIdx.x;
    const int gl = (int)(idx % (unsigned)cb);
    idx /= (unsigned)cb;
    const int jp = (int)(idx % (unsigned)colPairs);
    idx /= (unsigned)colPairs;
    const int ch = (int)(idx % (unsigned)chunks);
    idx /= (unsigned)chunks;
    const int i0 = (int)(idx % (unsigned)strips) * rps;
    const unsigned n = idx / (unsigned)strips;
    const int grp = ch * cb + gl;
    if (n >= (unsigned)N || grp >= groups) return;  // no warp-collective operations below
    const int c0 = grp * CPT;
    const int j0 = jp * WC;
    const int rows = min(rps, Ho - i0);
    const int ncols = min(WC, Wo - j0);
    // vecOk: C % CPT == 0 and every pointer aligned, so nch == CPT
    Geo g{x + (size_t)n * H * W * C, H, W, C, c0, min(CPT, C - c0), S * j0 - 1, vecOk != 0};

    // this thread's filters [tap][channel] and biases, in fp32 registers
    float wr[9][CPT];
#pragma unroll
    for (int e = 0; e < CPT; ++e)
#pragma unroll
        for (int t = 0; t < 9; ++t) wr[t][e] = e < g.nch ? to_float(__ldg(w + (size_t)(c0 + e) * 9 + t)) : 0.f;
    const bool hasBias = bias != nullptr;
    float br[CPT];
#pragma unroll
    for (int e = 0; e < CPT; ++e) br[e] = (hasBias && e < g.nch) ? to_float(__ldg(bias + c0 + e)) : 0.f;
    const size_t o0 = (((size_t)n * Ho + i0) * Wo + j0) * C + c0;  // output (i0, j0, c0)
    const size_t rowStride = (size_t)Wo * C;

    if (S == 1) {
        // iteration k consumes input row i0−1+k: p=2 of output i0+k−2 (then stored), p=1 of i0+k−1,
        // p=0 of i0+k; rows i0+k and i0+k+1 are in flight meanwhile.
        float a0[WC][CPT], a1[WC][CPT], a2[WC][CPT];
        RowBuf<T, CPT, KC> b0 = load_row<T, CPT, KC>(g, i0 - 1, true), b1 = load_row<T, CPT, KC>(g, i0, true);
#pragma unroll 1
        for (int k = 0; k < rows + 2; ++k) {
            const RowBuf<T, CPT, KC> b2 = load_row<T, CPT, KC>(g, i0 + 1 + k, k + 1 <= rows);
            if (k >= 2) {
                taps<T, S, CPT, WC, KC>(wr, 2, b0, a0, false);
                finish_row<T, S, CPT, WC>(res, y, o0 + (size_t)(k - 2) * rowStride, C, ncols, g, hasBias, br, act, a0);
            }
            if (k >= 1) taps<T, S, CPT, WC, KC>(wr, 1, b0, a1, false);
            taps<T, S, CPT, WC, KC>(wr, 0, b0, a2, true);
#pragma unroll
            for (int k2 = 0; k2 < WC; ++k2)
#pragma unroll
                for (int e = 0; e < CPT; ++e) { a0[k2][e] = a1[k2][e]; a1[k2][e] = a2[k2][e]; }
            b0 = b1;
            b1 = b2;
        }
    } else {
        // iteration t consumes input rows 2(i0+t) (p=1) and 2(i0+t)+1 (p=2 of output i0+t, then stored;
        // p=0 of output i0+t+1); the next iteration's two rows are in flight meanwhile.
        float a[WC][CPT];
        {
            const RowBuf<T, CPT, KC> top = load_row<T, CPT, KC>(g, 2 * i0 - 1, true);
            taps<T, S, CPT, WC, KC>(wr, 0, top, a, true);
        }
        RowBuf<T, CPT, KC> be = load_row<T, CPT, KC>(g, 2 * i0, true), bo = load_row<T, CPT, KC>(g, 2 * i0 + 1, true);
#pragma unroll 1
        for (int t = 0; t < rows; ++t) {
            const bool more = t + 1 < rows;
            const RowBuf<T, CPT, KC> ne = load_row<T, CPT, KC>(g, 2 * (i0 + t) + 2, more);
            const RowBuf<T, CPT, KC> no = load_row<T, CPT, KC>(g, 2 * (i0 + t) + 3, more);
            taps<T, S, CPT, WC, KC>(wr, 1, be, a, false);
            taps<T, S, CPT, WC, KC>(wr, 2, bo, a, false);
            finish_row<T, S, CPT, WC>(res, y, o0 + (size_t)t * rowStride, C, ncols, g, hasBias, br, act, a);
            taps<T, S, CPT, WC, KC>(wr, 0, bo, a, true);
            be = ne;
            bo = no;
        }
    }
}

}  // namespace

// Configurations, each the fastest (or the fastest without register spills) of the three measured in the
// H100 harness run (cuda-native/dev/depthwise_conv3x3, docs/ops/depthwise_conv3x3.md): CPT channels ×
// WC columns per thread, minimum blocks per SM for the register budget.
//   F16/BF16 s=1: CPT 4 × WC 2 (8-byte accesses), 1 block/SM budget (128 registers)
//   F16/BF16 s=2: CPT 2 × WC 4 (4-byte accesses), 2 blocks/SM
//   F32 s=1:      CPT 2 × WC 4 (8-byte accesses), 2 blocks/SM
//   F32 s=2:      CPT 2 × WC 2 (8-byte accesses), 2 blocks/SM (CPT 2 × WC 4 spills at this budget)
// The launcher (DepthwiseConv3x3.java) must use the same CPT and WC.
#define DW_NHWC(T, TN, S, CPT, WC, MINB)                                                                            \
    extern "C" __global__ void __launch_bounds__(256, MINB) dwconv3x3_nhwc_##TN##_s##S(                              \
        const T* x, const T* w, const T* bias, const T* res, T* y, int N, int H, int W, int C, int Ho, int Wo,       \
        int rps, int cb, int act, int vec) {                                                                        \
        dw_nhwc<T, S, CPT, WC>(x, w, bias, res, y, N, H, W, C, Ho, Wo, rps, cb, act, vec);                          \
    }

DW_NHWC(float, f32, 1, 2, 4, 2)
DW_NHWC(float, f32, 2, 2, 2, 2)
DW_NHWC(__half, f16, 1, 4, 2, 1)
DW_NHWC(__half, f16, 2, 2, 4, 2)
DW_NHWC(__nv_bfloat16, bf16, 1, 4, 2, 1)
DW_NHWC(__nv_bfloat16, bf16, 2, 2, 4, 2)
