// Shared device helpers for every Gapfill op: dtype conversion to and from fp32, 16-byte vector
// access, warp reductions. Header-only; every kernel file includes what it needs.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

namespace gapfill {

// ---- scalar conversions (round to nearest even on the way down) ----
__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// ---- 16-byte vectors: VecN<T>::N elements of T in one uint4 ----
template <typename T> struct Vec16 {
    static constexpr int N = 16 / sizeof(T);
    union { uint4 raw; T v[N]; };
};

template <typename T> __device__ __forceinline__ Vec16<T> load16(const T* p) {
    Vec16<T> r; r.raw = *reinterpret_cast<const uint4*>(p); return r;
}
template <typename T> __device__ __forceinline__ void store16(T* p, const Vec16<T>& v) {
    *reinterpret_cast<uint4*>(p) = v.raw;
}
// Streaming load that does not keep the line in L1 (data read once).
template <typename T> __device__ __forceinline__ Vec16<T> load16_stream(const T* p) {
    Vec16<T> r; r.raw = __ldcs(reinterpret_cast<const uint4*>(p)); return r;
}

// ---- warp reductions ----
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

}  // namespace gapfill
