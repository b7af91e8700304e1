// Host launchers of one staged variant's F16 kernel (stage.py writes <v>.cu = its decode_mma.cu + one of these macros):
// D = 128 (GQA_AB_LAUNCHER, ab/main.cu) or D = 64 (GQA_AB_LAUNCHER_D64, paged/main64.cu).
#pragma once
#include <cuda_runtime.h>

struct GqaAbArgs {
    const void* q; const void* k; const void* v; const int* table; const int* lens; void* out; float* lse;
    float* part_o; float* part_lse; int* counters;
    int batch, hq, hkv, g, head_tiles, splits, chunk, max_len, max_pages, page_shift;
    long long stride_b, stride_h, stride_l, page_stride;
    float scale_log2;
};

#define GQA_AB_LAUNCHER_D(FN, KERNEL, NS, D)                                                                        \
    void FN(const GqaAbArgs& x, cudaStream_t st) {                                                                 \
        constexpr int smem = NS::Cfg<D>::SMEM;                                                                     \
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

#define GQA_AB_LAUNCHER(FN, KERNEL, NS) GQA_AB_LAUNCHER_D(FN, KERNEL, NS, 128)
#define GQA_AB_LAUNCHER_D64(FN, KERNEL, NS) GQA_AB_LAUNCHER_D(FN, KERNEL, NS, 64)

// The same launch with a thread-block cluster of all `splits` blocks of a (KV head, head tile, sequence) along x,
// when 2 ≤ splits ≤ 16 and the GPU can co-schedule such a cluster (cudaOccupancyMaxActiveClusters > 0); otherwise a
// plain launch (cluster of one block). For kernels that merge their splits through distributed shared memory.
#define GQA_AB_CLUSTER_LAUNCHER(FN, KERNEL, NS)                                                                     \
    void FN(const GqaAbArgs& x, cudaStream_t st) {                                                                 \
        constexpr int smem = NS::Cfg<128>::SMEM;                                                                   \
        static bool init = false;                                                                                  \
        if (!init) {                                                                                               \
            cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);                       \
            cudaFuncSetAttribute(KERNEL, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);                       \
            init = true;                                                                                           \
        }                                                                                                          \
        cudaLaunchConfig_t cfg = {};                                                                               \
        cfg.gridDim = dim3(x.splits, x.hkv * x.head_tiles, x.batch);                                               \
        cfg.blockDim = dim3(NS::kThreads, 1, 1);                                                                   \
        cfg.dynamicSmemBytes = smem;                                                                               \
        cfg.stream = st;                                                                                           \
        cudaLaunchAttribute attr[1];                                                                               \
        attr[0].id = cudaLaunchAttributeClusterDimension;                                                          \
        attr[0].val.clusterDim.x = x.splits;                                                                       \
        attr[0].val.clusterDim.y = 1;                                                                              \
        attr[0].val.clusterDim.z = 1;                                                                              \
        cfg.attrs = attr;                                                                                          \
        cfg.numAttrs = 1;                                                                                          \
        int clusters = 0;                                                                                          \
        if (x.splits < 2 || x.splits > 16 ||                                                                       \
            cudaOccupancyMaxActiveClusters(&clusters, (void*)KERNEL, &cfg) != cudaSuccess || clusters == 0) {       \
            cudaGetLastError();                                                                                    \
            cfg.numAttrs = 0;                                                                                      \
        }                                                                                                          \
        cudaLaunchKernelEx(&cfg, KERNEL, (const __half*)x.q, (const __half*)x.k, (const __half*)x.v, x.table,       \
                           x.lens, (__half*)x.out, x.lse, x.part_o, x.part_lse, x.counters, x.hq, x.hkv, x.g,       \
                           x.head_tiles, x.splits, x.chunk, x.max_len, x.max_pages, x.page_shift, x.stride_b,      \
                           x.stride_h, x.stride_l, x.page_stride, x.scale_log2);                                  \
    }

// The split kernel without its ticket and merge, then the merge as a second kernel of grid (KV heads × head tiles,
// sequences) (stage_pdl.py). PDL: the second launch is a programmatic dependent launch (the first kernel lets it
// start early with griddepcontrol.launch_dependents; it waits in griddepcontrol.wait for the first grid's memory);
// otherwise an ordinary second launch on the stream. NS::merge_f16_d128 is the merge kernel of the variant.
#define GQA_AB_MERGE_LAUNCH_IMPL(FN, KERNEL, NS, PDL)                                                                \
    GQA_AB_LAUNCHER(FN##_split, KERNEL, NS)                                                                        \
    void FN(const GqaAbArgs& x, cudaStream_t st) {                                                                 \
        FN##_split(x, st);                                                                                         \
        cudaLaunchConfig_t cfg = {};                                                                               \
        cfg.gridDim = dim3(x.hkv * x.head_tiles, x.batch, 1);                                                      \
        cfg.blockDim = dim3(NS::kThreads, 1, 1);                                                                   \
        cfg.stream = st;                                                                                           \
        cudaLaunchAttribute attr[1];                                                                               \
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;                                           \
        attr[0].val.programmaticStreamSerializationAllowed = 1;                                                    \
        cfg.attrs = attr;                                                                                          \
        cfg.numAttrs = (PDL) ? 1 : 0;                                                                              \
        cudaLaunchKernelEx(&cfg, NS::merge_f16_d128, (const int*)x.lens, (__half*)x.out, x.lse,                     \
                           (const float*)x.part_o, (const float*)x.part_lse, x.hq, x.hkv, x.g, x.head_tiles,        \
                           x.splits, x.chunk, x.max_len);                                                          \
    }
#define GQA_AB_PDL_LAUNCHER(FN, KERNEL, NS) GQA_AB_MERGE_LAUNCH_IMPL(FN, KERNEL, NS, true)
#define GQA_AB_TWO_LAUNCHER(FN, KERNEL, NS) GQA_AB_MERGE_LAUNCH_IMPL(FN, KERNEL, NS, false)
