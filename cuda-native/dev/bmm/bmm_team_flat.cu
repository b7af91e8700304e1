// Experiment (twenty-seventh session), included by bench_bmm.cu after src/main/cuda/bmm/bmm_team.cu:
// bmm_team8 with 16-byte global accesses. bmm_team8_* copies rows of 8-byte multiples (F16/BF16 column
// counts % 4, e.g. 100) with 8-byte cp.async.ca chunks straight into the padded ldmatrix layout, and reaches
// 43-71 % of the copy floor where bmm_team (16-byte chunks) reaches 81-91 % (results-h100-0790f2f-team8.txt, results-h100-2b6804b-flat.txt).
// Here the operands of a group, which are one contiguous range each, go to a flat shared buffer with 16-byte
// cp.async.cg (L2 only, half the requests), and the team then moves them into the padded layout in 8-byte
// units inside shared memory (the same walk as the 8-byte loader, shared source). C goes out either from
// registers (direct_c) or staged and written as 16-byte chunks of the flat output (two 8-byte walks).
// One padded stage plus the flat buffer: the flat copy of group g + 1 is in flight while the team computes g.
// Needs: stored column counts of A, B and n % 4 == 0; m·k, k·n (and m·n when C is staged) % 8 == 0, so that
// every group's ranges are 16-byte multiples; A, B, C 16-byte aligned; B not shared.
// Shared memory per team: mats · (A slot + B slot) + mats · (m·k + k·n) + (direct_c ? 0 : mats · C slot).
namespace gapfill_bmm_team {

template <typename T>
__device__ __forceinline__ void copy_flat16(T* s, const T* __restrict__ g, int n16, int t, int step) {
    const char* src = reinterpret_cast<const char*>(g);
    char* dst = reinterpret_cast<char*>(s);
    for (int i = t; i < n16; i += step) cp_async16(dst + 16 * i, src + 16 * i);
}
// Flat shared -> padded shared: `total` 8-byte units along the walk (V = 4 elements).
template <typename T>
__device__ __forceinline__ void relayout8(T* s, const T* f, int total, const Walk& w, int t, int step) {
    int r = w.r0, c = w.c0, d = w.d0;
    const T* src = f + t * 4;
    for (int i = t; i < total; i += step) {
        *reinterpret_cast<uint2*>(s + d) = *reinterpret_cast<const uint2*>(src);
        src += step * 4;
        walk_step(w, r, c, d);
    }
}
// Staged C -> flat global output in 16-byte chunks: chunk i is 8-byte units 2i (walk w0) and 2i + 1 (walk w1).
template <typename T>
__device__ __forceinline__ void store_flat16(T* __restrict__ g, const T* s, int n16, const Walk& w0, const Walk& w1, int t, int step) {
    int r0 = w0.r0, c0 = w0.c0, d0 = w0.d0, r1 = w1.r0, c1 = w1.c0, d1 = w1.d0;
    char* dst = reinterpret_cast<char*>(g) + 16 * (size_t)t;
    for (int i = t; i < n16; i += step) {
        const uint2 lo = *reinterpret_cast<const uint2*>(s + d0), hi = *reinterpret_cast<const uint2*>(s + d1);
        *reinterpret_cast<uint4*>(dst) = make_uint4(lo.x, lo.y, hi.x, hi.y);
        dst += 16 * (size_t)step;
        walk_step(w0, r0, c0, d0);
        walk_step(w1, r1, c1, d1);
    }
}

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void bmm_team_flat(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int batch, int m, int n,
                                              int k, int mats, int team_warps, int direct_c) {
    static_assert(sizeof(T) == 2, "F16/BF16 only");
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const Geo<T> ga(TA ? k : m, TA ? m : k), gb(TB ? n : k, TB ? k : n), gc(m, n);
    const int aslot = ga.elems(), bslot = gb.elems(), cslot = gc.elems();
    const int stage = mats * (aslot + bslot);
    const int mk = m * k, kn = k * n;
    const int flat = mats * (mk + kn);
    const int team_elems = stage + flat + (direct_c ? 0 : mats * cslot);
    const int TT = team_warps * 32;
    const int team = threadIdx.x / TT, t = threadIdx.x - team * TT, wt = t >> 5;
    const int teams = blockDim.x / TT;
    T* const sP = reinterpret_cast<T*>(smem_raw) + (size_t)team * team_elems;
    T* const sF = sP + stage;
    T* const sC = sF + flat;
    const int groups = (batch + mats - 1) / mats;
    const int tstep = gridDim.x * teams;
    const int g0 = blockIdx.x * teams + team;
    if (g0 >= groups) return;
    if (k % 16 != 0) {
        zero_kpad(sP, mats, ga, aslot, !TA, t, TT);
        zero_kpad(sP + mats * aslot, mats, gb, bslot, TB, t, TT);
    }
    const Walk wa = make_walk<T, 8>(ga, aslot, t, TT), wb = make_walk<T, 8>(gb, bslot, t, TT);
    const Walk wc0 = make_walk<T, 8>(gc, cslot, 2 * t, 2 * TT), wc1 = make_walk<T, 8>(gc, cslot, 2 * t + 1, 2 * TT);
    auto load_group = [&](int g) {
        const int b0 = g * mats, nm = min(mats, batch - b0);
        copy_flat16(sF, A + (size_t)b0 * mk, nm * mk / 8, t, TT);
        copy_flat16(sF + mats * mk, B + (size_t)b0 * kn, nm * kn / 8, t, TT);
    };
    load_group(g0);
    cp_async_commit();
    for (int g = g0; g < groups; g += tstep) {
        const int b0 = g * mats, nm = min(mats, batch - b0);
        cp_async_wait<0>();
        team_sync(team, TT);  // group g's flat copy landed; the padded stage and the C staging are free
        relayout8(sP, sF, nm * mk / 4, wa, t, TT);
        relayout8(sP + mats * aslot, sF + mats * mk, nm * kn / 4, wb, t, TT);
        team_sync(team, TT);  // padded stage ready; the flat buffer is free
        if (g + tstep < groups) load_group(g + tstep);
        cp_async_commit();
        T* Cg = direct_c ? C + (size_t)b0 * m * n : nullptr;
        mma_group<T, TA, TB>(sP, aslot, ga, sP + mats * aslot, bslot, gb, sC, cslot, gc, Cg, nm, m, n, k, wt, team_warps);
        if (!direct_c) {
            team_sync(team, TT);  // C staged
            store_flat16(C + (size_t)b0 * m * n, sC, nm * m * n / 8, wc0, wc1, t, TT);
        }
    }
    cp_async_wait<0>();
}

}  // namespace gapfill_bmm_team

#define GAPFILL_BMM_TEAM_FLAT(NAME, T, TA, TB)                                                                       \
    extern "C" __global__ void __launch_bounds__(256, 2) NAME(const T* A, const T* B, T* C, int batch, int m, int n, \
                                                              int k, int mats, int stages, int team_warps,         \
                                                              int direct_c) {                                       \
        (void)stages;                                                                                               \
        gapfill_bmm_team::bmm_team_flat<T, TA, TB>(A, B, C, batch, m, n, k, mats, team_warps, direct_c);             \
    }
GAPFILL_BMM_TEAM_FLAT(bmm_team8f_f16_nn, __half, false, false)
GAPFILL_BMM_TEAM_FLAT(bmm_team8f_f16_nt, __half, false, true)
GAPFILL_BMM_TEAM_FLAT(bmm_team8f_f16_tn, __half, true, false)
GAPFILL_BMM_TEAM_FLAT(bmm_team8f_f16_tt, __half, true, true)
GAPFILL_BMM_TEAM_FLAT(bmm_team8f_bf16_nn, __nv_bfloat16, false, false)
GAPFILL_BMM_TEAM_FLAT(bmm_team8f_bf16_nt, __nv_bfloat16, false, true)
GAPFILL_BMM_TEAM_FLAT(bmm_team8f_bf16_tn, __nv_bfloat16, true, false)
GAPFILL_BMM_TEAM_FLAT(bmm_team8f_bf16_tt, __nv_bfloat16, true, true)
