// EXPERIMENT (not shipped): split_kv.cu's block body with a register double buffer for K/V, for the harness to
// time against the shipped kernel at the next GPU slot. Included by harness.cu after split_kv.cu (it uses that
// file's SplitArgs, kv_row, to_float8 and kThreads). If it wins, fold it into split_kv.cu and delete this file.
// Measured: not yet measured. Compiled here for f16 D ∈ {64, 128}, G tiles 4 and 8 only.
namespace {

template <typename T, int D, int GT, int U>
__device__ __forceinline__ void split_kv_body_pf(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                                              const int* __restrict__ table, const int* __restrict__ lens,
                                              T* __restrict__ out, float* __restrict__ lse, float* __restrict__ part_o,
                                              float* __restrict__ part_lse, const SplitArgs a) {
    static_assert(sizeof(T) == 2, "K/V are 16-bit: 8 elements per 16-byte load");
    static_assert(D == 64 || D == 128 || D == 256, "head dim must be 64, 128 or 256");
    constexpr int TPR = D / 8;              // threads per K/V row, 8 dims each
    constexpr int KPW = 32 / TPR;           // groups (rows in flight) per warp
    constexpr int NW = kThreads / 32;       // warps per block
    constexpr int NG = kThreads / TPR;      // groups per block
    constexpr int STEP = NW * KPW * U;      // keys the block consumes per iteration
    static_assert(TPR <= 32 && 32 % TPR == 0, "a K row must map onto a power-of-two slice of one warp");

    __shared__ __align__(16) float s_o[NG * GT * D];  // [NG, GT, D] per-group accumulators
    __shared__ float s_m[NG * GT];                    // [NG, GT] running max (base 2)
    __shared__ float s_l[NG * GT];                    // [NG, GT] running sum

    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int lane = tid % 32;
    const int gw = lane / TPR;              // group inside the warp
    const int sub = lane % TPR;             // which 8 dims of the row
    const int group = warp * KPW + gw;
    const int split = blockIdx.x;
    const int kvh = blockIdx.y / a.head_tiles;
    const int tile = blockIdx.y % a.head_tiles;
    const int b = blockIdx.z;

    const int len = min(max(lens[b], 0), a.max_len);
    const int start = split * a.chunk;
    const int end = min(start + a.chunk, len);
    if (a.splits > 1 && start >= len) {
        return;  // inactive split: the merge kernel reads only the first ceil(len/chunk) splits
    }

    // q of the GT heads of this tile, pre-scaled by scale·log2(e): [GT, 8] in registers.
    float qf[GT][8];
#pragma unroll
    for (int j = 0; j < GT; ++j) {
        const int gh = tile * GT + j;
        if (gh < a.g) {
            const Vec16<T> qv = load16(q + ((size_t)b * a.hq + (size_t)kvh * a.g + gh) * D + sub * 8);
#pragma unroll
            for (int e = 0; e < 8; ++e) qf[j][e] = to_float(qv.v[e]) * a.scale_log2;
        } else {
#pragma unroll
            for (int e = 0; e < 8; ++e) qf[j][e] = 0.f;
        }
    }

    float m[GT], l[GT], o[GT][8];
#pragma unroll
    for (int j = 0; j < GT; ++j) {
        m[j] = -CUDART_INF_F;
        l[j] = 0.f;
#pragma unroll
        for (int e = 0; e < 8; ++e) o[j][e] = 0.f;
    }

    // Warp-uniform loop with the next step's K/V rows loaded before the current step is computed (register double
    // buffer), so each warp keeps 2·2·U 16-byte loads in flight across its compute instead of waiting every step.
    Vec16<T> kc[U], vc[U];
    bool valid[U];
    auto load_step = [&](int base, Vec16<T> (&kk)[U], Vec16<T> (&vk)[U], bool (&ok)[U]) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int pos = base + gw * U + u;
            ok[u] = pos < end;
            if (ok[u]) {
                const long long row = kv_row(table, b, kvh, pos, a) + sub * 8;
                kk[u] = load16_stream(k + row);
                vk[u] = load16_stream(v + row);
            } else {
                kk[u].raw = make_uint4(0, 0, 0, 0);
                vk[u].raw = make_uint4(0, 0, 0, 0);
            }
        }
    };
    const int first = start + warp * KPW * U;
    if (first < end) {
        load_step(first, kc, vc, valid);
    }
    for (int base = first; base < end; base += STEP) {
        Vec16<T> kn[U], vn[U];
        bool vnext[U];
        if (base + STEP < end) {  // warp-uniform
            load_step(base + STEP, kn, vn, vnext);
        } else {
#pragma unroll
            for (int u = 0; u < U; ++u) { kn[u].raw = make_uint4(0, 0, 0, 0); vn[u].raw = kn[u].raw; vnext[u] = false; }
        }
        float s[U][GT];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            float kf[8];
            to_float8(kc[u], kf);
#pragma unroll
            for (int j = 0; j < GT; ++j) {
                float acc = 0.f;
#pragma unroll
                for (int e = 0; e < 8; ++e) acc = fmaf(qf[j][e], kf[e], acc);
                s[u][j] = acc;
            }
        }
#pragma unroll
        for (int off = TPR / 2; off > 0; off /= 2) {
#pragma unroll
            for (int u = 0; u < U; ++u) {
#pragma unroll
                for (int j = 0; j < GT; ++j) s[u][j] += __shfl_xor_sync(0xffffffffu, s[u][j], off);
            }
        }
#pragma unroll
        for (int j = 0; j < GT; ++j) {
            float mx = m[j];
#pragma unroll
            for (int u = 0; u < U; ++u) mx = valid[u] ? fmaxf(mx, s[u][j]) : mx;
            const float corr = mx == -CUDART_INF_F ? 1.f : exp2f(m[j] - mx);
            m[j] = mx;
            l[j] *= corr;
#pragma unroll
            for (int e = 0; e < 8; ++e) o[j][e] *= corr;
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            float vf[8];
            to_float8(vc[u], vf);
#pragma unroll
            for (int j = 0; j < GT; ++j) {
                const float p = valid[u] ? exp2f(s[u][j] - m[j]) : 0.f;
                l[j] += p;
#pragma unroll
                for (int e = 0; e < 8; ++e) o[j][e] = fmaf(p, vf[e], o[j][e]);
            }
        }
#pragma unroll
        for (int u = 0; u < U; ++u) { kc[u] = kn[u]; vc[u] = vn[u]; valid[u] = vnext[u]; }
    }

    // Merge the NG groups of the block: [NG, GT, D] partials in shared memory.
#pragma unroll
    for (int j = 0; j < GT; ++j) {
        float4* dst = reinterpret_cast<float4*>(s_o + (group * GT + j) * D + sub * 8);
        dst[0] = make_float4(o[j][0], o[j][1], o[j][2], o[j][3]);
        dst[1] = make_float4(o[j][4], o[j][5], o[j][6], o[j][7]);
    }
    if (sub == 0) {
#pragma unroll
        for (int j = 0; j < GT; ++j) {
            s_m[group * GT + j] = m[j];
            s_l[group * GT + j] = l[j];
        }
    }
    __syncthreads();

    for (int idx = tid; idx < GT * D; idx += kThreads) {
        const int j = idx / D;
        const int d = idx % D;
        const int gh = tile * GT + j;
        if (gh >= a.g) {
            continue;
        }
        float mx = -CUDART_INF_F;
#pragma unroll 4
        for (int gr = 0; gr < NG; ++gr) mx = fmaxf(mx, s_m[gr * GT + j]);
        float sum = 0.f, acc = 0.f;
        if (mx != -CUDART_INF_F) {
#pragma unroll 4
            for (int gr = 0; gr < NG; ++gr) {
                const float w = exp2f(s_m[gr * GT + j] - mx);  // empty groups: exp2(-inf) = 0
                sum = fmaf(s_l[gr * GT + j], w, sum);
                acc = fmaf(s_o[(gr * GT + j) * D + d], w, acc);
            }
        }
        const float res = sum > 0.f ? acc / sum : 0.f;
        const float lse2 = sum > 0.f ? mx + log2f(sum) : -CUDART_INF_F;  // base-2 log-sum-exp
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

#define GQA_SPLIT_KV_PF(NAME, T, D, GT, U)                                                                        \
    extern "C" __global__ void __launch_bounds__(kThreads, 1) NAME(                                               \
        const T* q, const T* k, const T* v, const int* table, const int* lens, T* out, float* lse, float* part_o,  \
        float* part_lse, int hq, int hkv, int g, int head_tiles, int splits, int chunk, int max_len,              \
        int max_pages, int page_shift, long long stride_b, long long stride_h, long long stride_l,                \
        long long page_stride, float scale_log2) {                                                                \
        const SplitArgs a{hq,       hkv,      g,        head_tiles, splits,      chunk,     max_len,               \
                          max_pages, page_shift, stride_b, stride_h,   stride_l,    page_stride, scale_log2};        \
        split_kv_body_pf<T, D, GT, U>(q, k, v, table, lens, out, lse, part_o, part_lse, a);                       \
    }

GQA_SPLIT_KV_PF(gqa_split_kv_pf_f16_d64_g4, __half, 64, 4, 4)
GQA_SPLIT_KV_PF(gqa_split_kv_pf_f16_d128_g4, __half, 128, 4, 4)
GQA_SPLIT_KV_PF(gqa_split_kv_pf_f16_d64_g8, __half, 64, 8, 2)
GQA_SPLIT_KV_PF(gqa_split_kv_pf_f16_d128_g8, __half, 128, 8, 2)
