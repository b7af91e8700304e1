// The shipped NHWC kernels (src/main/cuda/depthwise_conv3x3/nhwc.cu: per dtype and stride the fastest
// spill-free one of the three configurations below in the H100 run), the three configurations of the
// same template for comparison (alt0: CPT 4 × WC 2, 1 block/SM register budget; alt1: CPT 2 × WC 2 and
// alt2: CPT 2 × WC 4, both capped at 128 registers), and their launcher.
#include "nhwc.cu"
#include "harness.h"

#define ALT(T, TN, S, NAME, LB, CPT, WC)                                                                           \
    extern "C" __global__ void __launch_bounds__(256, LB) NAME##_##TN##_s##S(                                       \
        const T* x, const T* w, const T* bias, const T* res, T* y, int N, int H, int W, int C, int Ho, int Wo,       \
        int rps, int cb, int act, int vec) {                                                                        \
        dw_nhwc<T, S, CPT, WC>(x, w, bias, res, y, N, H, W, C, Ho, Wo, rps, cb, act, vec);          \
    }
#define ALTS(S)                                                               \
    ALT(float, f32, S, alt0, 1, 4, 2) ALT(__half, f16, S, alt0, 1, 4, 2) ALT(__nv_bfloat16, bf16, S, alt0, 1, 4, 2) \
    ALT(float, f32, S, alt1, 2, 2, 2) ALT(__half, f16, S, alt1, 2, 2, 2)      \
    ALT(__nv_bfloat16, bf16, S, alt1, 2, 2, 2) ALT(float, f32, S, alt2, 2, 2, 4) \
    ALT(__half, f16, S, alt2, 2, 2, 4) ALT(__nv_bfloat16, bf16, S, alt2, 2, 2, 4)
ALTS(1)
ALTS(2)

// cfg 0 = shipped (as DepthwiseConv3x3Heuristics.nhwcChannelsPerThread/nhwcColumnsPerThread), 1 = alt0,
// 2 = alt1, 3 = alt2
int nhwc_cpt(int dt, int s, int cfg) {
    if (cfg == 0) return dt != F32 && s == 1 ? 4 : 2;
    return cfg == 1 ? 4 : 2;
}
int nhwc_wc(int dt, int s, int cfg) {
    if (cfg == 0) return (dt != F32 && s == 1) || (dt == F32 && s == 2) ? 2 : 4;
    return cfg == 3 ? 4 : 2;
}

void nhwc_launch(int dt, int s, int cfg, const void* x, const void* w, const void* b, const void* r, void* y, int n, int h,
                 int wd, int c, int ho, int wo, int rps, int cb, int act, int vec, cudaStream_t st) {
    int cpt = nhwc_cpt(dt, s, cfg), wc = nhwc_wc(dt, s, cfg);
    long long groups = (c + cpt - 1) / cpt, chunks = (groups + cb - 1) / cb, pairs = (wo + wc - 1) / wc,
              strips = (ho + rps - 1) / rps, threads = (long long)n * strips * chunks * pairs * cb;
    dim3 grid((unsigned)((threads + 255) / 256)), block(256);
#define L(T, K) K<<<grid, block, 0, st>>>((const T*)x, (const T*)w, (const T*)b, (const T*)r, (T*)y, n, h, wd, c, ho, wo, rps, cb, act, vec)
#define LK(T, TN, S) if (s == S) { if (cfg == 0) L(T, dwconv3x3_nhwc_##TN##_s##S); else if (cfg == 1) L(T, alt0_##TN##_s##S); else if (cfg == 2) L(T, alt1_##TN##_s##S); else L(T, alt2_##TN##_s##S); }
    if (dt == F32) { LK(float, f32, 1); LK(float, f32, 2); }
    if (dt == F16) { LK(__half, f16, 1); LK(__half, f16, 2); }
    if (dt == BF16) { LK(__nv_bfloat16, bf16, 1); LK(__nv_bfloat16, bf16, 2); }
#undef LK
#undef L
}
