// EXPERIMENT (not shipped): split-KV GQA decode with the G query heads on tensor cores (mma.sync m16n8k16), for the
// harness to check and time against split_kv.cu at the next GPU slot. Included by harness.cu after split_kv.cu (uses
// its SplitArgs, kv_row, kThreads, kLn2). If it wins, it replaces the G ≥ 4 path of split_kv.cu; otherwise delete it.
//
// Idea: per block one (split, kv head, 16-head tile, b); 4 warps, each taking 16-key steps. For a step:
//   S[16 heads × 16 keys] = Q[16 × D] · Kᵀ  : D/16 k-steps × 2 n8 tiles of mma, fp32 accumulate;
//   online softmax on the S fragments (row max over a quad: 2 shuffles), P rounded to T;
//   O[16 × D] += P[16 × 16] · V[16 × D]     : D/8 n8 tiles of mma.
// 16-byte loads only, with no shared-memory staging, by permuting the reduction axes, which a dot product allows:
//   * S's k axis (dims): thread (g = lane/4, c = lane%4) loads, for key g of an n8 tile, the 16-byte chunks at dims
//     (kk·4 + c)·8; words 0,1 are its B fragment of k-step 2kk and words 2,3 of k-step 2kk+1. Q's A fragment uses the
//     same slot → dim map, so q·k is unchanged.
//   * O's n axis (dims): n8 tile j, column n is physical dim n·(D/8) + j, so thread g reads D/8 consecutive dims of
//     each of its 4 V rows (keys 2c, 2c+1, 2c+8, 2c+9: the rows its P fragment covers) with 16-byte loads, and packs
//     pairs with byte permutes.
// Error: P is rounded to T before P·V (as in the vendor composition), so the bound gains u_T·Σ p|v|.
// Measured: not yet measured. Compiled here for f16/bf16, D ∈ {64, 128}. The fragment bookkeeping is checked on the CPU
// by mma_layout_check.py (S = Q·Kᵀ and O = P·V rebuilt from the per-thread fragments).
namespace {

template <typename T> struct MmaType;
template <> struct MmaType<__half> {
    static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
        __half2 h = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<uint32_t*>(&h);
    }
    static __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};
template <> struct MmaType<__nv_bfloat16> {
    static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
        __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t*>(&h);
    }
    static __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};

__device__ __forceinline__ uint32_t word(const uint4& v, int i) {
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

template <typename T, int D>
__device__ __forceinline__ void split_kv_mma_body(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                                                  const int* __restrict__ table, const int* __restrict__ lens,
                                                  T* __restrict__ out, float* __restrict__ lse, float* __restrict__ part_o,
                                                  float* __restrict__ part_lse, const SplitArgs a) {
    static_assert(D == 64 || D == 128, "experiment compiled for D = 64 and 128");
    constexpr int KK = D / 32;        // 16-byte K chunks per thread per key (each covers two k-steps)
    constexpr int NT = D / 8;         // n8 tiles of O
    constexpr int VC = D / 64;        // 16-byte chunks per V row per thread (D/8 dims)
    constexpr int NW = kThreads / 32;
    constexpr int STEP = NW * 16;     // keys per block iteration
    __shared__ __align__(16) float s_o[NW * 16 * D];  // [warp, head row, dim]
    __shared__ float s_m[NW * 16], s_l[NW * 16];

    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    const int g = lane / 4;           // row (head) g and g+8; key g of an n8 tile; O dims g·(D/8) + j
    const int c = lane % 4;
    const int split = blockIdx.x;
    const int kvh = blockIdx.y / a.head_tiles;
    const int tile = blockIdx.y % a.head_tiles;
    const int b = blockIdx.z;
    const int len = min(max(lens[b], 0), a.max_len);
    const int start = split * a.chunk;
    const int end = min(start + a.chunk, len);
    if (a.splits > 1 && start >= len) {
        return;
    }
    const float sl2 = a.scale_log2;

    // Q A fragments, [D/16 k-steps][4 regs]: rows g and g+8 of the 16-head tile (zero past G).
    uint32_t qa[D / 16][4];
    {
        const int h0 = tile * 16 + g, h1 = h0 + 8;
#pragma unroll
        for (int kk = 0; kk < KK; ++kk) {
            uint4 r0 = make_uint4(0, 0, 0, 0), r1 = make_uint4(0, 0, 0, 0);
            const int dim = (kk * 4 + c) * 8;
            if (h0 < a.g) r0 = *reinterpret_cast<const uint4*>(q + ((size_t)b * a.hq + (size_t)kvh * a.g + h0) * D + dim);
            if (h1 < a.g) r1 = *reinterpret_cast<const uint4*>(q + ((size_t)b * a.hq + (size_t)kvh * a.g + h1) * D + dim);
            // k-step 2kk: slots (2c,2c+1) = halves 0,1; (2c+8,2c+9) = halves 2,3. k-step 2kk+1: halves 4,5 and 6,7.
            qa[2 * kk][0] = r0.x; qa[2 * kk][1] = r1.x; qa[2 * kk][2] = r0.y; qa[2 * kk][3] = r1.y;
            qa[2 * kk + 1][0] = r0.z; qa[2 * kk + 1][1] = r1.z; qa[2 * kk + 1][2] = r0.w; qa[2 * kk + 1][3] = r1.w;
        }
    }

    float o[NT][4];                   // O C fragments: rows g, g+8; cols 2c, 2c+1 of tile j
#pragma unroll
    for (int j = 0; j < NT; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
    float m0 = -CUDART_INF_F, m1 = -CUDART_INF_F, l0 = 0.f, l1 = 0.f;

    for (int base = start + warp * 16; base < end; base += STEP) {  // warp-uniform
        // K: key base + 8t + g for S tile t.
        uint4 kc[2][KK];
#pragma unroll
        for (int t = 0; t < 2; ++t) {
            const int pos = base + 8 * t + g;
#pragma unroll
            for (int kk = 0; kk < KK; ++kk) kc[t][kk] = make_uint4(0, 0, 0, 0);
            if (pos < end) {
                const long long row = kv_row(table, b, kvh, pos, a);
#pragma unroll
                for (int kk = 0; kk < KK; ++kk) kc[t][kk] = __ldcs(reinterpret_cast<const uint4*>(k + row + (kk * 4 + c) * 8));
            }
        }
        // V: rows base + {2c, 2c+1, 2c+8, 2c+9}, dims g·(D/8) + [0, D/8).
        uint4 vr[4][VC > 0 ? VC : 1];
        const int vkey[4] = {2 * c, 2 * c + 1, 2 * c + 8, 2 * c + 9};
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int pos = base + vkey[r];
#pragma unroll
            for (int x = 0; x < VC; ++x) vr[r][x] = make_uint4(0, 0, 0, 0);
            if (pos < end) {
                const long long row = kv_row(table, b, kvh, pos, a);
#pragma unroll
                for (int x = 0; x < VC; ++x) vr[r][x] = __ldcs(reinterpret_cast<const uint4*>(v + row + g * (D / 8) + x * 8));
            }
        }
        // S = Q·Kᵀ for the two n8 tiles.
        float s[2][4];
#pragma unroll
        for (int t = 0; t < 2; ++t) {
            s[t][0] = s[t][1] = s[t][2] = s[t][3] = 0.f;
#pragma unroll
            for (int kk = 0; kk < KK; ++kk) {
                MmaType<T>::mma(s[t], qa[2 * kk], kc[t][kk].x, kc[t][kk].y);
                MmaType<T>::mma(s[t], qa[2 * kk + 1], kc[t][kk].z, kc[t][kk].w);
            }
        }
        // scale to base 2 and mask: s[t][0,1] = row g, keys 8t + 2c + {0,1}; s[t][2,3] = row g+8, same keys.
#pragma unroll
        for (int t = 0; t < 2; ++t) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int key = base + 8 * t + 2 * c + (e & 1);
                s[t][e] = key < end ? s[t][e] * sl2 : -CUDART_INF_F;
            }
        }
        float mx0 = fmaxf(fmaxf(s[0][0], s[0][1]), fmaxf(s[1][0], s[1][1]));
        float mx1 = fmaxf(fmaxf(s[0][2], s[0][3]), fmaxf(s[1][2], s[1][3]));
        mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
        mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
        mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
        mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
        const float n0 = fmaxf(m0, mx0), n1 = fmaxf(m1, mx1);  // base < end: at least one valid key, so finite
        const float c0 = exp2f(m0 - n0), c1 = exp2f(m1 - n1);   // exp2(-inf) = 0 on the first step
        m0 = n0;
        m1 = n1;
        float p[2][4];
#pragma unroll
        for (int t = 0; t < 2; ++t) {
            p[t][0] = exp2f(s[t][0] - n0);
            p[t][1] = exp2f(s[t][1] - n0);
            p[t][2] = exp2f(s[t][2] - n1);
            p[t][3] = exp2f(s[t][3] - n1);
        }
        // l sums the fp32 probabilities; P·V sees them rounded to T (the u_T·Σ p|v| term of the bound).
        uint32_t pa[4];
        pa[0] = MmaType<T>::pack(p[0][0], p[0][1]);
        pa[1] = MmaType<T>::pack(p[0][2], p[0][3]);
        pa[2] = MmaType<T>::pack(p[1][0], p[1][1]);
        pa[3] = MmaType<T>::pack(p[1][2], p[1][3]);
        float r0 = p[0][0] + p[0][1] + p[1][0] + p[1][1];
        float r1 = p[0][2] + p[0][3] + p[1][2] + p[1][3];
        r0 += __shfl_xor_sync(0xffffffffu, r0, 1);
        r0 += __shfl_xor_sync(0xffffffffu, r0, 2);
        r1 += __shfl_xor_sync(0xffffffffu, r1, 1);
        r1 += __shfl_xor_sync(0xffffffffu, r1, 2);
        l0 = l0 * c0 + r0;
        l1 = l1 * c1 + r1;
#pragma unroll
        for (int j = 0; j < NT; ++j) {
            o[j][0] *= c0; o[j][1] *= c0; o[j][2] *= c1; o[j][3] *= c1;
            // B fragment of tile j: dim g·(D/8) + j of rows 2c, 2c+1 (b0) and 2c+8, 2c+9 (b1).
            const int x = j / 8, w = (j % 8) / 2;
            const uint32_t sel = (j & 1) ? 0x7632u : 0x5410u;
            const uint32_t b0 = __byte_perm(word(vr[0][x], w), word(vr[1][x], w), sel);
            const uint32_t b1 = __byte_perm(word(vr[2][x], w), word(vr[3][x], w), sel);
            MmaType<T>::mma(o[j], pa, b0, b1);
        }
    }

    // Merge the warps: O rows g, g+8; cols (2c, 2c+1) of tile j are dims (2c)·(D/8) + j and (2c+1)·(D/8) + j.
#pragma unroll
    for (int j = 0; j < NT; ++j) {
        s_o[(warp * 16 + g) * D + (2 * c) * (D / 8) + j] = o[j][0];
        s_o[(warp * 16 + g) * D + (2 * c + 1) * (D / 8) + j] = o[j][1];
        s_o[(warp * 16 + g + 8) * D + (2 * c) * (D / 8) + j] = o[j][2];
        s_o[(warp * 16 + g + 8) * D + (2 * c + 1) * (D / 8) + j] = o[j][3];
    }
    if (c == 0) {
        s_m[warp * 16 + g] = m0; s_l[warp * 16 + g] = l0;
        s_m[warp * 16 + g + 8] = m1; s_l[warp * 16 + g + 8] = l1;
    }
    __syncthreads();
    for (int idx = threadIdx.x; idx < 16 * D; idx += kThreads) {
        const int row = idx / D, d = idx % D;
        const int gh = tile * 16 + row;
        if (gh >= a.g) continue;
        float mx = -CUDART_INF_F;
#pragma unroll
        for (int w = 0; w < NW; ++w) mx = fmaxf(mx, s_m[w * 16 + row]);
        float sum = 0.f, acc = 0.f;
        if (mx != -CUDART_INF_F) {
#pragma unroll
            for (int w = 0; w < NW; ++w) {
                const float wt = exp2f(s_m[w * 16 + row] - mx);
                sum = fmaf(s_l[w * 16 + row], wt, sum);
                acc = fmaf(s_o[(w * 16 + row) * D + d], wt, acc);
            }
        }
        const float res = sum > 0.f ? acc / sum : 0.f;
        const float lse2 = sum > 0.f ? mx + log2f(sum) : -CUDART_INF_F;
        const size_t bh = (size_t)b * a.hq + (size_t)kvh * a.g + gh;
        if (a.splits == 1) {
            out[bh * D + d] = from_float<T>(res);
            if (lse != nullptr && d == 0) lse[bh] = sum > 0.f ? lse2 * kLn2 : -CUDART_INF_F;
        } else {
            part_o[(bh * a.splits + split) * D + d] = res;
            if (d == 0) part_lse[bh * a.splits + split] = lse2;
        }
    }
}

}  // namespace

#define GQA_SPLIT_KV_MMA(NAME, T, D)                                                                              \
    extern "C" __global__ void __launch_bounds__(kThreads, 1) NAME(                                               \
        const T* q, const T* k, const T* v, const int* table, const int* lens, T* out, float* lse, float* part_o,  \
        float* part_lse, int hq, int hkv, int g, int head_tiles, int splits, int chunk, int max_len,              \
        int max_pages, int page_shift, long long stride_b, long long stride_h, long long stride_l,                \
        long long page_stride, float scale_log2) {                                                                \
        const SplitArgs a{hq,       hkv,      g,        head_tiles, splits,      chunk,     max_len,               \
                          max_pages, page_shift, stride_b, stride_h,   stride_l,    page_stride, scale_log2};        \
        split_kv_mma_body<T, D>(q, k, v, table, lens, out, lse, part_o, part_lse, a);                             \
    }

GQA_SPLIT_KV_MMA(gqa_split_kv_mma_f16_d64, __half, 64)
GQA_SPLIT_KV_MMA(gqa_split_kv_mma_f16_d128, __half, 128)
GQA_SPLIT_KV_MMA(gqa_split_kv_mma_bf16_d64, __nv_bfloat16, 64)
GQA_SPLIT_KV_MMA(gqa_split_kv_mma_bf16_d128, __nv_bfloat16, 128)
