// Tensor-core and asynchronous-copy helpers (sm_80+ PTX): ldmatrix, mma.sync m16n8k16 with fp32
// accumulation, cp.async 16-byte copies, 32x32 warp tiles. Header-only; used by bmm/bmm_small.cu and bmm/bmm_team.cu.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

namespace gapfill {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- asynchronous global -> shared copies (16 bytes, bypassing L1) ----
__device__ __forceinline__ void cp_async16(void* smem_dst, const void* gmem_src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(smem_dst)), "l"(gmem_src) : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() {
    asm volatile("cp.async.wait_all;\n" ::: "memory");
}

// ---- ldmatrix: four 8x8 b16 matrices; lane l supplies the row address of matrix l/8, row l%8 ----
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* row_ptr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(row_ptr)));
}
// Same, each 8x8 matrix transposed on the way into registers.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row_ptr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(row_ptr)));
}

// ---- mma.sync m16n8k16, row-major A fragment (4 regs), column-major B fragment (2 regs), fp32 C/D ----
template <typename T> struct MmaOp;

template <> struct MmaOp<__half> {
    static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};

template <> struct MmaOp<__nv_bfloat16> {
    static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};

// ---- fragments of 16x16 sub-tiles of operands staged in shared memory in their stored layout ----
// lane l addresses matrix q = l / 8, row rr = l % 8. A fragment of op(A) sub-tile (mt, ks):
// matrices (m0-7,k0-7), (m8-15,k0-7), (m0-7,k8-15), (m8-15,k8-15); sA is [m][k], or [k][m] when TA.
template <typename T, bool TA>
__device__ __forceinline__ void frag_a(uint32_t (&f)[4], const T* sA, int stride, int mt, int ks, int q, int rr) {
    if (!TA) ldmatrix_x4(f, sA + (mt * 16 + (q & 1) * 8 + rr) * stride + ks * 16 + (q >> 1) * 8);
    else ldmatrix_x4_trans(f, sA + (ks * 16 + (q >> 1) * 8 + rr) * stride + mt * 16 + (q & 1) * 8);
}
// B fragments of op(B) sub-tile (ks, nt): (n0-7,k0-7), (n0-7,k8-15), (n8-15,k0-7), (n8-15,k8-15);
// sB is [k][n], or [n][k] when TB.
template <typename T, bool TB>
__device__ __forceinline__ void frag_b(uint32_t (&f)[4], const T* sB, int stride, int nt, int ks, int q, int rr) {
    if (!TB) ldmatrix_x4_trans(f, sB + (ks * 16 + (q & 1) * 8 + rr) * stride + nt * 16 + (q >> 1) * 8);
    else ldmatrix_x4(f, sB + (nt * 16 + (q >> 1) * 8 + rr) * stride + ks * 16 + (q & 1) * 8);
}

// One warp's 32x32 output tile at 16x16 sub-tiles (mt0, nt0) .. (mt0+1, nt0+1), the second row / column
// of sub-tiles only where m1 / n1 (warp-uniform), over ksteps k16 steps (k padding zero in shared
// memory). acc[i][h][0..1]: row (mt0+i)*16 + lane/4, cols nt0*16 + h*8 + 2*(lane%4) + {0,1}; [2..3]: row + 8.
template <typename T, bool TA, bool TB>
__device__ __forceinline__ void mma_tile32(const T* a, int astride, const T* b, int bstride, int mt0, int nt0, bool m1, bool n1,
                                           int ksteps, float (&acc)[2][4][4]) {
    const int lane = threadIdx.x & 31;
    const int q = lane >> 3, rr = lane & 7;
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int h = 0; h < 4; ++h)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][h][e] = 0.f;
    uint32_t af[2][4] = {}, bf[2][4] = {};
#pragma unroll 2
    for (int ks = 0; ks < ksteps; ++ks) {
        frag_a<T, TA>(af[0], a, astride, mt0, ks, q, rr);
        if (m1) frag_a<T, TA>(af[1], a, astride, mt0 + 1, ks, q, rr);
        frag_b<T, TB>(bf[0], b, bstride, nt0, ks, q, rr);
        if (n1) frag_b<T, TB>(bf[1], b, bstride, nt0 + 1, ks, q, rr);
        MmaOp<T>::run(acc[0][0], af[0], bf[0][0], bf[0][1]);
        MmaOp<T>::run(acc[0][1], af[0], bf[0][2], bf[0][3]);
        if (n1) {
            MmaOp<T>::run(acc[0][2], af[0], bf[1][0], bf[1][1]);
            MmaOp<T>::run(acc[0][3], af[0], bf[1][2], bf[1][3]);
        }
        if (m1) {
            MmaOp<T>::run(acc[1][0], af[1], bf[0][0], bf[0][1]);
            MmaOp<T>::run(acc[1][1], af[1], bf[0][2], bf[0][3]);
            if (n1) {
                MmaOp<T>::run(acc[1][2], af[1], bf[1][0], bf[1][1]);
                MmaOp<T>::run(acc[1][3], af[1], bf[1][2], bf[1][3]);
            }
        }
    }
}

// Two fp32 values rounded to the 16-bit type and packed (low half first).
template <typename T> __device__ __forceinline__ uint32_t pack2(float x, float y);
template <> __device__ __forceinline__ uint32_t pack2<__half>(float x, float y) {
    __half2 h = __floats2half2_rn(x, y);
    return *reinterpret_cast<uint32_t*>(&h);
}
template <> __device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float x, float y) {
    __nv_bfloat162 h = __floats2bfloat162_rn(x, y);
    return *reinterpret_cast<uint32_t*>(&h);
}

}  // namespace gapfill
