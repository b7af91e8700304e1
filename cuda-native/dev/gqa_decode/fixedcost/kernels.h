// What main.cu gets from the kernel translation units (shipped.cu, variants.cu built once per FC_V): the host stub of
// each kernel, for cudaLaunchKernel, and its launch configuration. All kernels share decode_mma.cu's parameter list:
//   (q, k, v, table, lens, out, lse, part_o, part_lse, counters, hq, hkv, g, head_tiles, splits, chunk, max_len,
//    max_pages, page_shift, stride_b, stride_h, stride_l, page_stride, scale_log2)
#pragma once
const void* ship_kernel(bool bf16, int d);  // shipped.cu: gqa_decode_mma_<t>_d<D> of decode_mma.cu as in the tree
int ship_smem(int d);                        // shipped.cu: gqa_mma::Cfg<D>::SMEM
int ship_threads();                          // shipped.cu: gqa_mma::kThreads (128)
int ship_stages(int d);                      // shipped.cu: gqa_mma::Cfg<D>::NST
// variants.cu, FC_V = V: fcV_kernel (nullptr where the variant has no kernel for d), fcV_threads (32 · warps),
// fcV_smem (dynamic shared memory, 0 where no kernel), fcV_stages (ring stages per warp).
#define FC_DECL(V)                                 \
    const void* fc##V##_kernel(bool bf16, int d); \
    int fc##V##_threads();                        \
    int fc##V##_smem(int d);                      \
    int fc##V##_stages(int d);
FC_DECL(0)  // SYNC 0, 4 warps: the shipped code through the parameterised path
FC_DECL(1)  // SYNC 1 (one thread, fence.sc, CG grid-sync pattern)
FC_DECL(2)  // SYNC 2 (one thread, atom.acq_rel.gpu, no SC fence)
FC_DECL(3)  // SYNC 2 + EARLY_TABLE
FC_DECL(4)  // SYNC 3 (no ticket, no merge; timing bound only)
FC_DECL(5)  // SYNC 2, 8 warps per block
FC_DECL(6)  // SYNC 2, 16 warps per block (no d256)
#undef FC_DECL
