// depthwise_conv3x3/vendor_gelu: y[i] = gelu(y[i]) in place (or gelu(y[i] + bias[c]), below) — the elementwise pass the VENDOR path of
// depthwise_conv3x3 appends after cuDNN's convolution (+ residual; the bias added here) because cuDNN's activation
// descriptors have no GELU. It is part of the vendor composition, not a custom fusion: it reads and
// writes y once more, as a user composing cuDNN with their own GELU kernel would.
// Regime: any contiguous tensor, F32/F16/BF16; act ∈ {GELU_ERF = 4, GELU_TANH = 5} (same functions and
// forms as the custom epilogue, common/depthwise_conv3x3.cuh).
// Floor: 2·n·sizeof(T) bytes over copy bandwidth. Measured: only inside the vendor composition rows of
// dev/depthwise_conv3x3/h100-results.txt (not timed alone).
// Limits: n < 2^31 (validated in Java).
#define GAPFILL_DWCONV_EXACT_SMOOTH_ACT 1  // the vendor composition keeps expf/erfcf/IEEE division
#include "depthwise_conv3x3.cuh"

using namespace gapfill;
using namespace gapfill::dwconv;

// y[i] = gelu(y[i]) in place, or with BIAS gelu(y[i] + bias[channel of i]): the bias in the GELU pass, as a user
// writing that pass would add it (until the fiftieth session the composition added it with cudnnAddTensor first, one
// more read and write of y; the vendor-baseline review). Channel of i: (i / inner) % c, inner = H'·W' for NCHW and 1
// for NHWC. The sum is formed in fp32 and rounded once, after the GELU.
template <typename T, bool BIAS>
__device__ __forceinline__ void gelu_body(T* __restrict__ y, const T* __restrict__ bias, int n, int c, int inner, int act) {
    constexpr int V = Vec16<T>::N;
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = gridDim.x * blockDim.x;
    int done = 0;
    if (aligned16(y)) {
        const int nv = n / V;  // full vectors
        const bool oneChannel = inner % V == 0;               // NCHW, H'·W' a multiple of V: a vector stays in one channel
        const bool runOfChannels = inner == 1 && c % V == 0;  // NHWC, C a multiple of V: V consecutive channels
        for (int i = tid; i < nv; i += stride) {
            const int base = i * V;
            Vec16<T> v = load16_stream(y + (size_t)base);
            if constexpr (!BIAS) {
#pragma unroll
                for (int e = 0; e < V; ++e) v.v[e] = finish<T>(to_float(v.v[e]), act);
            } else if (oneChannel) {
                const float b = to_float(bias[(base / inner) % c]);
#pragma unroll
                for (int e = 0; e < V; ++e) v.v[e] = finish<T>(to_float(v.v[e]) + b, act);
            } else if (runOfChannels) {
                const int c0 = base % c;
#pragma unroll
                for (int e = 0; e < V; ++e) v.v[e] = finish<T>(to_float(v.v[e]) + to_float(bias[c0 + e]), act);
            } else {
#pragma unroll
                for (int e = 0; e < V; ++e) v.v[e] = finish<T>(to_float(v.v[e]) + to_float(bias[((base + e) / inner) % c]), act);
            }
            store16(y + (size_t)base, v);
        }
        done = nv * V;
    }
    for (int i = done + tid; i < n; i += stride) {
        float v = to_float(y[i]);
        if constexpr (BIAS) v += to_float(bias[(i / inner) % c]);
        y[i] = finish<T>(v, act);
    }
}

extern "C" __global__ void dwconv3x3_vendor_gelu_f32(float* y, int n, int act) { gelu_body<float, false>(y, nullptr, n, 1, 1, act); }
extern "C" __global__ void dwconv3x3_vendor_gelu_f16(__half* y, int n, int act) { gelu_body<__half, false>(y, nullptr, n, 1, 1, act); }
extern "C" __global__ void dwconv3x3_vendor_gelu_bf16(__nv_bfloat16* y, int n, int act) {
    gelu_body<__nv_bfloat16, false>(y, nullptr, n, 1, 1, act);
}
extern "C" __global__ void dwconv3x3_vendor_bias_gelu_f32(float* y, const float* bias, int n, int c, int inner, int act) {
    gelu_body<float, true>(y, bias, n, c, inner, act);
}
extern "C" __global__ void dwconv3x3_vendor_bias_gelu_f16(__half* y, const __half* bias, int n, int c, int inner, int act) {
    gelu_body<__half, true>(y, bias, n, c, inner, act);
}
extern "C" __global__ void dwconv3x3_vendor_bias_gelu_bf16(__nv_bfloat16* y, const __nv_bfloat16* bias, int n, int c, int inner, int act) {
    gelu_body<__nv_bfloat16, true>(y, bias, n, c, inner, act);
}
