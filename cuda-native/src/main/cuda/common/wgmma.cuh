// Hopper (sm_90a) warpgroup MMA helpers of the grouped GEMM's wgmma kernels: shared-memory matrix
// descriptors for 128-byte-swizzled tiles, wgmma.mma_async m64n128k16 with fp32 accumulators for f16 and
// bf16 (both operands from shared memory), and the fences and group waits around it (PTX ISA, "Asynchronous
// Warpgroup Level Matrix Multiply-Accumulate").
// Accumulator layout of m64nNk16 (per warpgroup of 128 threads): warp w of the group owns rows 16w..16w+15;
// with g = lane / 4 and q = lane % 4, d[4i + 0..1] = (row 16w + g, cols 8i + 2q, +1) and d[4i + 2..3] =
// (row 16w + g + 8, the same cols), i = 0 .. N/8 - 1.
// Shared layouts (128-byte swizzle: the 16-byte chunk c of 128-byte row r of a 1024-byte-aligned atom of 8 rows
// sits at chunk c ^ (r % 8)):
//   K-major (A = X rows, B = W[g] as [N, K]): row = an M (or N) index, 64 k per row; 8-row atoms 1024 bytes apart
//     (SBO = 1024, LBO unused); step j of k16 starts 32·j bytes into the row.
//   MN-major (B = W[g] as [K, N], transposed by the instruction): row = a k index, 64 n per row; blocks of
//     64 n are LBO bytes apart, atoms of 8 k rows SBO = 1024 bytes apart; step j of k16 starts 2048·j bytes in.
// Compiled only into the sm_90a SASS (callers guard with __CUDA_ARCH_FEAT_SM90_ALL).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <type_traits>

namespace gapfill {
namespace gg {

// Descriptor of a 128-byte-swizzled operand tile: start address, leading and stride byte offsets (all in
// 16-byte units), swizzle mode 1 (128 bytes) in bits 62-63, base offset 0 (atoms are 1024-byte aligned).
__device__ __forceinline__ uint64_t wgmma_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes) {
    uint64_t d = 0;
    d |= (uint64_t)((smem_addr & 0x3FFFF) >> 4);
    d |= (uint64_t)((lbo_bytes >> 4) & 0x3FFF) << 16;
    d |= (uint64_t)((sbo_bytes >> 4) & 0x3FFF) << 32;
    d |= (uint64_t)1 << 62;
    return d;
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Makes this thread's generic-proxy writes to shared memory (cp.async included, once waited for) visible to
// the async proxy that wgmma reads shared memory through.
__device__ __forceinline__ void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Keeps the compiler from moving accumulator reads or writes across an asynchronous wgmma.
__device__ __forceinline__ void wgmma_pin(float& r) { asm volatile("" : "+f"(r)::"memory"); }

// d += A·B for one m64nNk16 step (N = 128 or 256; T = __half or __nv_bfloat16): A K-major (TRANS_A = 0) or MN-major
// (TRANS_A = 1, bmm_wg's transposed A), B K-major (TRANS_B = 0) or MN-major (TRANS_B = 1); the instruction transposes
// the MN-major ones. scale-d is always 1: the accumulators start at zero. The accumulators of n256 are the n8 blocks
// 0..31 in order, i.e. two m64n128 halves laid end to end.
#define GG_WGMMA_D64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define GG_WGMMA_ACC64(d) \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define GG_WGMMA_D128 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"
#define GG_WGMMA_ACC128(d) GG_WGMMA_ACC64(d), GG_WGMMA_ACC64((d + 64))  // the second m64n128 half: d[64] .. d[127]
#define GG_WGMMA_ASM(SHAPE, TYPE, DREGS, ACC, DESCS, TRANSOPS, SCALEOP)                                            \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SCALEOP ", 0;\n"                                            \
                 "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE " " DREGS ", " DESCS ", p, 1, 1, " TRANSOPS ";\n}\n" \
                 : ACC(d)                                                                                     \
                 : "l"(desc_a), "l"(desc_b), "n"(TRANS_A), "n"(TRANS_B), "r"(1))

template <typename T, int TRANS_B, int TRANS_A = 0>
__device__ __forceinline__ void wgmma_n128(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
    if constexpr (std::is_same<T, __half>::value) {
        GG_WGMMA_ASM("m64n128k16", "f16", GG_WGMMA_D64, GG_WGMMA_ACC64, "%64, %65", "%66, %67", "%68");
    } else {
        GG_WGMMA_ASM("m64n128k16", "bf16", GG_WGMMA_D64, GG_WGMMA_ACC64, "%64, %65", "%66, %67", "%68");
    }
}
template <typename T, int TRANS_B, int TRANS_A = 0>
__device__ __forceinline__ void wgmma_n256(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
    if constexpr (std::is_same<T, __half>::value) {
        GG_WGMMA_ASM("m64n256k16", "f16", GG_WGMMA_D128, GG_WGMMA_ACC128, "%128, %129", "%130, %131", "%132");
    } else {
        GG_WGMMA_ASM("m64n256k16", "bf16", GG_WGMMA_D128, GG_WGMMA_ACC128, "%128, %129", "%130, %131", "%132");
    }
}

}  // namespace gg
}  // namespace gapfill
