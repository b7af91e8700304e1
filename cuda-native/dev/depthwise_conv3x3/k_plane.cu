// The shipped whole-plane NCHW kernels (src/main/cuda/depthwise_conv3x3/nchw_plane.cu), their geometry and launcher.
#include "nchw_plane.cu"
#include "harness.h"
#include "plane.h"

#include <algorithm>
#include <cstdint>

#include "plane_table.h"
PLANE_TABLE(plane_fn, dwconv3x3_nchw_plane_)

#if PLANE_AB
const void* prev_plane_fn(int dt, int seg);
#endif
static const void* variant_fn(int variant, int dt, int seg) {
#if PLANE_AB
    if (variant == 1) return prev_plane_fn(dt, seg);
#endif
    (void)variant;
    return plane_fn(dt, seg);
}
const char* plane_variant_name(int variant) { return variant == 1 ? "prev" : "plane"; }

static int gcd(int a, int b) { while (b) { int t = a % b; a = b; b = t; } return a; }

// DepthwiseConv3x3Heuristics.planeSegment / planeGrid (PLANE_THREAD_TARGET 128, PLANE_SMEM_CAP 80 KiB); the grid as
// DepthwiseConv3x3.launchPlane sizes it (min(chunks, resident blocks)).
PlaneGeo plane_geometry(int dt, int s, const void* x, const void* y, const void* r, int planes, int h, int wd, int gridMode,
                        int pOverride, int rOverride, bool noStage, int variant, int threadTarget) {
    PlaneGeo g{};
    const int es = dt == F32 ? 4 : 2;
    if (s != 1 || (uintptr_t)x % 16) return g;
    int seg = 1;
    if (wd % 7 == 0 && wd <= 28) seg = 7;
    else for (int c = dt == F32 ? 4 : 8; c > 1; c /= 2) if (wd % c == 0) { seg = c; break; }
    const int nseg = wd / seg;
    if (nseg > 256) return g;
    int strips = std::min((h + 7) / 8, 256 / nseg);
    int R = rOverride > 0 ? rOverride : (h + strips - 1) / strips;
    strips = (h + R - 1) / R;
    const int perPlane = strips * nseg;
    if (perPlane > 256) return g;
    const long long planeBytes = (long long)h * wd * es, cap = 80 * 1024;
    if (2 * planeBytes > cap) return g;
    const int unit = 16 / gcd(16, (int)(planeBytes % 16));
    const bool stage = !noStage && (uintptr_t)y % 16 == 0 && std::min((seg & -seg) * es, 16) < 16;
    const int buffers = stage ? 3 : 2;
    if (threadTarget <= 0) {  // DepthwiseConv3x3Heuristics.planeGrid: 256 for 16-bit planes filling < 80 % of 128 threads
        const int busy = 128 / perPlane * perPlane;
        threadTarget = es == 2 && busy > 0 && busy * 5 < std::max(64, (busy + 31) / 32 * 32) * 4 ? 256 : 128;
    }
    int P = std::max(threadTarget, perPlane) / perPlane / unit * unit;
    if (P < unit && unit * perPlane <= 256) P = unit;
    if (pOverride > 0) P = std::min(P, std::max(unit, pOverride / unit * unit));
    while (P >= unit && buffers * P * planeBytes > cap) P -= unit;
    if (P < unit) return g;
    g.ok = true; g.seg = seg; g.lv = std::min(seg & -seg, 16 / es); g.R = R; g.P = P;
    g.threads = std::max(64, (P * perPlane + 31) / 32 * 32);
    g.smem = (int)(buffers * P * planeBytes);
    g.stage = stage;
    g.chunks = (planes + P - 1) / P;
    const int sv = std::min((seg & -seg) * es, 16);
    g.vecOut = (uintptr_t)y % sv == 0 && (uintptr_t)r % sv == 0;
    g.variant = variant;
    const void* fn = variant_fn(variant, dt, seg);
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
    (void)s;
    int P = g.P, R = g.R, vec = g.vecOut, stage = g.stage;
    void* args[] = {(void*)&x, (void*)&w, (void*)&b, (void*)&r, (void*)&y, &planes, &c, &h, &wd, &P, &R, &act, &vec, &stage};
    cudaLaunchKernel(variant_fn(g.variant, dt, g.seg), dim3(g.grid), dim3(g.threads), args, g.smem, st);
}
