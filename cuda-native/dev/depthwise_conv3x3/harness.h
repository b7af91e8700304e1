// Launchers shared by the harness translation units (compiled in parallel; see run.sh).
#pragma once
#include <cuda_runtime.h>

enum DT { F32 = 0, F16 = 1, BF16 = 2 };

// Kernels of commit 69a26a8 (the previous design), launched as DepthwiseConv3x3.launchCustom did.
void old_launch(int dt, bool nhwc, int s, const void* x, const void* w, const void* b, const void* r, void* y, int n, int c,
                int h, int wd, int act, cudaStream_t st);
// New NCHW kernels: access width vw ∈ {1,2,4,8}, strip rows rps ≤ 8.
void nchw_launch(int dt, int s, int vw, const void* x, const void* w, const void* b, const void* r, void* y, int planes,
                 int c, int h, int wd, int ho, int wo, int rps, int act, cudaStream_t st);
// New NHWC kernels: cfg 0 = shipped, 1 = CPT 4 WC 2 (1 block/SM budget), 2 = CPT 2 WC 2, 3 = CPT 2 WC 4
// (both 2 blocks/SM); see k_nhwc.cu.
void nhwc_launch(int dt, int s, int cfg, const void* x, const void* w, const void* b, const void* r, void* y, int n, int h,
                 int wd, int c, int ho, int wo, int rps, int cb, int act, int vec, cudaStream_t st);
int nhwc_cpt(int dt, int s, int cfg);
int nhwc_wc(int dt, int s, int cfg);

// Shipped launch geometry (DepthwiseConv3x3Heuristics), shared by every program here.
// Strip rows: balanced over ceil(Ho/TH) strips; halved (>= 2) while the grid has fewer than 1024 threads per SM.
inline int dw_pick_rps(int ho, int th, long long threadsPerRowStrip, int sms) {
    int strips = (ho + th - 1) / th, rps = (ho + strips - 1) / strips;
    while (rps > 2 && threadsPerRowStrip * ((ho + rps - 1) / rps) < 1024LL * sms) rps = (rps + 1) / 2;
    return rps;
}
// NHWC channel groups per block: all of them up to 64, else the largest divisor in [16, 64], else 32.
inline int dw_pick_cb(int groups) {
    if (groups <= 64) return groups;
    for (int d = 64; d >= 16; --d) if (groups % d == 0) return d;
    return 32;
}
