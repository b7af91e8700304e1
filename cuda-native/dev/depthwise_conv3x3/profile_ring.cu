// A few launches of the shipped ring kernel (nhwc_ring.cu, through variant_nhwc_ring.cu's geometry and launcher) for
// ncu to profile: F16 NHWC 32x56x56x256 stride 1, bias on, NONE then SILU, 3 launches each. Inputs are a fixed
// non-zero pattern (values do not matter for the profile; run_variant.sh checks correctness). Built and profiled by
// profile_ring.sh; prints nothing but the launch geometry.
#include "harness.h"
#include "variant.h"

#include <cuda_fp16.h>

#include <cstdio>
#include <cstdlib>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

int main() {
    const int n = 32, h = 56, w = 56, c = 256;
    const size_t nx = (size_t)n * h * w * c;
    void *x, *y, *wt, *b;
    CK(cudaMalloc(&x, nx * 2)); CK(cudaMalloc(&y, nx * 2)); CK(cudaMalloc(&wt, (size_t)c * 9 * 2)); CK(cudaMalloc(&b, (size_t)c * 2));
    CK(cudaMemset(x, 0x3c, nx * 2)); CK(cudaMemset(wt, 0x30, (size_t)c * 18)); CK(cudaMemset(b, 0x2c, (size_t)c * 2));
    const RingGeo g = ring_geometry(0, F16, x, y, nullptr, n, h, w, c, 0);
    printf("ring4 F16 %dx%dx%dx%d: %d threads, %lld blocks, %d rows per strip, %zu B smem, %d/SM\n", n, h, w, c, g.threads, g.blocks,
           g.rps, g.smem, g.blocksPerSM);
    for (int act : {0, 3})
        for (int rep = 0; rep < 3; ++rep) ring_run(0, F16, g, x, wt, b, nullptr, y, h, w, c, act, 0);
    CK(cudaDeviceSynchronize());
    return 0;
}
