// depthwise_conv3x3/nhwc: y[n,i,j,c] = act(bias[c] + Σ_{p,q} w[c,p,q]·x[n, s·i+p−1, s·j+q−1, c] (+ res[n,i,j,c]))
// in one pass, NHWC, zero padding 1, stride s ∈ {1,2}, Ho = ceil(H/s), Wo = ceil(W/s).
//
// Regime: every NHWC shape (vector path when C is a multiple of 16/sizeof(T) and the pointers are
// 16-byte aligned; a masked scalar path inside the same kernel otherwise). F32, F16, BF16; fp32
// accumulation; sm_80+.
// Floor: (|x| + |y| (+ |res|) + |w| + |bias|) bytes / copy bandwidth.
// Measured (H100 SXM, cuDNN 9.14, commit ff46cbb kernels, dev/depthwise_conv3x3 harness, bias on):
//   bit-exact vs the reference in 2520 odd-shape cases (SILU/GELU ≤ 1 ulp); f16 32×256×56×56 s1:
//   NONE 152 µs (23 % of the 34 µs floor), SiLU 186 µs (cuDNN conv+bias+SiLU 220 µs, anchor torch.compile
//   97 µs); f32 48 % of floor; 1.0-12× the cuDNN composition. FAR from the 75 %-of-floor target: the
//   kernel is latency-bound (≤ 128 registers, 16 warps/SM, the next row's loads wait on the fmas) and
//   the fp32/fp64 transcendental epilogue costs up to 2× NONE. Next: a shared-memory row ring filled
//   with cp.async a few rows ahead, compile-time activation, TH=8.
// Design: one thread owns V = 16/sizeof(T) channels of one output column and TH output rows
// (TH = 4 at s=1, 2 at s=2). It walks the S·(TH−1)+3 input rows once, top to bottom, loading the three
// 16-byte vectors (columns s·j−1, s·j, s·j+1) of each row and adding them into the output rows that use
// that input row. Because input rows arrive in order, every output receives its taps in the
// reference's order (p-major, then q), each as one fp32 fma, from acc = 0. An output row is finished
// (bias, residual, activation, one rounding, one 16-byte store) right after its last input row, so at
// most three rows of accumulators are live. Threads of a block: blockDim.x channel vectors × blockDim.y
// neighbouring columns, so the column halo of a row is shared through L1.
// Limits: N·H·W·C < 2^31 (validated in Java); weights and bias in x's dtype.
#include "depthwise_conv3x3.cuh"
#include <type_traits>

using namespace gapfill;
using namespace gapfill::dwconv;

namespace {

constexpr int kMaxLanes = 32;  // blockDim.x (channel vectors per block) is at most 32; set in Java

// V channels of one pixel, kept packed in the input dtype (8 registers' worth of fp32 would double the
// register footprint for F16/BF16); converted to fp32 at the fma.
template <typename T> struct Chan {
    static constexpr int V = Vec16<T>::N;  // channels per thread
    Vec16<T> q;
    __device__ __forceinline__ float at(int e) const { return to_float(q.v[e]); }
};

// The first nch < V elements at p, zero-padded, as one packed 16-byte value (built with shifts so the
// vector never goes through local memory).
template <typename T> __device__ __forceinline__ uint4 load_partial(const T* p, int nch) {
    constexpr int V = Vec16<T>::N;
    constexpr int B = 8 * (int)sizeof(T);  // bits per element
    uint32_t word[4] = {0u, 0u, 0u, 0u};
    const auto* bits = reinterpret_cast<const typename std::conditional<sizeof(T) == 2, uint16_t, uint32_t>::type*>(p);
#pragma unroll
    for (int e = 0; e < V; ++e)
        if (e < nch) word[e * B / 32] |= (uint32_t)bits[e] << ((e * B) % 32);
    return make_uint4(word[0], word[1], word[2], word[3]);
}

// V channels at (row, col) starting at channel c0, zero outside the image or past C.
template <typename T>
__device__ __forceinline__ Chan<T> load_pixel(const T* __restrict__ x, int H, int W, int C, int n, int row, int col,
                                              int c0, int nch, bool full) {
    Chan<T> r;
    r.q.raw = make_uint4(0u, 0u, 0u, 0u);  // +0.0 in every dtype
    if (row < 0 || row >= H || col < 0 || col >= W) return r;
    const T* p = x + ((size_t)((size_t)n * H + row) * W + col) * C + c0;
    if (full) {
        r.q.raw = __ldg(reinterpret_cast<const uint4*>(p));
    } else {
        r.q.raw = load_partial(p, nch);
    }
    return r;
}

template <typename T, int S>
__device__ __forceinline__ void dw_nhwc(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                        const T* __restrict__ res, T* __restrict__ y, int N, int H, int W, int C, int Ho,
                                        int Wo, int act, int vec) {
    static_assert(S == 1 || S == 2, "stride must be 1 or 2");
    constexpr int V = Chan<T>::V;
    constexpr int TH = S == 1 ? 4 : 2;       // output rows per thread
    constexpr int RIN = S * (TH - 1) + 3;    // input rows those outputs touch
    const int cv = blockIdx.y * blockDim.x + threadIdx.x;  // channel vector
    const int c0 = cv * V;
    const int colBlocks = (Wo + blockDim.y - 1) / blockDim.y;
    const int rowBlocks = (Ho + TH - 1) / TH;
    int b = blockIdx.x;
    const int jb = b % colBlocks;
    b /= colBlocks;
    const int i0 = (b % rowBlocks) * TH;     // first output row
    const int n = b / rowBlocks;
    const int j = jb * blockDim.y + threadIdx.y;  // output column
    // The block's filters, transposed to [tap][channel] in fp32 so a thread reads its V channels of a
    // tap as one shared-memory vector (holding them in registers costs 36-72 registers).
    __shared__ __align__(16) float wsm[9][kMaxLanes * V];
    {
        const int width = blockDim.x * V;                 // channels of this block
        const int cBase = blockIdx.y * width;
        const int nthreads = blockDim.x * blockDim.y;
        for (int k = threadIdx.y * blockDim.x + threadIdx.x; k < 9 * width; k += nthreads) {
            const int t = k / width, cl = k % width;      // tap, channel within the block
            wsm[t][cl] = cBase + cl < C ? to_float(w[(size_t)(cBase + cl) * 9 + t]) : 0.f;
        }
    }
    __syncthreads();
    if (c0 >= C || j >= Wo || n >= N) return;
    const int nch = min(V, C - c0);
    const bool full = vec != 0 && nch == V;
    const float* wme = &wsm[0][threadIdx.x * V];  // this thread's channels; tap t at wme[t * kMaxLanes * V]

    float acc[TH][V];  // [output row][channel]
#pragma unroll
    for (int t = 0; t < TH; ++t)
#pragma unroll
        for (int e = 0; e < V; ++e) acc[t][e] = 0.f;

#pragma unroll
    for (int r = 0; r < RIN; ++r) {
        const int row = S * i0 - 1 + r;
        Chan<T> xin[3];  // columns s·j−1, s·j, s·j+1 of input row `row`
#pragma unroll
        for (int q = 0; q < 3; ++q) xin[q] = load_pixel<T>(x, H, W, C, n, row, S * j - 1 + q, c0, nch, full);
#pragma unroll
        for (int t = 0; t < TH; ++t) {
            const int p = r - S * t;  // kernel row this input row is for output row i0+t (compile time)
            if (p < 0 || p > 2) continue;
#pragma unroll
            for (int q = 0; q < 3; ++q)
#pragma unroll
                for (int e = 0; e < V; ++e) acc[t][e] = __fmaf_rn(wme[(p * 3 + q) * kMaxLanes * V + e], xin[q].at(e), acc[t][e]);
            if (p != 2 || i0 + t >= Ho) continue;
            // output row i0+t is complete: bias, residual, activation, one rounding, one store
            const size_t o = ((size_t)((size_t)n * Ho + i0 + t) * Wo + j) * C + c0;
            float v[V];
#pragma unroll
            for (int e = 0; e < V; ++e) v[e] = acc[t][e];
            if (bias != nullptr) {
#pragma unroll
                for (int e = 0; e < V; ++e)
                    if (e < nch) v[e] = __fadd_rn(v[e], to_float(bias[c0 + e]));
            }
            if (res != nullptr) {
                if (full) {
                    Vec16<T> rv;
                    rv.raw = __ldcs(reinterpret_cast<const uint4*>(res + o));
#pragma unroll
                    for (int e = 0; e < V; ++e) v[e] = __fadd_rn(v[e], to_float(rv.v[e]));
                } else {
#pragma unroll
                    for (int e = 0; e < V; ++e)
                        if (e < nch) v[e] = __fadd_rn(v[e], to_float(res[o + e]));
                }
            }
            if (full) {
                Vec16<T> ov;
#pragma unroll
                for (int e = 0; e < V; ++e) ov.v[e] = finish<T>(v[e], act);
                __stcs(reinterpret_cast<uint4*>(y + o), ov.raw);
            } else {
#pragma unroll
                for (int e = 0; e < V; ++e)
                    if (e < nch) y[o + e] = finish<T>(v[e], act);
            }
        }
    }
}

}  // namespace

#define DW_NHWC(NAME, T, S)                                                                                        \
    extern "C" __global__ void __launch_bounds__(256, 2) NAME(const T* x, const T* w, const T* bias, const T* res, T* y, \
                                                           int N, int H, int W, int C, int Ho, int Wo, int act,      \
                                                           int vec) {                                                \
        dw_nhwc<T, S>(x, w, bias, res, y, N, H, W, C, Ho, Wo, act, vec);                                             \
    }

DW_NHWC(dwconv3x3_nhwc_f32_s1, float, 1)
DW_NHWC(dwconv3x3_nhwc_f32_s2, float, 2)
DW_NHWC(dwconv3x3_nhwc_f16_s1, __half, 1)
DW_NHWC(dwconv3x3_nhwc_f16_s2, __half, 2)
DW_NHWC(dwconv3x3_nhwc_bf16_s1, __nv_bfloat16, 1)
DW_NHWC(dwconv3x3_nhwc_bf16_s2, __nv_bfloat16, 2)
