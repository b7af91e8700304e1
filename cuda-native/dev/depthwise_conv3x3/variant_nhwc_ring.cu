// The NHWC row-ring kernel against the register-pipelined nhwc.cu (variant_main.cu, README.md "NHWC row ring").
// It was an experiment here until the H100 run at a91ff10 (h100-a91ff10-ring.txt: 1.13-1.46x on NONE/RELU,
// bit-identical); since then the kernel is src/main/cuda/depthwise_conv3x3/nhwc_ring.cu, included below, so the
// harness times the shipped code. Configurations (variant.h): 0 "ring4" = the shipped 4-channel entry points, 1 "ring8"
// = the shipped template with a ring of 8 rows, 2 "c2w4" and 3 "c2w2" = the shipped 2-channel entry points (measured
// here first: h100-241f285-ring-cpt2.txt). The host emulation of the kernel body (variant_emu.cpp) checked
// the ring protocol before any GPU was lent; it retired with the GPU check (git history keeps it).
#include "nhwc_ring.cu"
#include "harness.h"
#include "variant.h"

#include <algorithm>
#include <cstdint>

// ---------------------------------------------------------------- host: geometry (pure but for the occupancy)
namespace {
constexpr int kMaxThreads = 256;
int ringSlots(int cfg) { return cfg == 1 ? 8 : 4; }
// configurations 4-6: the row-epilogue copies of 0, 2, 3 (same geometry)
int baseOf(int cfg) { return cfg == 4 ? 0 : cfg == 5 ? 2 : cfg == 6 ? 3 : cfg; }
// channels and columns per thread, channel groups per tile (≤ 128 channels): ring4/ring8 4×2, c2w4 2×4 and c2w2 2×2
// (the shipped entry points of nhwc_ring.cu; DepthwiseConv3x3Heuristics.ringConfig picks among ring4, c2w4, c2w2)
int cptOf(int cfg) { cfg = baseOf(cfg); return cfg >= 2 ? 2 : 4; }
int wcOf(int cfg) { cfg = baseOf(cfg); return cfg == 3 ? 2 : cfg == 2 ? 4 : 2; }
bool aligned(const void* p, int bytes) { return p == nullptr || (uintptr_t)p % bytes == 0; }
int blocksPerSM(int cfg, int dt, int threads, size_t smem);  // cudaOccupancyMaxActiveBlocksPerMultiprocessor (below)
int smCount();                                               // (below; stubs in variant_emu.cpp)
}  // namespace

const char* ring_name(int cfg) {
    static const char* names[] = {"ring4", "ring8", "c2w4", "c2w2", "p_ring4", "p_c2w4", "p_c2w2"};
    return names[cfg];
}

RingGeo ring_geometry(int cfg, int dt, const void* x, const void* y, const void* r, int n, int h, int wd, int c, int rpsOverride) {
    RingGeo g{};
    const int kCpt = cptOf(cfg), kWc = wcOf(cfg), kMaxGroupsPerBlock = 128 / kCpt;
    g.cpt = kCpt;
    g.wc = kWc;
    const int groups = (c + kCpt - 1) / kCpt;
    g.cgs = std::min(groups, kMaxGroupsPerBlock);  // ≤ 128 channels per tile: TW ≥ 16 columns, halo ≤ 2/16
    g.chunks = (groups + g.cgs - 1) / g.cgs;
    g.vec = c % 8 == 0 && aligned(x, 16) && aligned(y, kCpt * 2) && aligned(r, kCpt * 2);
    // columns: the widest tile (≤ 256 threads) that wastes the fewest columns of W
    const int twsMax = std::max(1, std::min(kMaxThreads / g.cgs, (wd + kWc - 1) / kWc));
    int bestWaste = 1 << 30;
    for (int t = twsMax; t >= std::max(1, twsMax / 2); --t) {
        const int tiles = (wd + t * kWc - 1) / (t * kWc), waste = tiles * t * kWc - wd;
        if (waste < bestWaste) { bestWaste = waste; g.tws = t; g.colTiles = tiles; }
    }
    g.threads = g.cgs * g.tws;
    g.smem = (size_t)ringSlots(cfg) * (g.tws * kWc + 2) * g.cgs * kCpt * 2;
    g.blocksPerSM = blocksPerSM(cfg, dt, g.threads, g.smem);
    // strips: minimise the busiest SM's rows, ceil(blocks / SMs) × (rps + 2 halo rows + ~4 rows of pipeline
    // fill), over the strip counts that fill every block slot of the GPU once (when the shape allows)
    const int sms = smCount();
    const long long perStrip = (long long)g.colTiles * g.chunks * n;
    const long long need = std::min((long long)std::max(1, g.blocksPerSM) * sms, perStrip * h);
    long long best = -1;
    for (int s = 1; s <= h; ++s) {
        const int rps = (h + s - 1) / s;
        if ((h + rps - 1) / rps != s || perStrip * s < need) continue;  // same rps as a smaller s, or too few blocks
        const long long cost = (perStrip * s + sms - 1) / sms * (rps + 6);
        if (best < 0 || cost < best) { best = cost; g.rps = rps; }
    }
    if (rpsOverride > 0) g.rps = std::min(rpsOverride, h);
    g.strips = (h + g.rps - 1) / g.rps;
    g.blocks = perStrip * g.strips;
    return g;
}
// ---------------------------------------------------------------- kernels and launch
extern "C" __global__ void __launch_bounds__(256, 2) ring8_f16(const __half* x, const __half* w, const __half* bias,
        const __half* res, __half* y, int H, int W, int C, int cgs, int tws, int colTiles, int chunks, int strips, int rps,
        int act, int vec) {
    dw_ring<__half, 4, 2, 8>(x, w, bias, res, y, H, W, C, cgs, tws, colTiles, chunks, strips, rps, act, vec);
}
extern "C" __global__ void __launch_bounds__(256, 2) ring8_bf16(const __nv_bfloat16* x, const __nv_bfloat16* w,
        const __nv_bfloat16* bias, const __nv_bfloat16* res, __nv_bfloat16* y, int H, int W, int C, int cgs, int tws,
        int colTiles, int chunks, int strips, int rps, int act, int vec) {
    dw_ring<__nv_bfloat16, 4, 2, 8>(x, w, bias, res, y, H, W, C, cgs, tws, colTiles, chunks, strips, rps, act, vec);
}
#define RING_LAUNCH(T, K) K<<<(unsigned)g.blocks, g.threads, g.smem, st>>>((const T*)x, (const T*)w, (const T*)b,   \
        (const T*)r, (T*)y, h, wd, c, g.cgs, g.tws, g.colTiles, g.chunks, g.strips, g.rps, act, g.vec ? 1 : 0)

const void* prev_kernel(int geometry, int dt);  // k_ring_prev.cu
namespace {
const void* kernelOf(int cfg, int dt) {
    if (cfg >= 4) return prev_kernel(cfg - 4, dt);
    const void* f16[] = {(const void*)dwconv3x3_nhwc_ring_f16_s1, (const void*)ring8_f16, (const void*)dwconv3x3_nhwc_ring_c2w4_f16_s1,
                         (const void*)dwconv3x3_nhwc_ring_c2w2_f16_s1};
    const void* bf16[] = {(const void*)dwconv3x3_nhwc_ring_bf16_s1, (const void*)ring8_bf16, (const void*)dwconv3x3_nhwc_ring_c2w4_bf16_s1,
                          (const void*)dwconv3x3_nhwc_ring_c2w2_bf16_s1};
    return dt == F16 ? f16[cfg] : bf16[cfg];
}
int blocksPerSM(int cfg, int dt, int threads, size_t smem) {
    int nb = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, kernelOf(cfg, dt), threads, smem);
    return nb;
}
int smCount() {
    int dev = 0, sms = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    return sms;
}
}  // namespace

void ring_run(int cfg, int dt, const RingGeo& g, const void* x, const void* w, const void* b, const void* r, void* y, int h,
              int wd, int c, int act, cudaStream_t st) {
    if (cfg >= 4) {
        int H = h, Wd = wd, C = c, cgs = g.cgs, tws = g.tws, colTiles = g.colTiles, chunks = g.chunks, strips = g.strips,
            rps = g.rps, a = act, vec = g.vec ? 1 : 0;
        void* args[] = {(void*)&x, (void*)&w, (void*)&b, (void*)&r, (void*)&y, &H, &Wd, &C, &cgs, &tws, &colTiles, &chunks,
                        &strips, &rps, &a, &vec};
        cudaLaunchKernel(kernelOf(cfg, dt), dim3((unsigned)g.blocks), dim3(g.threads), args, g.smem, st);
        return;
    }
    if (dt == F16) {
        if (cfg == 0) RING_LAUNCH(__half, dwconv3x3_nhwc_ring_f16_s1);
        else if (cfg == 1) RING_LAUNCH(__half, ring8_f16);
        else if (cfg == 2) RING_LAUNCH(__half, dwconv3x3_nhwc_ring_c2w4_f16_s1);
        else RING_LAUNCH(__half, dwconv3x3_nhwc_ring_c2w2_f16_s1);
    } else {
        if (cfg == 0) RING_LAUNCH(__nv_bfloat16, dwconv3x3_nhwc_ring_bf16_s1);
        else if (cfg == 1) RING_LAUNCH(__nv_bfloat16, ring8_bf16);
        else if (cfg == 2) RING_LAUNCH(__nv_bfloat16, dwconv3x3_nhwc_ring_c2w4_bf16_s1);
        else RING_LAUNCH(__nv_bfloat16, dwconv3x3_nhwc_ring_c2w2_bf16_s1);
    }
}
