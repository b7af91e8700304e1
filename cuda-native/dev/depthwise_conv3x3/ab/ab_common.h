// What the A/B programs (main.cu, main_fastact.cu) share: the staged builds' launchers, the L2 flush, the shipped
// launch geometry, and the A/B shapes, activations and seeded random inputs.
#pragma once
#include "harness.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

using NchwLaunch = void (*)(int dt, int s, int vw, const void* x, const void* w, const void* b, const void* r, void* y, int planes,
                            int c, int h, int wd, int ho, int wo, int rps, int act, cudaStream_t st);
using NhwcLaunch = void (*)(int dt, int s, int cfg, const void* x, const void* w, const void* b, const void* r, void* y, int n,
                            int h, int wd, int c, int ho, int wo, int rps, int cb, int act, int vec, cudaStream_t st);
// A's build (stage.sh renames its symbols a_*); B's keeps the shipped names (harness.h).
void a_nchw_launch(int dt, int s, int vw, const void* x, const void* w, const void* b, const void* r, void* y, int planes,
                   int c, int h, int wd, int ho, int wo, int rps, int act, cudaStream_t st);
void a_nhwc_launch(int dt, int s, int cfg, const void* x, const void* w, const void* b, const void* r, void* y, int n, int h,
                   int wd, int c, int ho, int wo, int rps, int cb, int act, int vec, cudaStream_t st);

static int numSMs;

__global__ void flush_read(const uint4* p, size_t n, int* sink) {
    uint32_t acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) *sink = 1;  // never (the buffer is zero): keeps the loads
}

// The timing setup both programs use: one stream, a 256 MiB zero buffer whose read flushes the L2 before every timed
// launch, two events. time_us(f): flush, then f() between the events, in µs.
struct Timer {
    cudaStream_t st;
    void* flush;
    size_t bytes = 256u << 20;
    int* sink;
    cudaEvent_t e0, e1;
    Timer() {
        CK(cudaStreamCreate(&st));
        CK(cudaMalloc(&flush, bytes)); CK(cudaMemset(flush, 0, bytes)); CK(cudaMalloc(&sink, 4));
        CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    }
    template <typename F> float time_us(F&& f) {
        flush_read<<<numSMs * 4, 512, 0, st>>>((const uint4*)flush, bytes / 16, sink);
        CK(cudaEventRecord(e0, st));
        f();
        CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1));
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
        return ms * 1000.f;
    }
};

// One build's kernels with the shipped geometry (DepthwiseConv3x3Heuristics): NCHW the widest access dividing W and
// strips of <= 8 rows; NHWC CPT 4 x WC 2, strips of <= 16 rows, channel chunks. Stride 1, no residual.
static void launch_shipped(NchwLaunch nchwFn, NhwcLaunch nhwcFn, int dt, bool nhwc, int n, int c, int h, int w, int act,
                           const void* x, const void* wt, const void* b, void* y, cudaStream_t st) {
    if (!nhwc) {
        int vw = 1;
        for (int v = 8; v >= 2; v /= 2) if (w % v == 0) { vw = v; break; }
        int rps = dw_pick_rps(h, 8, (long long)n * c * ((w + vw - 1) / vw), numSMs);
        nchwFn(dt, 1, vw, x, wt, b, nullptr, y, n * c, c, h, w, h, w, rps, act, st);
    } else {
        int cpt = 4, wc = 2, groups = (c + cpt - 1) / cpt, cb = dw_pick_cb(groups);
        long long perStrip = (long long)n * ((groups + cb - 1) / cb) * cb * ((w + wc - 1) / wc);
        int rps = dw_pick_rps(h, 16, perStrip, numSMs);
        nhwcFn(dt, 1, 0, x, wt, b, nullptr, y, n, h, w, c, h, w, rps, cb, act, c % cpt == 0, st);
    }
}

static const int kShapes[3][4] = {{32, 256, 56, 56}, {8, 96, 112, 112}, {64, 1024, 14, 14}};  // N, C, H, W
static const char* const kActName[] = {"NONE", "RELU", "RELU6", "SILU", "GELU_ERF", "GELU_TANH"};
static const int kActs[] = {0, 3, 5, 4};

// Inputs of one (shape, dtype): x uniform in [-4, 4], weights and bias in [-0.5, 0.5], rounded to the dtype, drawn in
// this order from the program's one generator (seed 7), so both programs see the same data.
struct Inputs { std::vector<uint16_t> x, w, b; };
static Inputs draw_inputs(std::mt19937& g, int dt, size_t el, int c) {
    Inputs in{std::vector<uint16_t>(el), std::vector<uint16_t>(c * 9), std::vector<uint16_t>(c)};
    std::uniform_real_distribution<float> u(-4.f, 4.f), uw(-0.5f, 0.5f);
    auto cvt = [&](float f) -> uint16_t {
        uint16_t r;
        if (dt == F16) { __half t = __float2half_rn(f); memcpy(&r, &t, 2); } else { __nv_bfloat16 t = __float2bfloat16_rn(f); memcpy(&r, &t, 2); }
        return r;
    };
    for (auto& v : in.x) v = cvt(u(g));
    for (auto& v : in.w) v = cvt(uw(g));
    for (auto& v : in.b) v = cvt(uw(g));
    return in;
}
