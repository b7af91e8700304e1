// Exact-order FFMA 4x4 tiles from shared memory (F32 batched matmul: bmm/bmm_small.cu, bmm/bmm_team.cu).
// Operands as stored: A [m][k] (or [k][m] when TA), B [k][n] (or [n][k] when TB), row strides in
// elements, 16-byte aligned rows and a k padding to a multiple of 4 that is read but never multiplied.
#pragma once

namespace gapfill {

// The 4x4 block of op(A) rows r0.., k k0.. as av[i][kk].
template <bool TA>
__device__ __forceinline__ void ffma_load_a4(const float* sA, int stride, int r0, int k0, float (&av)[4][4]) {
#pragma unroll
    for (int t = 0; t < 4; ++t) {
        if (!TA) {  // sA: [m][k]: row r0+t, k0..k0+3
            const float4 v = *reinterpret_cast<const float4*>(sA + (r0 + t) * stride + k0);
            av[t][0] = v.x; av[t][1] = v.y; av[t][2] = v.z; av[t][3] = v.w;
        } else {    // sA: [k][m]: k k0+t, rows r0..r0+3
            const float4 v = *reinterpret_cast<const float4*>(sA + (k0 + t) * stride + r0);
            av[0][t] = v.x; av[1][t] = v.y; av[2][t] = v.z; av[3][t] = v.w;
        }
    }
}
// The 4x4 block of op(B) k k0.., cols c0.. as bv[kk][jj].
template <bool TB>
__device__ __forceinline__ void ffma_load_b4(const float* sB, int stride, int k0, int c0, float (&bv)[4][4]) {
#pragma unroll
    for (int t = 0; t < 4; ++t) {
        if (!TB) {  // sB: [k][n]: k k0+t, cols c0..c0+3
            const float4 v = *reinterpret_cast<const float4*>(sB + (k0 + t) * stride + c0);
            bv[t][0] = v.x; bv[t][1] = v.y; bv[t][2] = v.z; bv[t][3] = v.w;
        } else {    // sB: [n][k]: col c0+t, k k0..k0+3
            const float4 v = *reinterpret_cast<const float4*>(sB + (c0 + t) * stride + k0);
            bv[0][t] = v.x; bv[1][t] = v.y; bv[2][t] = v.z; bv[3][t] = v.w;
        }
    }
}

// acc[i][jj] = sum over kk = 0, 1, ..., k-1 in order of fmaf(op(A)[r0+i][kk], op(B)[kk][c0+jj], acc),
// starting from acc = 0: bit for bit the sequential fmaf sum, whatever the tile or the thread.
template <bool TA, bool TB>
__device__ __forceinline__ void ffma_tile4x4(const float* sA, int astride, const float* sB, int bstride, int r0, int c0, int k,
                                             float (&acc)[4][4]) {
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) acc[i][jj] = 0.f;
    const int kfull = k / 4 * 4;  // k steps in groups of 4; the tail one by one (no zero terms)
    float av[4][4], bv[4][4];
    for (int k0 = 0; k0 < kfull; k0 += 4) {
        ffma_load_a4<TA>(sA, astride, r0, k0, av);
        ffma_load_b4<TB>(sB, bstride, k0, c0, bv);
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int jj = 0; jj < 4; ++jj) acc[i][jj] = fmaf(av[i][kk], bv[kk][jj], acc[i][jj]);
    }
    if (kfull < k) {  // padded block: the padding columns are loaded but never multiplied in
        ffma_load_a4<TA>(sA, astride, r0, kfull, av);
        ffma_load_b4<TB>(sB, bstride, kfull, c0, bv);
#pragma unroll
        for (int kk = 0; kk < 3; ++kk) {
            if (kfull + kk >= k) break;
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int jj = 0; jj < 4; ++jj) acc[i][jj] = fmaf(av[i][kk], bv[kk][jj], acc[i][jj]);
        }
    }
}

}  // namespace gapfill
