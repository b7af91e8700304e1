// What main.cu gets from the kernel translation units (shipped.cu, variants.cu built once per FC_V): the host stub of
// each kernel, for cudaLaunchKernel. All kernels share decode_mma.cu's parameter list:
//   (q, k, v, table, lens, out, lse, part_o, part_lse, counters, hq, hkv, g, head_tiles, splits, chunk, max_len,
//    max_pages, page_shift, stride_b, stride_h, stride_l, page_stride, scale_log2)
#pragma once
const void* ship_kernel(bool bf16, int d);  // shipped.cu: gqa_decode_mma_<t>_d<D> of decode_mma.cu as in the tree
int ship_smem(int d);                        // shipped.cu: gqa_mma::Cfg<D>::SMEM (the variants use the same)
const void* fc1_kernel(bool bf16, int d);    // variants.cu FC_V=1: SYNC 1 (one thread, fence.sc, CG grid-sync pattern)
const void* fc2_kernel(bool bf16, int d);    // variants.cu FC_V=2: SYNC 2 (one thread, atom.acq_rel.gpu, no SC fence)
const void* fc3_kernel(bool bf16, int d);    // variants.cu FC_V=3: SYNC 2 + EARLY_TABLE
const void* fc4_kernel(bool bf16, int d);    // variants.cu FC_V=4: SYNC 3 (no ticket, no merge; timing bound only)
