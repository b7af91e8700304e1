// What the gqa_decode dev harnesses share (fixedcost/main.cu, cluster/cluster_ab.cu): inputs as a hash of the
// logical index, rounded to the cache dtype, identical on the host (for the fp64 reference) and the device.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

__host__ __device__ inline float hash_unit(unsigned long long i, unsigned seed) {  // [-1, 1)
    unsigned x = (unsigned)i * 0x9E3779B9u ^ (unsigned)(i >> 32) * 0x27D4EB2Fu ^ seed * 0x85EBCA6Bu;
    x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16;
    return (float)(x >> 8) * (1.0f / 8388608.0f) - 1.0f;
}
template <typename T> __host__ __device__ inline T to_t(float x);
template <> __host__ __device__ inline __half to_t<__half>(float x) { return __float2half_rn(x); }
template <> __host__ __device__ inline __nv_bfloat16 to_t<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
static float host_round(bool bf16, float x) {
    return bf16 ? __bfloat162float(__float2bfloat16_rn(x)) : __half2float(__float2half_rn(x));
}

template <typename T> __global__ void fill_q(T* q, long long n, unsigned seed) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        q[i] = to_t<T>(2.f * hash_unit(i, seed));
}
// Logical element (b, h, l, d) of K and V (index ((b·Hkv + h)·L + l)·D + d) at its place in the layout; NaN at and
// past the (clamped) length. Rows of a paged pool that no position maps to keep the NaN of the memset before.
template <typename T>
__global__ void fill_kv(T* k, T* v, const int* lens, const int* table, int batch, int hkv, int lmax, int D, int mp, int page_shift,
                        long long sb, long long sh, long long sl, long long ps, unsigned seed) {
    const long long n = (long long)batch * hkv * lmax * D;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const int d = (int)(i % D);
        const int l = (int)((i / D) % lmax);
        const int h = (int)((i / ((long long)D * lmax)) % hkv);
        const int b = (int)(i / ((long long)D * lmax * hkv));
        const long long off = table == nullptr ? b * sb + h * sh + l * sl + d
                                               : (long long)table[b * mp + (l >> page_shift)] * ps + h * sh + (l & ((1 << page_shift) - 1)) * sl + d;
        const int len = min(max(lens[b], 0), lmax);
        const bool dead = l >= len;
        uint16_t nanbits = 0x7fff;
        T nan; memcpy(&nan, &nanbits, 2);
        k[off] = dead ? nan : to_t<T>(hash_unit(i, seed + 1));
        v[off] = dead ? nan : to_t<T>(hash_unit(i, seed + 2));
    }
}
