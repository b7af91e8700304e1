// out[i] = alpha * a[i] + beta * b[i] — the foundation's end-to-end kernel (load, fp32 math, one
// rounding, store), used by the GPU smoke suite to prove the bundle, loader and launcher work.
// Regime: any contiguous tensor, F32/F16/BF16. Floor: 3·n·sizeof(T) bytes over copy bandwidth.
// Grid-stride loop with 16-byte vectors when every pointer is 16-byte aligned, scalar otherwise.
// Limits: n < 2^31 (validated in Java).
#include "gapfill_types.cuh"

using namespace gapfill;

template <typename T>
__device__ __forceinline__ void scale_add_body(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                               int n, float alpha, float beta) {
    constexpr int V = Vec16<T>::N;
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = gridDim.x * blockDim.x;
    const bool vec = aligned16(a) && aligned16(b) && aligned16(out);
    int done = 0;
    if (vec) {
        const int nv = n / V;  // full vectors
        for (int i = tid; i < nv; i += stride) {
            Vec16<T> x = load16_stream(a + (size_t)i * V);
            Vec16<T> y = load16_stream(b + (size_t)i * V);
            Vec16<T> r;
#pragma unroll
            for (int j = 0; j < V; ++j) r.v[j] = from_float<T>(fmaf(alpha, to_float(x.v[j]), beta * to_float(y.v[j])));
            store16(out + (size_t)i * V, r);
        }
        done = nv * V;
    }
    for (int i = done + tid; i < n; i += stride) {  // tail, or everything when unaligned
        out[i] = from_float<T>(fmaf(alpha, to_float(a[i]), beta * to_float(b[i])));
    }
}

extern "C" __global__ void scale_add_f32(const float* a, const float* b, float* out, int n, float alpha, float beta) {
    scale_add_body(a, b, out, n, alpha, beta);
}
extern "C" __global__ void scale_add_f16(const __half* a, const __half* b, __half* out, int n, float alpha, float beta) {
    scale_add_body(a, b, out, n, alpha, beta);
}
extern "C" __global__ void scale_add_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* out, int n,
                                          float alpha, float beta) {
    scale_add_body(a, b, out, n, alpha, beta);
}

// Test-only kernel for the reliability suite: writes through a null pointer, which turns the context
// sticky (cudaErrorIllegalAddress). Never launched by any op.
extern "C" __global__ void fault_for_tests(int* p) { p[threadIdx.x] = 1; }
