// The NCHW whole-plane kernel (src/main/cuda/depthwise_conv3x3/nchw_plane.cu, stride 1) for the dev harness plane_main.cu.
#pragma once
#include <cuda_runtime.h>

// Launch geometry, as DepthwiseConv3x3Heuristics.planeGrid picks it: SEG output columns and R output rows per
// thread item, P planes per chunk, threads per block, dynamic shared memory, chunks, grid (persistent: ≤ resident
// blocks; or one block per chunk), blocks per SM, vecOut. ok = false: the plane kernel does not apply.
struct PlaneGeo { bool ok; int seg, lv, R, P, threads, smem, chunks, grid, bps, vecOut, stage, variant; };
// gridMode 0: persistent (min(chunks, resident blocks)); 1: one block per chunk; > 1: that many blocks (tests).
// pOverride > 0 forces P (rounded to the alignment unit), rOverride > 0 forces R; noStage: outputs stored from registers
// (the shipped rule stages them only when a thread's row piece is narrower than 16 bytes).
PlaneGeo plane_geometry(int dt, int s, const void* x, const void* y, const void* r, int planes, int h, int wd, int gridMode,
                        int pOverride, int rOverride, bool noStage = false, int variant = 0,
                        int threadTarget = 0);  // 0: the shipped rule
// variant 0: the kernel in src/main/cuda; 1: prev (nchw_plane_prev.cu, an earlier revision), when built with PLANE_AB=1
// (run_plane.sh); the same geometry for both.
const char* plane_variant_name(int variant);
void plane_run(int dt, int s, const PlaneGeo& g, const void* x, const void* w, const void* b, const void* r, void* y,
               int planes, int c, int h, int wd, int act, cudaStream_t st);
