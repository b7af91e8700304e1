// depthwise_conv3x3/vendor_gelu: y[i] = gelu(y[i]) in place — the elementwise pass the VENDOR path of
// depthwise_conv3x3 appends after cuDNN's convolution (+ bias + residual) because cuDNN's activation
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

template <typename T>
__device__ __forceinline__ void gelu_body(T* __restrict__ y, int n, int act) {
    constexpr int V = Vec16<T>::N;
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = gridDim.x * blockDim.x;
    int done = 0;
    if (aligned16(y)) {
        const int nv = n / V;  // full vectors
        for (int i = tid; i < nv; i += stride) {
            Vec16<T> v = load16_stream(y + (size_t)i * V);
#pragma unroll
            for (int e = 0; e < V; ++e) v.v[e] = finish<T>(to_float(v.v[e]), act);
            store16(y + (size_t)i * V, v);
        }
        done = nv * V;
    }
    for (int i = done + tid; i < n; i += stride) y[i] = finish<T>(to_float(y[i]), act);
}

extern "C" __global__ void dwconv3x3_vendor_gelu_f32(float* y, int n, int act) { gelu_body(y, n, act); }
extern "C" __global__ void dwconv3x3_vendor_gelu_f16(__half* y, int n, int act) { gelu_body(y, n, act); }
extern "C" __global__ void dwconv3x3_vendor_gelu_bf16(__nv_bfloat16* y, int n, int act) { gelu_body(y, n, act); }
