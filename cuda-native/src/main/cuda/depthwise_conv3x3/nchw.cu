// depthwise_conv3x3/nchw: y[n,c,i,j] = act(bias[c] + Σ_{p,q} w[c,p,q]·x[n, c, s·i+p−1, s·j+q−1] (+ res[n,c,i,j]))
// in one pass, NCHW, zero padding 1, stride s ∈ {1,2}, Ho = ceil(H/s), Wo = ceil(W/s).
//
// Regime: every NCHW shape (vector path when W and Wo are multiples of V = 16/sizeof(T) and the
// pointers are 16-byte aligned; a masked scalar path inside the same kernel otherwise). F32, F16,
// BF16; fp32 accumulation; sm_80+.
// Floor: (|x| + |y| (+ |res|) + |w| + |bias|) bytes / copy bandwidth.
// Measured (H100 SXM, cuDNN 9.14, commit ff46cbb kernels, dev/depthwise_conv3x3 harness, bias on):
//   bit-exact vs the reference in 2520 odd-shape cases (SILU/GELU ≤ 1 ulp); f32 NONE 75-89 % of the
//   floor on 32×256×56×56 and 16×64×224×224; f16 vector path 44-65 %, f16 scalar path (W = 28, 14)
//   11-14 %; SiLU/GELU add up to 2× (fp64 erfc for F32 outputs: 28 % of floor). Next: vectorise the
//   scalar path over the flattened H·W plane, compile-time activation, more loads in flight per thread.
// Design: one thread owns V consecutive output columns of TH output rows of one (n, c) plane
// (TH = 4 at s=1, 2 at s=2). It walks the S·(TH−1)+3 input rows once, top to bottom; per row it loads
// the S·(V−1)+3 input columns it needs as S 16-byte vectors plus the halo column(s) as scalars (the
// neighbouring thread loads those as part of its vector, so they come from L1), and adds the row into
// the output rows that use it. Input rows arrive in order, so every output receives its taps in the
// reference's order (p-major, then q), each as one fp32 fma from acc = 0. An output row is finished
// (bias, residual, activation, one rounding, one 16-byte store) right after its last input row.
// Limits: N·C·H·W < 2^31 (validated in Java); weights and bias in x's dtype.
#include "depthwise_conv3x3.cuh"

using namespace gapfill;
using namespace gapfill::dwconv;

namespace {

// Input columns [col0, col0 + K) of one row as fp32, zero outside the image.
// Vector path: col0 + 1 is a multiple of V and the row is V-aligned, so the span is
// [halo scalar][S vectors][S == 1 ? halo scalar : nothing].
template <typename T, int S, int K>
__device__ __forceinline__ void load_row(const T* __restrict__ plane, int H, int W, int row, int col0, bool vec,
                                         float (&in)[K]) {
    constexpr int V = Vec16<T>::N;
    static_assert(K == S * (V - 1) + 3, "a row segment is S·(V−1)+3 columns");
#pragma unroll
    for (int k = 0; k < K; ++k) in[k] = 0.f;
    if (row < 0 || row >= H) return;
    const T* r = plane + (size_t)row * W;
    if (vec) {
        in[0] = col0 >= 0 ? to_float(__ldg(r + col0)) : 0.f;
#pragma unroll
        for (int v = 0; v < S; ++v) {
            Vec16<T> q;
            q.raw = __ldg(reinterpret_cast<const uint4*>(r + col0 + 1 + v * V));  // [V] columns
#pragma unroll
            for (int e = 0; e < V; ++e) in[1 + v * V + e] = to_float(q.v[e]);
        }
        if (S == 1) {
            const int last = col0 + K - 1;
            in[K - 1] = last < W ? to_float(__ldg(r + last)) : 0.f;
        }
    } else {
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int col = col0 + k;
            if (col >= 0 && col < W) in[k] = to_float(__ldg(r + col));
        }
    }
}

template <typename T, int S>
__device__ __forceinline__ void dw_nchw(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                        const T* __restrict__ res, T* __restrict__ y, int N, int C, int H, int W, int Ho,
                                        int Wo, int act, int vecOk) {
    static_assert(S == 1 || S == 2, "stride must be 1 or 2");
    constexpr int V = Vec16<T>::N;           // output columns per thread
    constexpr int TH = S == 1 ? 4 : 2;       // output rows per thread
    constexpr int RIN = S * (TH - 1) + 3;    // input rows those outputs touch
    constexpr int K = S * (V - 1) + 3;       // input columns those outputs touch
    const int colVecs = (Wo + V - 1) / V;
    const int rowBlocks = (Ho + TH - 1) / TH;
    // 32-bit unsigned: threads ≤ N·C·H·W < 2^31 (validated), plus less than one block of rounding.
    unsigned idx = blockIdx.x * blockDim.x + threadIdx.x;
    const int jv = (int)(idx % (unsigned)colVecs);
    idx /= (unsigned)colVecs;
    const int i0 = (int)(idx % (unsigned)rowBlocks) * TH;  // first output row
    const unsigned nc = idx / (unsigned)rowBlocks;         // plane n·C + c
    if (nc >= (unsigned)N * (unsigned)C) return;
    const int c = (int)(nc % (unsigned)C);
    const int j0 = jv * V;                       // first output column
    const int nout = min(V, Wo - j0);
    const bool vec = vecOk != 0;                 // W % V == 0, Wo % V == 0, aligned (so nout == V)

    float wr[9];  // [p*3+q]
#pragma unroll
    for (int t = 0; t < 9; ++t) wr[t] = to_float(__ldg(w + (size_t)c * 9 + t));
    const T* plane = x + (size_t)nc * H * W;

    float acc[TH][V];  // [output row][output column]
#pragma unroll
    for (int t = 0; t < TH; ++t)
#pragma unroll
        for (int e = 0; e < V; ++e) acc[t][e] = 0.f;

#pragma unroll
    for (int r = 0; r < RIN; ++r) {
        float in[K];  // input columns S·j0−1 ... of input row S·i0−1+r
        load_row<T, S, K>(plane, H, W, S * i0 - 1 + r, S * j0 - 1, vec, in);
#pragma unroll
        for (int t = 0; t < TH; ++t) {
            const int p = r - S * t;  // kernel row of this input row for output row i0+t (compile time)
            if (p < 0 || p > 2) continue;
#pragma unroll
            for (int q = 0; q < 3; ++q)
#pragma unroll
                for (int e = 0; e < V; ++e) acc[t][e] = __fmaf_rn(wr[p * 3 + q], in[S * e + q], acc[t][e]);
            if (p != 2 || i0 + t >= Ho) continue;
            // output row i0+t is complete: bias, residual, activation, one rounding, one store
            const size_t o = ((size_t)nc * Ho + i0 + t) * Wo + j0;
            float v[V];
#pragma unroll
            for (int e = 0; e < V; ++e) v[e] = acc[t][e];
            if (bias != nullptr) {
                const float b = to_float(__ldg(bias + c));
#pragma unroll
                for (int e = 0; e < V; ++e) v[e] = __fadd_rn(v[e], b);
            }
            if (res != nullptr) {
                if (vec) {
                    Vec16<T> rv;
                    rv.raw = __ldcs(reinterpret_cast<const uint4*>(res + o));
#pragma unroll
                    for (int e = 0; e < V; ++e) v[e] = __fadd_rn(v[e], to_float(rv.v[e]));
                } else {
#pragma unroll
                    for (int e = 0; e < V; ++e)
                        if (e < nout) v[e] = __fadd_rn(v[e], to_float(res[o + e]));
                }
            }
            if (vec) {
                Vec16<T> ov;
#pragma unroll
                for (int e = 0; e < V; ++e) ov.v[e] = finish<T>(v[e], act);
                __stcs(reinterpret_cast<uint4*>(y + o), ov.raw);
            } else {
#pragma unroll
                for (int e = 0; e < V; ++e)
                    if (e < nout) y[o + e] = finish<T>(v[e], act);
            }
        }
    }
}

}  // namespace

#define DW_NCHW(NAME, T, S)                                                                                        \
    extern "C" __global__ void __launch_bounds__(256) NAME(const T* x, const T* w, const T* bias, const T* res, T* y, \
                                                           int N, int C, int H, int W, int Ho, int Wo, int act,      \
                                                           int vec) {                                                \
        dw_nchw<T, S>(x, w, bias, res, y, N, C, H, W, Ho, Wo, act, vec);                                             \
    }

DW_NCHW(dwconv3x3_nchw_f32_s1, float, 1)
DW_NCHW(dwconv3x3_nchw_f32_s2, float, 2)
DW_NCHW(dwconv3x3_nchw_f16_s1, __half, 1)
DW_NCHW(dwconv3x3_nchw_f16_s2, __half, 2)
DW_NCHW(dwconv3x3_nchw_bf16_s1, __nv_bfloat16, 1)
DW_NCHW(dwconv3x3_nchw_bf16_s2, __nv_bfloat16, 2)
