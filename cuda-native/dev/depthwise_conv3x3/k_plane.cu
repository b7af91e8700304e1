// The shipped whole-plane NCHW kernels (src/main/cuda/depthwise_conv3x3/nchw_plane.cu), their geometry and launcher.
#include "nchw_plane.cu"
#include "harness.h"
#include "plane.h"

#include <algorithm>
#include <cstdint>

#define PLANE_FN(T, TN, S, SEG, LV) ((const void*)dwconv3x3_nchw_plane_##TN##_s##S##_g##SEG##_l##LV)
static const void* plane_fn(int dt, int s, int seg) {
#define PS(T, TN, L4, G8S1, G8S2)                                                                                   \
    if (s == 1) switch (seg) { case 1: return PLANE_FN(T, TN, 1, 1, 1); case 2: return PLANE_FN(T, TN, 1, 2, 2);    \
        case 4: return PLANE_FN(T, TN, 1, 4, 4); case 7: return PLANE_FN(T, TN, 1, 7, 1); default: return G8S1; }   \
    switch (seg) { case 1: return PLANE_FN(T, TN, 2, 1, 2); case 2: return PLANE_FN(T, TN, 2, 2, 4);                \
        case 4: return PLANE_FN(T, TN, 2, 4, L4); case 7: return PLANE_FN(T, TN, 2, 7, 2); default: return G8S2; }
    if (dt == F32) { PS(float, f32, 4, nullptr, nullptr) }
    if (dt == F16) { PS(__half, f16, 8, PLANE_FN(__half, f16, 1, 8, 8), PLANE_FN(__half, f16, 2, 8, 8)) }
    PS(__nv_bfloat16, bf16, 8, PLANE_FN(__nv_bfloat16, bf16, 1, 8, 8), PLANE_FN(__nv_bfloat16, bf16, 2, 8, 8))
#undef PS
}

static int gcd(int a, int b) { while (b) { int t = a % b; a = b; b = t; } return a; }

// DepthwiseConv3x3Heuristics.planeSegment / planeGrid (PLANE_THREAD_TARGET 128, PLANE_SMEM_CAP 80 KiB); the grid as
// DepthwiseConv3x3.launchPlane sizes it (min(chunks, resident blocks)).
PlaneGeo plane_geometry(int dt, int s, const void* x, const void* y, const void* r, int planes, int h, int wd, int gridMode,
                        int pOverride, int rOverride, bool noStage) {
    PlaneGeo g{};
    const int es = dt == F32 ? 4 : 2;
    const int ho = (h + s - 1) / s, wo = (wd + s - 1) / s;
    if ((s == 2 && wd % 2) || (uintptr_t)x % 16) return g;
    int seg = 1;
    if (wo % 7 == 0 && wo <= 28) seg = 7;
    else for (int c = dt == F32 ? 4 : 8; c > 1; c /= 2) if (wo % c == 0) { seg = c; break; }
    const int nseg = wo / seg;
    if (nseg > 256) return g;
    int strips = std::min((ho + 7) / 8, 256 / nseg);
    int R = rOverride > 0 ? rOverride : (ho + strips - 1) / strips;
    strips = (ho + R - 1) / R;
    const int perPlane = strips * nseg;
    if (perPlane > 256) return g;
    const long long planeBytes = (long long)h * wd * es, outBytes = (long long)ho * wo * es, cap = 80 * 1024;
    if (2 * planeBytes > cap) return g;
    const int unitIn = 16 / gcd(16, (int)(planeBytes % 16)), unitOut = 16 / gcd(16, (int)(outBytes % 16));
    const int lcm = unitIn / gcd(unitIn, unitOut) * unitOut;
    const int perBlock = std::max(128, perPlane) / perPlane;
    const bool stage = !noStage && (uintptr_t)y % 16 == 0 && perBlock >= lcm;
    const int unit = stage ? lcm : unitIn;
    int P = perBlock / unit * unit;
    if (pOverride > 0) P = std::min(P, std::max(unit, pOverride / unit * unit));
    while (P >= unit && 2 * P * planeBytes + (stage ? P * outBytes : 0) > cap) P -= unit;
    if (P < unit) return g;
    g.ok = true; g.seg = seg; g.lv = std::min((s * seg) & -(s * seg), 16 / es); g.R = R; g.P = P;
    g.threads = std::max(64, (P * perPlane + 31) / 32 * 32);
    g.smem = (int)(2 * P * planeBytes + (stage ? P * outBytes : 0));
    g.stage = stage;
    g.chunks = (planes + P - 1) / P;
    const int sv = std::min((seg & -seg) * es, 16);
    g.vecOut = (uintptr_t)y % sv == 0 && (uintptr_t)r % sv == 0;
    const void* fn = plane_fn(dt, s, seg);
    cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)cap);  // any geometry of this cap
    int bps = 0, dev = 0, sms = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, fn, g.threads, g.smem);
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    g.bps = bps;
    g.grid = gridMode == 0 ? std::min(g.chunks, std::max(1, bps) * sms) : gridMode == 1 ? g.chunks : std::min(g.chunks, gridMode);
    return g;
}

void plane_run(int dt, int s, const PlaneGeo& g, const void* x, const void* w, const void* b, const void* r, void* y,
               int planes, int c, int h, int wd, int act, cudaStream_t st) {
    const int ho = (h + s - 1) / s, wo = (wd + s - 1) / s;
    int P = g.P, R = g.R, vec = g.vecOut, stage = g.stage;
    void* args[] = {(void*)&x, (void*)&w, (void*)&b, (void*)&r, (void*)&y, &planes, &c, &h, &wd,
                    (void*)&ho, (void*)&wo, &P, &R, &act, &vec, &stage};
    cudaLaunchKernel(plane_fn(dt, s, g.seg), dim3(g.grid), dim3(g.threads), args, g.smem, st);
}
