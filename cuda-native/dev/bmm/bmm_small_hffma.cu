// Experiment (not shipped): F16/BF16 batched matmul of tiny matrices on CUDA cores. The operands are widened to fp32
// in shared memory and multiplied with the F32 path's exact-order 4x4 FFMA tiles; C is rounded once to the input type.
//
// Why: in the Java sweep at c2335e1 (docs/benchmarks/h100/bmm.json) bmm_small's tensor-core path takes 9.2 µs for
// F16/BF16 batch 8192 8³, while its F32 FFMA path takes 7.0 µs for the same shape with twice the bytes. A plain
// streaming read of the F16 bytes after the L2 flush would take ~5.0 µs (cuda-native/dev/timing/h100-fixed_cost.txt).
// At 8³ and 16³ the m16n8k16 path pads every operand to 16×16 (4× the shared-memory stores at 8³, most of them zeros)
// and runs one warp per 16×16 tile. The FFMA path pads to 4, and four threads cover an 8×8 matrix.
// Issue 3's F16/BF16 n ≤ 32 geomean is 1.94×. If 8192 8³ reached ~6.2 µs and 8192 16³ ~8.5 µs, it would pass 2.0×.
// Accuracy: the in-order fp32 fmaf sum of the widened inputs, rounded once to T: at least as accurate as the
// tensor-core path (fp32 accumulation as well), within the same tolerance policy.
//
// Included by bench_bmm.cu after bmm_small.cu; it uses that file's SmemOperand and the shared FFMA tile.
#pragma once

namespace {

// Copies `slots` matrices of `op` (as stored in global memory, T elements) into shared memory as fp32, padded to
// multiples of 4 with zeros: 4 elements per step (one 8-byte load where the row allows, one float4 store).
template <typename T>
__device__ __forceinline__ void load_operand_widen(float* __restrict__ s, const T* __restrict__ g, long long mat_stride, int b0,
                                                   int slots, int batch, const SmemOperand<float>& op) {
    const int chunks_per_row = op.cols_p / 4;
    const int total = slots * op.rows_p * chunks_per_row;
    const bool vec = (op.cols % 4 == 0) && ((reinterpret_cast<uintptr_t>(g) & 7) == 0);  // every row starts 8-byte aligned
    for (int idx = threadIdx.x; idx < total; idx += blockDim.x) {
        const int cv = idx % chunks_per_row;
        const int t = idx / chunks_per_row;
        const int r = t % op.rows_p;
        const int j = t / op.rows_p;
        const int b = b0 + j;
        const int c = cv * 4;
        float* dst = s + ((size_t)j * op.rows_p + r) * op.stride + c;  // 16-byte aligned (stride and c multiples of 4)
        const bool row_in = b < batch && r < op.rows;
        const T* src = g + (size_t)b * mat_stride + (size_t)r * op.cols + c;
        float4 f;
        if (row_in && vec && c + 4 <= op.cols) {
            const uint2 raw = __ldg(reinterpret_cast<const uint2*>(src));
            T h[4];
            memcpy(h, &raw, sizeof raw);
            f = make_float4(to_float(h[0]), to_float(h[1]), to_float(h[2]), to_float(h[3]));
        } else {
            f.x = row_in && c + 0 < op.cols ? to_float(src[0]) : 0.f;
            f.y = row_in && c + 1 < op.cols ? to_float(src[1]) : 0.f;
            f.z = row_in && c + 2 < op.cols ? to_float(src[2]) : 0.f;
            f.w = row_in && c + 3 < op.cols ? to_float(src[3]) : 0.f;
        }
        *reinterpret_cast<float4*>(dst) = f;
    }
}

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void bmm_small_hffma(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int batch, int m,
                                                int n, int k, int mats, int b_shared) {
    static_assert(sizeof(T) == 2, "16-bit inputs widened to fp32");
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const SmemOperand<float> a(TA ? k : m, TA ? m : k);
    const SmemOperand<float> bo(TB ? n : k, TB ? k : n);
    float* sA = reinterpret_cast<float*>(smem_raw);  // [mats][a.rows_p][a.stride]
    float* sB = sA + (size_t)mats * a.elements();    // [b_slots][bo.rows_p][bo.stride]
    const int b0 = blockIdx.x * mats;
    load_operand_widen(sA, A, (long long)m * k, b0, mats, batch, a);
    load_operand_widen(sB, B, b_shared ? 0LL : (long long)k * n, b_shared ? 0 : b0, b_shared ? 1 : mats, batch, bo);
    __syncthreads();

    const int mt4 = round_up(m, 4) / 4, nt4 = round_up(n, 4) / 4;
    const int per_mat = mt4 * nt4;
    const bool vec_out = (n % 4 == 0) && ((reinterpret_cast<uintptr_t>(C) & 7) == 0);
    for (int u = threadIdx.x; u < mats * per_mat; u += blockDim.x) {
        const int j = u / per_mat, r0 = ((u % per_mat) / nt4) * 4, c0 = (u % nt4) * 4;
        const int b = b0 + j;
        if (b >= batch) break;
        float acc[4][4];
        ffma_tile4x4<TA, TB>(sA + (size_t)j * a.elements(), a.stride, sB + (b_shared ? 0 : (size_t)j * bo.elements()), bo.stride, r0, c0,
                             k, acc);
        T* Cb = C + (size_t)b * m * n;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int row = r0 + i;
            if (row >= m) break;
            T* p = Cb + (size_t)row * n + c0;
            if (vec_out && c0 + 3 < n) {
                T h[4] = {from_float<T>(acc[i][0]), from_float<T>(acc[i][1]), from_float<T>(acc[i][2]), from_float<T>(acc[i][3])};
                uint2 raw;
                memcpy(&raw, h, sizeof raw);
                *reinterpret_cast<uint2*>(p) = raw;
            } else {
#pragma unroll
                for (int jj = 0; jj < 4; ++jj)
                    if (c0 + jj < n) p[jj] = from_float<T>(acc[i][jj]);
            }
        }
    }
}

}  // namespace

// Entry points bmm_hffma_<f16|bf16>_<a><b>, the signature of bmm_small_*: grid ceil(batch / mats), dynamic shared
// memory of the F32 plan (fp32 operands padded to 4).
#define GAPFILL_BMM_HFFMA(NAME, T, TA, TB)                                                                        \
    extern "C" __global__ void NAME(const T* A, const T* B, T* C, int batch, int m, int n, int k, int mats,      \
                                    int b_shared) {                                                               \
        bmm_small_hffma<T, TA, TB>(A, B, C, batch, m, n, k, mats, b_shared);                                      \
    }
GAPFILL_BMM_HFFMA(bmm_hffma_f16_nn, __half, false, false)
GAPFILL_BMM_HFFMA(bmm_hffma_f16_nt, __half, false, true)
GAPFILL_BMM_HFFMA(bmm_hffma_f16_tn, __half, true, false)
GAPFILL_BMM_HFFMA(bmm_hffma_f16_tt, __half, true, true)
GAPFILL_BMM_HFFMA(bmm_hffma_bf16_nn, __nv_bfloat16, false, false)
GAPFILL_BMM_HFFMA(bmm_hffma_bf16_nt, __nv_bfloat16, false, true)
GAPFILL_BMM_HFFMA(bmm_hffma_bf16_tn, __nv_bfloat16, true, false)
GAPFILL_BMM_HFFMA(bmm_hffma_bf16_tt, __nv_bfloat16, true, true)
