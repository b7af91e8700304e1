// The shipped grouped GEMM kernels plus the harness-only variants (GG_EXPERIMENTAL), in their own
// translation unit so they compile in parallel with harness.cu. Exports a name -> kernel lookup and the
// launches of the vendor-path passes.
#define GG_EXPERIMENTAL 1
#include "grouped_gemm/grouped_gemm.cu"
#include "grouped_gemm/vendor_passes.cu"
#include <cstring>

// Harness-only mma variants for ~64+ rows per expert (T = 512 at E = 64 runs m64 at 56-64 % of the floor because
// about half the experts spill into a second, nearly empty 64-row block; see h100-c2335e1-m128.txt):
//         name   BM   BN  warps  stages CTAs/SM
GG_CONFIG(m128,  128, 128, 2, 2, 3, 2)   // one row block per expert up to 128 rows; 64x64 warp tiles
GG_CONFIG(m64s4,  64, 128, 2, 2, 4, 2)   // m64 with a fourth stage
GG_CONFIG(m64t8,  64, 128, 2, 4, 3, 2)   // m64 with 8 warps (32x32 warp tiles): twice the warps per SM
// For T = 1 gate-up (KN, SwiGLU): m16 reads at ~51 % of DRAM peak with ~2 CTAs per SM (256 tiles of 64 columns at E=64,
// ncu h100-run1-ncu.txt) and ~37 KB in flight per CTA; deeper rings put 2-3x the bytes in flight per SM.
GG_CONFIG(m16s6,  16,  64, 1, 4, 6, 3)
GG_CONFIG(m16s8,  16,  64, 1, 4, 8, 2)

#define K1(n) if (std::strcmp(name, #n) == 0) return (const void*)n;
#define KL(cfg, tn) K1(gg_##cfg##_##tn##_kn_plain) K1(gg_##cfg##_##tn##_kn_swiglu) K1(gg_##cfg##_##tn##_nk_plain) K1(gg_##cfg##_##tn##_nk_swiglu)
const void* gg_kernel(const char* name) {
    KL(m16, f16) KL(m16, bf16) KL(m64, f16) KL(m64, bf16)
    KL(d16, f16) KL(d16, bf16) KL(d32, f16) KL(d32, bf16) KL(d16w, f16) KL(d16w, bf16)
    KL(m128, f16) KL(m128, bf16) KL(m64s4, f16) KL(m64s4, bf16) KL(m64t8, f16) KL(m64t8, bf16)
    KL(m16s6, f16) KL(m16s6, bf16) KL(m16s8, f16) KL(m16s8, bf16)
    KL(w128, f16) KL(w128, bf16) KL(w128n2, f16) KL(w128n2, bf16)
    KL(w64, f16) KL(w64, bf16) KL(w64n2, f16) KL(w64n2, bf16)
    KL(w128s6, f16) KL(w128s6, bf16) KL(w64s6, f16) KL(w64s6, bf16) KL(w64n2s5, f16) KL(w64n2s5, bf16)
    KL(w128t, f16) KL(w128t, bf16) KL(w64w, f16) KL(w64w, bf16)
    KL(w64s3, f16) KL(w64s3, bf16) KL(w64s8, f16) KL(w64s8, bf16)
    return nullptr;
}

void gg_launch_gather(bool bf, const void* X, const int* gather, void* Xg, int T_total, int X_rows, int K, int blocks, cudaStream_t st) {
    if (bf) gg_gather_bf16<<<blocks, 256, 0, st>>>((const __nv_bfloat16*)X, gather, (__nv_bfloat16*)Xg, T_total, X_rows, K);
    else gg_gather_f16<<<blocks, 256, 0, st>>>((const __half*)X, gather, (__half*)Xg, T_total, X_rows, K);
}

// c32: A is the fp32 GEMM result; otherwise A is in the output dtype (the grouped-batched path)
void gg_launch_epilogue(bool bf, bool c32, const void* A, const float* scale, void* Y, int T_total, int N, int swiglu, int blocks,
                        cudaStream_t st) {
    if (c32 && bf) gg_epilogue_bf16<<<blocks, 256, 0, st>>>((const float*)A, scale, (__nv_bfloat16*)Y, T_total, N, swiglu);
    else if (c32) gg_epilogue_f16<<<blocks, 256, 0, st>>>((const float*)A, scale, (__half*)Y, T_total, N, swiglu);
    else if (bf) gg_epilogue_bf16_from_bf16<<<blocks, 256, 0, st>>>((const __nv_bfloat16*)A, scale, (__nv_bfloat16*)Y, T_total, N, swiglu);
    else gg_epilogue_f16_from_f16<<<blocks, 256, 0, st>>>((const __half*)A, scale, (__half*)Y, T_total, N, swiglu);
}
