// The previous kernels (commit 69a26a8), symbols renamed old_*, for side-by-side timing.
#include "depthwise_conv3x3.cuh"
#include <type_traits>
#include "harness.h"
namespace oldk {
#include "old_nhwc.cu"
#include "old_nchw.cu"
}  // namespace oldk
using namespace oldk;

void old_launch(int dt, bool nhwc, int s, const void* x, const void* w, const void* b, const void* r, void* y, int n, int c,
                int h, int wd, int act, cudaStream_t st) {
    int esz = dt == F32 ? 4 : 2, v = 16 / esz, th = s == 1 ? 4 : 2, ho = (h + s - 1) / s, wo = (wd + s - 1) / s;
    bool al = ((uintptr_t)x % 16 == 0) && ((uintptr_t)y % 16 == 0) && (!r || (uintptr_t)r % 16 == 0);
    if (nhwc) {
        int cv = (c + v - 1) / v, lanes = 1;
        while (lanes < cv && lanes < 32) lanes <<= 1;
        int cols = 256 / lanes;
        dim3 grid((unsigned)((long long)n * ((ho + th - 1) / th) * ((wo + cols - 1) / cols)), (cv + lanes - 1) / lanes), block(lanes, cols);
        int vec = al && c % v == 0;
#define L(T, K) K<<<grid, block, 0, st>>>((const T*)x, (const T*)w, (const T*)b, (const T*)r, (T*)y, n, h, wd, c, ho, wo, act, vec)
        if (dt == F32) { if (s == 1) L(float, old_dwconv3x3_nhwc_f32_s1); else L(float, old_dwconv3x3_nhwc_f32_s2); }
        if (dt == F16) { if (s == 1) L(__half, old_dwconv3x3_nhwc_f16_s1); else L(__half, old_dwconv3x3_nhwc_f16_s2); }
        if (dt == BF16) { if (s == 1) L(__nv_bfloat16, old_dwconv3x3_nhwc_bf16_s1); else L(__nv_bfloat16, old_dwconv3x3_nhwc_bf16_s2); }
#undef L
    } else {
        long long threads = (long long)n * c * ((ho + th - 1) / th) * ((wo + v - 1) / v);
        dim3 grid((unsigned)((threads + 255) / 256)), block(256);
        int vec = al && wd % v == 0 && wo % v == 0;
#define L(T, K) K<<<grid, block, 0, st>>>((const T*)x, (const T*)w, (const T*)b, (const T*)r, (T*)y, n, c, h, wd, ho, wo, act, vec)
        if (dt == F32) { if (s == 1) L(float, old_dwconv3x3_nchw_f32_s1); else L(float, old_dwconv3x3_nchw_f32_s2); }
        if (dt == F16) { if (s == 1) L(__half, old_dwconv3x3_nchw_f16_s1); else L(__half, old_dwconv3x3_nchw_f16_s2); }
        if (dt == BF16) { if (s == 1) L(__nv_bfloat16, old_dwconv3x3_nchw_bf16_s1); else L(__nv_bfloat16, old_dwconv3x3_nchw_bf16_s2); }
#undef L
    }
}
