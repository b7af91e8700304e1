// The NHWC "row ring" variant (variant_nhwc_ring.cu, README.md): F16/BF16, stride 1 only. Configurations:
//   0 "ring4":  CPT 4 channels × WC 2 columns per thread, a ring of 4 input rows (3 in flight): the shipped
//               src/main/cuda/depthwise_conv3x3/nhwc_ring.cu entry points
//   1 "ring8":  the same template with a ring of 8 rows (7 in flight): tells whether bytes in flight still limit
#pragma once
#include <cuda_runtime.h>

// 4-6 "p_ring4", "p_c2w4", "p_c2w2": configurations 0, 2, 3 of an earlier revision of nhwc_ring.cu (k_ring_prev.cu;
// run_variant.sh generates nhwc_ring_prev.cu from git, revision RING_PREV)
const int kRingConfigs = 7;
const char* ring_name(int cfg);
// Launch geometry: cgs channel groups × tws column groups per block (threads = cgs·tws), colTiles × chunks ×
// strips × N blocks, rps output rows per strip, smem bytes of ring; vec = 16-byte copies and CPT-wide stores.
struct RingGeo { int cpt, wc, cgs, tws, colTiles, chunks, strips, rps, threads, blocksPerSM; long long blocks; size_t smem; bool vec; };
// The launcher's choice for (N, H, W, C) and these pointers; rpsOverride > 0 forces the strip height.
RingGeo ring_geometry(int cfg, int dt, const void* x, const void* y, const void* r, int n, int h, int wd, int c, int rpsOverride);
// Launches configuration cfg on an F16/BF16 stride-1 problem with the geometry g from ring_geometry.
void ring_run(int cfg, int dt, const RingGeo& g, const void* x, const void* w, const void* b, const void* r, void* y, int h,
              int wd, int c, int act, cudaStream_t st);
