// depthwise_conv3x3/nchw: y[n,c,i,j] = act(bias[c] + Σ_{p,q} w[c,p,q]·x[n, c, s·i+p−1, s·j+q−1] (+ res[n,c,i,j]))
// in one pass, NCHW, zero padding 1, stride s ∈ {1,2}, Ho = ceil(H/s), Wo = ceil(W/s).
//
// Regime: every NCHW shape, F32/F16/BF16, fp32 accumulation, sm_80+. One kernel per dtype × stride ×
// access width VW (output columns per thread): the launcher picks the widest VW ∈ {16/sizeof(T), …, 2, 1}
// with W % VW == 0 (s=1) or W == 2·Wo and Wo % VW == 0 (s=2) and every pointer VW·sizeof(T)-aligned
// (halved for F32 s=2, measured faster), so every access is one VW-wide load/store and never crosses
// an image row. VW = 1 takes any shape.
// Floor: (|x| + |y| (+ |res|) + |w| + |bias|) bytes / copy bandwidth.
// Measured (H100 SXM, commit named in docs/ops/depthwise_conv3x3.md, dev/depthwise_conv3x3 harness, bias
//   on): 0 failures in 3600 odd-shape cases × every instantiation (bit-exact NONE/RELU/RELU6, ≤ 1 ulp
//   SILU/GELU); f16 32×256×56×56 NONE 56.8 µs (61 % of the 34.4 µs floor; previous kernel 86.5), SILU
//   76.9 (cuDNN composition 343); 31-84 % of the floor over the sweep, lowest at W = 14/28 (2- and
//   4-element accesses) and for GELU (erfcf).
// Design: a thread owns VW consecutive output columns of a strip of `rps` output rows of one (n, c)
// plane (the launcher balances strips of ≤ 8 rows, 16 for F32 stride 2, shorter for small grids).
// Thread index order is (column vector, strip, plane), column vector fastest, so a warp walks along
// image rows and the left/right halo column of a thread's VW-wide input vector is the neighbour
// lane's edge element (a warp shuffle): zero padding at the image edge, one scalar load only in lanes
// 0 and 31 when the neighbour sits in another warp. The thread walks its S·(rps−1)+3 input rows top
// to bottom in a ROLLED loop (one copy of the epilogue: the fully unrolled previous design stalled on
// instruction fetch, 40-45 % of cycles in ncu, once SILU/GELU were inlined per row), with the next two
// input rows (and their halo scalars) in flight while the current one is used, and adds each row into
// the ≤ 3 output rows that use it: a rolling window of three accumulator rows. Input rows arrive in
// order, so every output receives its taps in the reference's order (p-major, then q), each one fp32
// fma from acc = 0. An output row is finished right after its last input row: bias, residual,
// activation, one rounding, one VW-wide streaming store (common/depthwise_conv3x3.cuh).
// Limits: N·C·H·W < 2^31 (validated in Java); weights and bias in x's dtype; shuffles need every lane
// of a warp to run the row loop (its trip count depends only on rps), so no thread returns early.
// SiLU/GELU for F16/BF16 outputs use the fast forms of common/depthwise_conv3x3.cuh (ex2/rcp approximations,
// ≤ 1 ulp of the output): A/B on the H100 (dev/depthwise_conv3x3/ab/h100-a91ff10-fastact.txt) 0.70-0.85x the
// time of the previous expf/erfcf/__fdividef forms here, no registers added (52-80).
#include "depthwise_conv3x3.cuh"

using namespace gapfill;
using namespace gapfill::dwconv;

namespace {

constexpr unsigned kFull = 0xffffffffu;

// One input row as a thread holds it between its load and its use: S VW-wide vectors (columns
// S·j0 … S·j0+S·VW−1) and, in lanes 0/31 only, the halo column that the neighbouring lane does not hold.
template <typename T, int S, int VW> struct RowBuf {
    Pack<T, VW> v[S];
    T left, right;
};

struct Geo {           // what the row loads need to know about the thread
    const void* plane; int H, W, j0, jv, nv, lane; bool live;
};

template <typename T, int S, int VW>
__device__ __forceinline__ RowBuf<T, S, VW> load_row(const Geo& g, int row, bool want) {
    RowBuf<T, S, VW> b;
    zero_packs(b.v);
    b.left = b.right = from_float<T>(0.f);
    if (!(want && g.live && row >= 0 && row < g.H)) return b;
    const T* rp = static_cast<const T*>(g.plane) + (size_t)row * g.W;
#pragma unroll
    for (int v = 0; v < S; ++v) {
        const int col = S * g.j0 + v * VW;
        if (VW == 1) {
            if (col < g.W) b.v[v].v[0] = __ldg(rp + col);  // col ≥ W only at s=2 with W odd
        } else {
            using R = typename RawBits<VW * (int)sizeof(T)>::type;
            b.v[v].raw = __ldg(reinterpret_cast<const R*>(rp + col));
        }
    }
    if (g.lane == 0 && g.jv > 0) b.left = __ldg(rp + S * g.j0 - 1);
    if (S == 1 && g.lane == 31 && g.jv < g.nv - 1) b.right = __ldg(rp + g.j0 + VW);
    return b;
}

// The K = S·VW+2 input columns S·j0−1 … of a loaded row in fp32; the halo columns come from the
// neighbouring lanes (zero at the image edge). Every lane of the warp must call this together.
template <typename T, int S, int VW, int K>
__device__ __forceinline__ void unpack_row(const Geo& g, const RowBuf<T, S, VW>& b, float (&in)[K]) {
#pragma unroll
    for (int v = 0; v < S; ++v)
#pragma unroll
        for (int e = 0; e < VW; ++e) in[1 + v * VW + e] = to_float(b.v[v].v[e]);
    float left = __shfl_up_sync(kFull, in[S * VW], 1);
    if (g.jv == 0) left = 0.f;
    else if (g.lane == 0) left = to_float(b.left);
    in[0] = left;
    if (S == 1) {
        float right = __shfl_down_sync(kFull, in[1], 1);
        if (g.jv == g.nv - 1) right = 0.f;
        else if (g.lane == 31) right = to_float(b.right);
        in[K - 1] = right;
    } else {
        in[K - 1] = 0.f;
    }
}

template <typename T, int VW>
__device__ __forceinline__ void finish_row(const T* __restrict__ res, T* __restrict__ y, size_t o, int nvalid, float b,
                                           bool hasBias, int act, const float (&acc)[VW]) {
    float v[VW];
#pragma unroll
    for (int e = 0; e < VW; ++e) v[e] = hasBias ? __fadd_rn(acc[e], b) : acc[e];
    if (res != nullptr) add_residual<T, VW>(res + o, VW > 1, nvalid, v);
    act_store<T, VW>(y + o, act, VW > 1, nvalid, v);
}

template <typename T, int S, int VW, bool U3 = false>
__device__ __forceinline__ void dw_nchw(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                        const T* __restrict__ res, T* __restrict__ y, int planes, int C, int H, int W,
                                        int Ho, int Wo, int rps, int act) {
    static_assert(S == 1 || S == 2, "stride must be 1 or 2");
    constexpr int K = S * VW + 2;            // input columns S·j0−1 … S·j0+S·VW (the last unused at s=2)
    const int nv = (Wo + VW - 1) / VW;       // column vectors per row (Wo % VW == 0 unless VW == 1)
    const int strips = (Ho + rps - 1) / rps;
    // 32-bit: threads ≤ N·C·H·W < 2^31 (validated), plus less than one block of rounding.
    unsigned idx = blockIdx.x * blockDim.x + threadIdx.x;
    const int jv = (int)(idx % (unsigned)nv);
    idx /= (unsigned)nv;
    const int i0 = (int)(idx % (unsigned)strips) * rps;  // first output row of the strip
    const unsigned pl = idx / (unsigned)strips;          // plane n·C + c
    const bool live = pl < (unsigned)planes;
    const int c = live ? (int)(pl % (unsigned)C) : 0;
    const int rows = live ? min(rps, Ho - i0) : 0;        // output rows of this strip
    Geo g{x + (size_t)(live ? pl : 0u) * H * W, H, W, jv * VW, jv, nv, (int)(threadIdx.x & 31), live};

    float wr[9];
#pragma unroll
    for (int t = 0; t < 9; ++t) wr[t] = live ? to_float(__ldg(w + (size_t)c * 9 + t)) : 0.f;
    const bool hasBias = bias != nullptr;
    const float b = (live && hasBias) ? to_float(__ldg(bias + c)) : 0.f;
    const size_t o0 = ((size_t)(live ? pl : 0u) * Ho + i0) * Wo + g.j0;  // output (i0, j0)
    const int nvalid = min(VW, Wo - g.j0);
    float in[K];

    // The loop runs rps (+2) times in every thread (launch-uniform), so the shuffles never diverge;
    // rows past the strip or the image are not loaded and their outputs are not stored.
    if constexpr (S == 1 && U3) {
        // The loop below unrolled three times: the accumulator rows and row buffers change roles by name instead of
        // by register copies (iteration k: X p=2 of output i0+k−2, then stored; Y p=1 of i0+k−1; Z p=0 of i0+k;
        // U the input row i0−1+k, Wb loaded with row i0+1+k). The trip count and the breaks are launch-uniform.
        float aA[VW], aB[VW], aC[VW];
        RowBuf<T, S, VW> r0 = load_row<T, S, VW>(g, i0 - 1, true), r1 = load_row<T, S, VW>(g, i0, true), r2;
        const int trips = rps + 2;
#define DW_NCHW_U3_STEP(k, X, Y, Z, U, Wb)                                                                        \
    {                                                                                                         \
        Wb = load_row<T, S, VW>(g, i0 + 1 + (k), (k) + 1 <= rows);                                            \
        unpack_row<T, S, VW, K>(g, U, in);                                                                    \
        if ((k) >= 2) {                                                                                       \
            taps<S, VW, K>(wr, 2, in, X, false);                                                              \
            if ((k) - 2 < rows) finish_row<T, VW>(res, y, o0 + (size_t)((k) - 2) * Wo, nvalid, b, hasBias, act, X); \
        }                                                                                                     \
        if ((k) >= 1) taps<S, VW, K>(wr, 1, in, Y, false);                                                    \
        taps<S, VW, K>(wr, 0, in, Z, true);                                                                   \
    }
#pragma unroll 1
        for (int k = 0; k < trips; k += 3) {
            DW_NCHW_U3_STEP(k, aA, aB, aC, r0, r2)
            if (k + 1 >= trips) break;
            DW_NCHW_U3_STEP(k + 1, aB, aC, aA, r1, r0)
            if (k + 2 >= trips) break;
            DW_NCHW_U3_STEP(k + 2, aC, aA, aB, r2, r1)
        }
#undef DW_NCHW_U3_STEP
    } else if (S == 1) {
        // iteration k consumes input row i0−1+k: p=2 of output i0+k−2 (then stored), p=1 of i0+k−1,
        // p=0 of i0+k; rows i0+k and i0+k+1 are in flight meanwhile.
        float a0[VW], a1[VW], a2[VW];
        RowBuf<T, S, VW> b0 = load_row<T, S, VW>(g, i0 - 1, true), b1 = load_row<T, S, VW>(g, i0, true);
#pragma unroll 1
        for (int k = 0; k < rps + 2; ++k) {
            const RowBuf<T, S, VW> b2 = load_row<T, S, VW>(g, i0 + 1 + k, k + 1 <= rows);
            unpack_row<T, S, VW, K>(g, b0, in);
            if (k >= 2) {
                taps<S, VW, K>(wr, 2, in, a0, false);
                if (k - 2 < rows) finish_row<T, VW>(res, y, o0 + (size_t)(k - 2) * Wo, nvalid, b, hasBias, act, a0);
            }
            if (k >= 1) taps<S, VW, K>(wr, 1, in, a1, false);
            taps<S, VW, K>(wr, 0, in, a2, true);
#pragma unroll
            for (int e = 0; e < VW; ++e) { a0[e] = a1[e]; a1[e] = a2[e]; }
            b0 = b1;
            b1 = b2;
        }
    } else {
        // iteration t consumes input rows 2(i0+t) (p=1) and 2(i0+t)+1 (p=2 of output i0+t, then stored;
        // p=0 of output i0+t+1); the next iteration's two rows are in flight meanwhile.
        float a[VW];
        {
            const RowBuf<T, S, VW> top = load_row<T, S, VW>(g, 2 * i0 - 1, true);
            unpack_row<T, S, VW, K>(g, top, in);
            taps<S, VW, K>(wr, 0, in, a, true);
        }
        RowBuf<T, S, VW> be = load_row<T, S, VW>(g, 2 * i0, true), bo = load_row<T, S, VW>(g, 2 * i0 + 1, true);
#pragma unroll 1
        for (int t = 0; t < rps; ++t) {
            const bool more = t + 1 < rows;
            const RowBuf<T, S, VW> ne = load_row<T, S, VW>(g, 2 * (i0 + t) + 2, more);
            const RowBuf<T, S, VW> no = load_row<T, S, VW>(g, 2 * (i0 + t) + 3, more);
            unpack_row<T, S, VW, K>(g, be, in);
            taps<S, VW, K>(wr, 1, in, a, false);
            unpack_row<T, S, VW, K>(g, bo, in);
            taps<S, VW, K>(wr, 2, in, a, false);
            if (t < rows) finish_row<T, VW>(res, y, o0 + (size_t)t * Wo, nvalid, b, hasBias, act, a);
            taps<S, VW, K>(wr, 0, in, a, true);
            be = ne;
            bo = no;
        }
    }
}

}  // namespace

#define DW_NCHW(T, TN, S, VW)                                                                                       \
    extern "C" __global__ void __launch_bounds__(256, 1) dwconv3x3_nchw_##TN##_s##S##_v##VW(                            \
        const T* x, const T* w, const T* bias, const T* res, T* y, int planes, int C, int H, int W, int Ho, int Wo,  \
        int rps, int act) {                                                                                         \
        dw_nchw<T, S, VW>(x, w, bias, res, y, planes, C, H, W, Ho, Wo, rps, act);                                \
    }
// F16/BF16 stride 1 at VW 8 with the row loop unrolled three times (DepthwiseConv3x3Heuristics.useNchwUnroll3: exact
// activations). H100, dev/depthwise_conv3x3/nchw_u3_ab.cu at 8b0c8c5: bit-identical to the rolled loop; RELU 0.86-0.94x
// its time, NONE with a residual 0.97-0.99x, SiLU/GELU_ERF 1.01-1.05x (so they keep the rolled loop); F32 1.09-1.37x.
#define DW_NCHW_U3(T, TN)                                                                                          \
    extern "C" __global__ void __launch_bounds__(256, 1) dwconv3x3_nchw_##TN##_s1_v8_u3(                           \
        const T* x, const T* w, const T* bias, const T* res, T* y, int planes, int C, int H, int W, int Ho, int Wo, \
        int rps, int act) {                                                                                        \
        dw_nchw<T, 1, 8, true>(x, w, bias, res, y, planes, C, H, W, Ho, Wo, rps, act);                             \
    }
#define DW_NCHW_ALL_VW(T, TN, S, VMAX) \
    DW_NCHW(T, TN, S, 1) DW_NCHW(T, TN, S, 2) DW_NCHW(T, TN, S, 4) DW_NCHW_V8_##VMAX(T, TN, S)
#define DW_NCHW_V8_8(T, TN, S) DW_NCHW(T, TN, S, 8)
#define DW_NCHW_V8_4(T, TN, S)

DW_NCHW_ALL_VW(float, f32, 1, 4)
DW_NCHW_ALL_VW(float, f32, 2, 4)
DW_NCHW_ALL_VW(__half, f16, 1, 8)
DW_NCHW_ALL_VW(__half, f16, 2, 8)
DW_NCHW_ALL_VW(__nv_bfloat16, bf16, 1, 8)
DW_NCHW_ALL_VW(__nv_bfloat16, bf16, 2, 8)
DW_NCHW_U3(__half, f16)
DW_NCHW_U3(__nv_bfloat16, bf16)
