// The shipped grouped GEMM kernels plus the harness-only variants (GG_EXPERIMENTAL), in their own
// translation unit so they compile in parallel with harness.cu. Exports a name -> kernel lookup and the
// launches of the vendor-path passes.
#define GG_EXPERIMENTAL 1
#include "grouped_gemm/grouped_gemm.cu"
#include "grouped_gemm/vendor_passes.cu"
#include <cstring>

#define K1(n) if (std::strcmp(name, #n) == 0) return (const void*)n;
#define KL(cfg, tn) K1(gg_##cfg##_##tn##_kn_plain) K1(gg_##cfg##_##tn##_kn_swiglu) K1(gg_##cfg##_##tn##_nk_plain) K1(gg_##cfg##_##tn##_nk_swiglu)
const void* gg_kernel(const char* name) {
    KL(m16, f16) KL(m16, bf16) KL(m64, f16) KL(m64, bf16)
    KL(d16, f16) KL(d16, bf16) KL(d32, f16) KL(d32, bf16) KL(d16w, f16) KL(d16w, bf16)
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
