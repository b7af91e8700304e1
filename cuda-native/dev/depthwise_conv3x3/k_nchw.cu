// The shipped NCHW kernels (src/main/cuda/depthwise_conv3x3/nchw.cu) and their launcher.
#include "nchw.cu"
#include "harness.h"

void nchw_launch(int dt, int s, int vw, const void* x, const void* w, const void* b, const void* r, void* y, int planes,
                 int c, int h, int wd, int ho, int wo, int rps, int act, cudaStream_t st) {
    long long nv = (wo + vw - 1) / vw, strips = (ho + rps - 1) / rps, threads = (long long)planes * strips * nv;
    dim3 grid((unsigned)((threads + 255) / 256)), block(256);
#define L(T, TN, S, V) if (s == S && vw == V) dwconv3x3_nchw_##TN##_s##S##_v##V<<<grid, block, 0, st>>>( \
        (const T*)x, (const T*)w, (const T*)b, (const T*)r, (T*)y, planes, c, h, wd, ho, wo, rps, act)
#define LS(T, TN, V) L(T, TN, 1, V); L(T, TN, 2, V)
    if (dt == F32) { LS(float, f32, 1); LS(float, f32, 2); LS(float, f32, 4); }
    if (dt == F16) { LS(__half, f16, 1); LS(__half, f16, 2); LS(__half, f16, 4); LS(__half, f16, 8); }
    if (dt == BF16) { LS(__nv_bfloat16, bf16, 1); LS(__nv_bfloat16, bf16, 2); LS(__nv_bfloat16, bf16, 4); LS(__nv_bfloat16, bf16, 8); }
#undef LS
#undef L
}
