// Host launcher of one staged variant's F16 D=64 kernel (stage_paged.py writes <v>.cu = its decode_mma.cu + this).
#pragma once
#include <cuda_runtime.h>

struct GqaPgArgs {
    const void* q; const void* k; const void* v; const int* table; const int* lens; void* out; float* lse;
    float* part_o; float* part_lse; int* counters;
    int batch, hq, hkv, g, head_tiles, splits, chunk, max_len, max_pages, page_shift;
    long long stride_b, stride_h, stride_l, page_stride;
    float scale_log2;
};

#define GQA_PG_LAUNCHER(FN, KERNEL, NS)                                                                             \
    void FN(const GqaPgArgs& x, cudaStream_t st) {                                                                 \
        constexpr int smem = NS::Cfg<64>::SMEM;                                                                    \
        static bool init = false;                                                                                  \
        if (!init) {                                                                                               \
            cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);                       \
            init = true;                                                                                           \
        }                                                                                                          \
        KERNEL<<<dim3(x.splits, x.hkv * x.head_tiles, x.batch), NS::kThreads, smem, st>>>(                          \
            (const __half*)x.q, (const __half*)x.k, (const __half*)x.v, x.table, x.lens, (__half*)x.out, x.lse,     \
            x.part_o, x.part_lse, x.counters, x.hq, x.hkv, x.g, x.head_tiles, x.splits, x.chunk, x.max_len,         \
            x.max_pages, x.page_shift, x.stride_b, x.stride_h, x.stride_l, x.page_stride, x.scale_log2);            \
    }
