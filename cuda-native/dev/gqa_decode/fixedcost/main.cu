// Fixed-cost A/B of the gqa_decode tensor-core kernel (README.md in this folder; run.sh builds and runs it).
//   A  = decode_mma.cu as in the tree (shipped.cu)
//   S1 = decode_fc.cu SYNC 1: the split ticket fenced by thread 0 alone (fence.sc, the cooperative-groups pattern)
//   S2 = decode_fc.cu SYNC 2: the ticket as one atom.acq_rel.gpu by thread 0 (no sequentially consistent fence)
//   S2T = S2 + EARLY_TABLE: paged caches (pages >= 16) request the first block-table entries with the length
// Part 1, correctness: a grid of small and odd cases (B, L, lengths full / random in [0, L] with a zero and a clamped
// length, six head configurations, F16/BF16, five cache layouts, three split counts). Random inputs, NaN in every
// cache row at or past a sequence's length, o/lse/partials poisoned with NaN bytes before every launch. Each variant
// must equal A byte for byte (o and lse), leave the split counters at 0, and A must equal itself across layouts;
// A and every variant must be within a stated tolerance of an fp64 CPU reference on checked sequences.
// Part 2, timing: F16 B in {1,4,16} x L in {512,2048,8192} x {32/8 d128, 16/2 d64} x {bhld, paged16}, lengths = L,
// the plan's split count (GqaDecodeHeuristics.splits mirrored), A/S1/S2/S2T and two reference launches (an empty
// kernel; a plain read of the same K+V bytes) interleaved in rotating order, the L2 flushed before every launch by a
// write of 256 MiB (FLUSH=read: dev_harness.h's read flush), CUDA events, median of 61 (3 untimed rounds first).
// Exit status 1 if any correctness check fails. With OUT set, the timing rows also go to $OUT/fixedcost_timing.csv.
#include "dev_harness.h"
#include "kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

constexpr int NV = 4;  // checked variants: A, S1, S2, S2T
constexpr int NK = 5;  // timed kernels: the four + NOM (no ticket, no merge: wrong output with splits, a bound)
static const char* kVarName[NK] = {"A", "S1", "S2", "S2T", "NOM"};
enum Layout { BHLD, BLHD, P16, P64, P4, NLAYOUT };
static const char* kLayName[NLAYOUT] = {"bhld", "blhd", "paged16", "paged64", "paged4"};
static int layout_page(int lay) { return lay == P16 ? 16 : lay == P64 ? 64 : lay == P4 ? 4 : 0; }

// ---- inputs: a hash of the logical index, rounded to T; identical on host and device ----
__host__ __device__ inline float hash_unit(unsigned long long i, unsigned seed) {  // [-1, 1)
    unsigned x = (unsigned)i * 0x9E3779B9u ^ (unsigned)(i >> 32) * 0x27D4EB2Fu ^ seed * 0x85EBCA6Bu;
    x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16;
    return (float)(x >> 8) * (1.0f / 8388608.0f) - 1.0f;
}
template <typename T> __host__ __device__ inline T to_t(float x);
template <> __host__ __device__ inline __half to_t<__half>(float x) { return __float2half_rn(x); }
template <> __host__ __device__ inline __nv_bfloat16 to_t<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
static float host_round(bool bf16, float x) {
    return bf16 ? __bfloat162float(__float2bfloat16_rn(x)) : __half2float(__float2half_rn(x));
}
static float q_value(bool bf16, unsigned long long i, unsigned seed) { return host_round(bf16, 2.f * hash_unit(i, seed)); }
static float kv_value(bool bf16, unsigned long long i, unsigned seed) { return host_round(bf16, hash_unit(i, seed)); }

template <typename T> __global__ void fill_q(T* q, long long n, unsigned seed) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        q[i] = to_t<T>(2.f * hash_unit(i, seed));
}
// Logical element (b, h, l, d) of K and V (index ((b·Hkv + h)·L + l)·D + d) at its place in the layout; NaN at and
// past the (clamped) length. Rows of a paged pool that no position maps to keep the NaN of the memset before.
template <typename T>
__global__ void fill_kv(T* k, T* v, const int* lens, const int* table, int batch, int hkv, int lmax, int D, int mp, int page_shift,
                        long long sb, long long sh, long long sl, long long ps, unsigned seed) {
    const long long n = (long long)batch * hkv * lmax * D;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const int d = (int)(i % D);
        const int l = (int)((i / D) % lmax);
        const int h = (int)((i / ((long long)D * lmax)) % hkv);
        const int b = (int)(i / ((long long)D * lmax * hkv));
        const long long off = table == nullptr ? b * sb + h * sh + l * sl + d
                                               : (long long)table[b * mp + (l >> page_shift)] * ps + h * sh + (l & ((1 << page_shift) - 1)) * sl + d;
        const int len = min(max(lens[b], 0), lmax);
        const bool dead = l >= len;
        uint16_t nanbits = 0x7fff;
        T nan; memcpy(&nan, &nanbits, 2);
        k[off] = dead ? nan : to_t<T>(hash_unit(i, seed + 1));
        v[off] = dead ? nan : to_t<T>(hash_unit(i, seed + 2));
    }
}
__global__ void empty_kernel() {}
__global__ void l2_flush_write(uint4* p, long long n, unsigned salt) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        p[i] = make_uint4(salt, (unsigned)i, salt, (unsigned)i);
}

// GqaDecodeHeuristics.splits, mirrored: the s <= 256 minimising ceil(ctas·s / SMs) · (chunk(s) + 128).
static int plan_splits(int B, int hkv, int g, int max_len, int sms) {
    const long long ctas = (long long)B * hkv * ((g + 15) / 16);
    const int smax = std::min(256, std::max(1, (max_len + 63) / 64));
    int best = 1; double best_cost = 1e300;
    for (int s = 1; s <= smax; ++s) {
        int chunk = (max_len + s - 1) / s; chunk = (chunk + 63) / 64 * 64;
        if ((max_len + chunk - 1) / chunk != s) continue;
        const double cost = (double)((ctas * s + sms - 1) / sms) * (chunk + 128);
        if (cost < best_cost * 0.999) { best_cost = cost; best = s; }
    }
    return best;
}
static void split_chunk(int max_len, int want, int& splits, int& chunk) {  // chunk a multiple of 64, as the plan
    chunk = ((max_len + want - 1) / want + 63) / 64 * 64;
    splits = std::max(1, (max_len + chunk - 1) / chunk);
}

struct KArgs {
    const void *q, *k, *v; const int *table, *lens; void* out; float *lse, *po, *pl; int* cnt;
    int hq, hkv, g, tiles, splits, chunk, max_len, max_pages, page_shift;
    long long sb, sh, sl, ps;
    float scale_log2;
    int batch, d;
};
static const void* g_kern[NK][2][3];
static int g_smem[3];
static int di(int d) { return d == 64 ? 0 : d == 128 ? 1 : 2; }
static void launch(int v, bool bf16, const KArgs& x, cudaStream_t st) {
    void* args[] = {(void*)&x.q, (void*)&x.k, (void*)&x.v, (void*)&x.table, (void*)&x.lens, (void*)&x.out, (void*)&x.lse,
                    (void*)&x.po, (void*)&x.pl, (void*)&x.cnt, (void*)&x.hq, (void*)&x.hkv, (void*)&x.g, (void*)&x.tiles,
                    (void*)&x.splits, (void*)&x.chunk, (void*)&x.max_len, (void*)&x.max_pages, (void*)&x.page_shift,
                    (void*)&x.sb, (void*)&x.sh, (void*)&x.sl, (void*)&x.ps, (void*)&x.scale_log2};
    CK(cudaLaunchKernel(g_kern[v][bf16][di(x.d)], dim3(x.splits, x.hkv * x.tiles, x.batch), dim3(128), args, g_smem[di(x.d)], st));
}

// Device buffers, allocated once for the largest case.
struct Bufs {
    void *q, *kv, *out; float *lse, *po, *pl; int *lens, *table, *cnt;
    size_t q_bytes, kv_bytes, out_bytes, lse_bytes, po_bytes, pl_bytes, table_ints, cnt_ints;
};

// Cache geometry of one layout: strides, pool elements (one tensor), table.
struct Geo { long long sb, sh, sl, ps; int mp, shift; long long elems; };
static Geo geometry(int lay, int B, int L, int hkv, int D) {
    Geo g{};
    const int page = layout_page(lay);
    if (page) {
        g.mp = (L + page - 1) / page; g.shift = page == 64 ? 6 : page == 16 ? 4 : 2;
        g.sb = 0; g.sh = D; g.sl = (long long)hkv * D; g.ps = (long long)page * hkv * D;
        g.elems = (long long)B * g.mp * page * hkv * D;
    } else if (lay == BHLD) {
        g.sb = (long long)hkv * L * D; g.sh = (long long)L * D; g.sl = D; g.elems = (long long)B * hkv * L * D;
    } else {
        g.sb = (long long)L * hkv * D; g.sh = D; g.sl = (long long)hkv * D; g.elems = (long long)B * hkv * L * D;
    }
    return g;
}

// Sets up q, lens, table and the cache of one problem in the buffers; returns the launch arguments (plan splits).
static KArgs setup(Bufs& bu, bool bf16, int B, int L, int hq, int hkv, int D, int lay, const std::vector<int>& lens, unsigned seed,
                   std::mt19937& rng, cudaStream_t st, int sms) {
    const Geo g = geometry(lay, B, L, hkv, D);
    if ((size_t)g.elems * 4 > bu.kv_bytes || (size_t)B * hq * D * 2 > bu.q_bytes) { printf("buffers too small\n"); exit(2); }
    KArgs x{};
    x.q = bu.q; x.k = bu.kv; x.v = (char*)bu.kv + g.elems * 2;  // K then V, back to back (the plain read covers both)
    x.lens = bu.lens; x.out = bu.out; x.lse = bu.lse; x.po = bu.po; x.pl = bu.pl; x.cnt = bu.cnt;
    x.hq = hq; x.hkv = hkv; x.g = hq / hkv; x.tiles = (x.g + 15) / 16; x.max_len = L; x.batch = B; x.d = D;
    x.sb = g.sb; x.sh = g.sh; x.sl = g.sl; x.ps = g.ps; x.max_pages = g.mp; x.page_shift = g.shift;
    x.scale_log2 = (float)(1.0 / std::sqrt((double)D) * 1.4426950408889634);
    split_chunk(L, plan_splits(B, hkv, x.g, L, sms), x.splits, x.chunk);
    CK(cudaMemcpyAsync(bu.lens, lens.data(), B * 4, cudaMemcpyHostToDevice, st));
    x.table = nullptr;
    if (layout_page(lay)) {
        std::vector<int> perm((size_t)B * g.mp);
        for (size_t i = 0; i < perm.size(); ++i) perm[i] = (int)i;
        std::shuffle(perm.begin(), perm.end(), rng);
        CK(cudaMemcpyAsync(bu.table, perm.data(), perm.size() * 4, cudaMemcpyHostToDevice, st));
        x.table = bu.table;
    }
    CK(cudaMemsetAsync(bu.kv, 0xff, (size_t)g.elems * 4, st));  // NaN everywhere first (0xffff: NaN in F16 and BF16)
    const long long nq = (long long)B * hq * D;
    if (bf16) {
        fill_q<__nv_bfloat16><<<256, 256, 0, st>>>((__nv_bfloat16*)bu.q, nq, seed);
        fill_kv<__nv_bfloat16><<<sms * 16, 256, 0, st>>>((__nv_bfloat16*)x.k, (__nv_bfloat16*)x.v, bu.lens, x.table, B, hkv, L, D, g.mp,
                                                        g.shift, g.sb, g.sh, g.sl, g.ps, seed);
    } else {
        fill_q<__half><<<256, 256, 0, st>>>((__half*)bu.q, nq, seed);
        fill_kv<__half><<<sms * 16, 256, 0, st>>>((__half*)x.k, (__half*)x.v, bu.lens, x.table, B, hkv, L, D, g.mp, g.shift, g.sb,
                                                 g.sh, g.sl, g.ps, seed);
    }
    CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
    return x;
}

// fp64 reference o[b, h, :] and lse[b, h] (natural log) for the G heads h of KV head kvh, from the same hashed,
// rounded inputs (o: G·D values, lse: G values).
static void reference(bool bf16, int b, int kvh, int L, int hq, int hkv, int D, int len, unsigned seed, double* o, double* lse) {
    const int G = hq / hkv;
    for (int i = 0; i < G * D; ++i) o[i] = 0;
    if (len == 0) { for (int g = 0; g < G; ++g) lse[g] = -INFINITY; return; }
    const unsigned long long row0 = ((unsigned long long)b * hkv + kvh) * L;
    std::vector<double> k((size_t)len * D), v((size_t)len * D), qh(D), s(len);
    for (size_t i = 0; i < k.size(); ++i) { k[i] = kv_value(bf16, row0 * D + i, seed + 1); v[i] = kv_value(bf16, row0 * D + i, seed + 2); }
    const double scale = 1.0 / std::sqrt((double)D);
    for (int g = 0; g < G; ++g) {
        const int h = kvh * G + g;
        for (int d = 0; d < D; ++d) qh[d] = q_value(bf16, ((unsigned long long)b * hq + h) * D + d, seed);
        double mx = -INFINITY;
        for (int j = 0; j < len; ++j) {
            double acc = 0;
            for (int d = 0; d < D; ++d) acc += qh[d] * k[(size_t)j * D + d];
            s[j] = acc * scale;
            mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (int j = 0; j < len; ++j) { s[j] = std::exp(s[j] - mx); sum += s[j]; }
        double* og = o + (size_t)g * D;
        for (int j = 0; j < len; ++j) {
            const double p = s[j] / sum;
            for (int d = 0; d < D; ++d) og[d] += p * v[(size_t)j * D + d];
        }
        lse[g] = mx + std::log(sum);
    }
}

static float out_value(bool bf16, const std::vector<uint16_t>& o, size_t i) {
    return bf16 ? __bfloat162float(__ushort_as_bfloat16(o[i])) : __half2float(__ushort_as_half(o[i]));
}

struct Tally {  // per (heads, dtype, layout) group
    long runs = 0, ident_o[NV] = {}, ident_l[NV] = {}, fails = 0;
    double maxdiff_o[NV] = {}, maxdiff_l[NV] = {}, ref_o[NV] = {}, ref_l[NV] = {};
};

int main() {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    cudaStream_t st; CK(cudaStreamCreate(&st));
    const char* flush_env = getenv("FLUSH");
    const bool flush_read = flush_env && strcmp(flush_env, "read") == 0;
    const double copy_gbps = copy_rate_gbps(st);
    printf("GPU %s, %d SMs, L2 %d MiB, copy %.0f GB/s, cc %d.%d\n", prop.name, sms, prop.l2CacheSize >> 20, copy_gbps, prop.major, prop.minor);
    for (int bf = 0; bf < 2; ++bf)
        for (int d : {64, 128, 256}) {
            g_kern[0][bf][di(d)] = ship_kernel(bf, d);
            g_kern[1][bf][di(d)] = fc1_kernel(bf, d);
            g_kern[2][bf][di(d)] = fc2_kernel(bf, d);
            g_kern[3][bf][di(d)] = fc3_kernel(bf, d);
            g_kern[4][bf][di(d)] = fc4_kernel(bf, d);
            g_smem[di(d)] = ship_smem(d);
            for (int v = 0; v < NK; ++v)
                CK(cudaFuncSetAttribute(g_kern[v][bf][di(d)], cudaFuncAttributeMaxDynamicSharedMemorySize, g_smem[di(d)]));
        }
    for (int v = 0; v < NK; ++v) {
        cudaFuncAttributes fa; CK(cudaFuncGetAttributes(&fa, g_kern[v][0][1]));
        printf("%-4s f16 d128: %d registers, %zu B local\n", kVarName[v], fa.numRegs, (size_t)fa.localSizeBytes);
    }

    Bufs bu{};
    bu.q_bytes = (size_t)16 * 64 * 256 * 2;
    bu.kv_bytes = (size_t)2 * 16 * 8192 * 32 * 128 * 2;  // K + V of the largest case (16 x 8192 x 32 x 128, 2 GiB)
    bu.out_bytes = bu.q_bytes; bu.lse_bytes = (size_t)16 * 64 * 4;
    bu.po_bytes = (size_t)16 * 64 * 256 * 256 * 4; bu.pl_bytes = (size_t)16 * 64 * 256 * 4;
    bu.table_ints = 16 * 8192 / 4; bu.cnt_ints = 16 * 64;
    CK(cudaMalloc(&bu.q, bu.q_bytes)); CK(cudaMalloc(&bu.kv, bu.kv_bytes)); CK(cudaMalloc(&bu.out, bu.out_bytes));
    CK(cudaMalloc(&bu.lse, bu.lse_bytes)); CK(cudaMalloc(&bu.po, bu.po_bytes)); CK(cudaMalloc(&bu.pl, bu.pl_bytes));
    CK(cudaMalloc(&bu.lens, 16 * 4)); CK(cudaMalloc(&bu.table, bu.table_ints * 4)); CK(cudaMalloc(&bu.cnt, bu.cnt_ints * 4));
    CK(cudaMemset(bu.cnt, 0, bu.cnt_ints * 4));

    // ---------------- part 1: correctness ----------------
    struct Heads { int hq, hkv, d; };
    const Heads heads[] = {{32, 8, 128}, {16, 2, 64}, {32, 32, 128}, {28, 4, 128}, {64, 8, 256}, {40, 2, 128}};
    const int Bs[] = {1, 3, 4, 16};
    const int Ls[] = {1, 15, 16, 17, 511, 512, 2048, 8192};
    const int nthreads = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
    std::mt19937 rng(20261127);
    int bad = 0;
    long total_runs = 0;
    std::vector<Tally> tally(sizeof(heads) / sizeof(heads[0]) * 2 * NLAYOUT);
    auto t_start = std::chrono::steady_clock::now();
    unsigned seed = 100;
    for (int hi = 0; hi < (int)(sizeof(heads) / sizeof(heads[0])); ++hi) {
        const Heads hd = heads[hi];
        for (int bf = 0; bf < 2; ++bf)
            for (int B : Bs)
                for (int L : Ls)
                    for (int mode = 0; mode < (B == 1 ? 3 : 2); ++mode) {  // 0: lengths = L; 1: random in [0, L]; 2 (B = 1): 0
                        seed += 10;
                        std::vector<int> lens(B, L);
                        if (mode == 1) {
                            for (int& x : lens) x = (int)(rng() % (unsigned)(L + 1));
                            if (B > 1) lens[B / 2] = 0;
                            if (B >= 3) lens[B - 1] = L + 5;  // above max_len: clamped on the device
                        } else if (mode == 2) {
                            lens[0] = 0;
                        }
                        // fp64 reference, once per problem (layout and split count do not change it): sequences 0,
                        // B/2 and B−1 (distinct); all KV heads if Hq·len·D <= 2^22, else KV heads 0 and Hkv−1; all
                        // the query heads of a checked KV head.
                        std::vector<int> ref_b = {0};
                        if (B > 2) ref_b.push_back(B / 2);
                        if (B > 1) ref_b.push_back(B - 1);
                        const int G = hd.hq / hd.hkv;
                        struct Group { int b, kvh; };
                        struct Head { int b, h; };
                        std::vector<Group> groups;
                        for (int b : ref_b) {
                            const int len = std::min(std::max(lens[b], 0), L);
                            const bool all = (double)hd.hq * len * hd.d <= (double)(1 << 22);
                            for (int kvh = 0; kvh < hd.hkv; ++kvh)
                                if (all || kvh == 0 || kvh == hd.hkv - 1) groups.push_back({b, kvh});
                        }
                        std::vector<Head> items;  // (b, h) of every checked head, G per group
                        for (const Group& gr : groups)
                            for (int g = 0; g < G; ++g) items.push_back({gr.b, gr.kvh * G + g});
                        std::vector<double> ref_o(items.size() * hd.d), ref_l(items.size());
                        {
                            std::atomic<size_t> next(0);
                            std::vector<std::thread> pool;
                            for (int t = 0; t < nthreads; ++t)
                                pool.emplace_back([&] {
                                    for (size_t i; (i = next++) < groups.size();) {
                                        const int len = std::min(std::max(lens[groups[i].b], 0), L);
                                        reference(bf, groups[i].b, groups[i].kvh, L, hd.hq, hd.hkv, hd.d, len, seed, &ref_o[i * G * hd.d],
                                                  &ref_l[i * G]);
                                    }
                                });
                            for (auto& t : pool) t.join();
                        }
                        const double u = bf ? 1.0 / 256 : 1.0 / 2048;  // unit roundoff of T
                        const double tol_o = 4 * u + 1e-4;
                        std::vector<uint16_t> a_bhld_o[3];  // A's outputs on bhld per split setting (layout invariance)
                        std::vector<float> a_bhld_l[3];
                        for (int lay = 0; lay < NLAYOUT; ++lay) {
                            if ((lay == P64 || lay == P4) && !((hd.hq == 32 && hd.hkv == 8) || hd.hq == 16)) continue;
                            Tally& ty = tally[(hi * 2 + bf) * NLAYOUT + lay];
                            KArgs x = setup(bu, bf, B, L, hd.hq, hd.hkv, hd.d, lay, lens, seed, rng, st, sms);
                            int want[3] = {x.splits, (L + 63) / 64, 3};  // the plan's, the most (chunk 64), 3
                            for (int si = 0; si < 3; ++si) {
                                if (si > 0 && want[si] == want[0]) continue;
                                if (si == 2 && (L < 129 || want[2] == want[1])) continue;
                                split_chunk(L, std::min(256, want[si]), x.splits, x.chunk);
                                const size_t on = (size_t)B * hd.hq * hd.d, ln = (size_t)B * hd.hq;
                                std::vector<uint16_t> o[NV];
                                std::vector<float> l[NV];
                                bool run_bad = false;
                                std::string why;
                                for (int v = 0; v < NV; ++v) {
                                    CK(cudaMemsetAsync(bu.out, 0xff, on * 2, st)); CK(cudaMemsetAsync(bu.lse, 0xff, ln * 4, st));
                                    CK(cudaMemsetAsync(bu.po, 0xff, on * x.splits * 4, st)); CK(cudaMemsetAsync(bu.pl, 0xff, ln * x.splits * 4, st));
                                    launch(v, bf, x, st);
                                    CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
                                    o[v].resize(on); l[v].resize(ln);
                                    std::vector<int> cnt((size_t)B * hd.hkv * x.tiles);
                                    CK(cudaMemcpy(o[v].data(), bu.out, on * 2, cudaMemcpyDeviceToHost));
                                    CK(cudaMemcpy(l[v].data(), bu.lse, ln * 4, cudaMemcpyDeviceToHost));
                                    CK(cudaMemcpy(cnt.data(), bu.cnt, cnt.size() * 4, cudaMemcpyDeviceToHost));
                                    for (int c : cnt)
                                        if (c != 0) { run_bad = true; why += std::string(" counters-left:") + kVarName[v]; CK(cudaMemset(bu.cnt, 0, bu.cnt_ints * 4)); break; }
                                    // every output written: no NaN (poison) in o, lse NaN-free (−inf only for len 0)
                                    long nan_o = 0, nan_l = 0;
                                    for (size_t i = 0; i < on; ++i) nan_o += std::isnan(out_value(bf, o[v], i));
                                    for (size_t i = 0; i < ln; ++i) nan_l += std::isnan(l[v][i]);
                                    if (nan_o || nan_l) { run_bad = true; why += std::string(" NaN:") + kVarName[v]; }
                                    // byte comparison with A, and the largest differences
                                    if (v > 0) {
                                        const bool io = memcmp(o[v].data(), o[0].data(), on * 2) == 0;
                                        const bool il = memcmp(l[v].data(), l[0].data(), ln * 4) == 0;
                                        ty.ident_o[v] += io; ty.ident_l[v] += il;
                                        for (size_t i = 0; i < on; ++i) {
                                            const double dd = std::fabs((double)out_value(bf, o[v], i) - out_value(bf, o[0], i));
                                            ty.maxdiff_o[v] = std::max(ty.maxdiff_o[v], std::isnan(dd) ? INFINITY : dd);
                                        }
                                        for (size_t i = 0; i < ln; ++i)
                                            if (l[v][i] != l[0][i]) {
                                                const double dd = std::fabs((double)l[v][i] - l[0][i]);
                                                ty.maxdiff_l[v] = std::max(ty.maxdiff_l[v], std::isnan(dd) ? INFINITY : dd);
                                            }
                                        if (!io || !il) { run_bad = true; why += std::string(" differs-from-A:") + kVarName[v]; }
                                    }
                                    // fp64 reference
                                    double eo = 0, el = 0;
                                    for (size_t it = 0; it < items.size(); ++it) {
                                        const size_t bh = (size_t)items[it].b * hd.hq + items[it].h;
                                        for (int d = 0; d < hd.d; ++d) {
                                            const double e = std::fabs(out_value(bf, o[v], bh * hd.d + d) - ref_o[it * hd.d + d]);
                                            eo = std::max(eo, std::isnan(e) ? INFINITY : e);
                                        }
                                        const double rl = ref_l[it], gl = l[v][bh];
                                        double e;
                                        if (std::isinf(rl)) e = (std::isinf(gl) && gl < 0) ? 0 : INFINITY;
                                        else e = std::fabs(gl - rl) / (1 + std::fabs(rl));
                                        el = std::max(el, std::isnan(e) ? INFINITY : e);
                                    }
                                    ty.ref_o[v] = std::max(ty.ref_o[v], eo); ty.ref_l[v] = std::max(ty.ref_l[v], el);
                                    if (!(eo <= tol_o) || !(el <= 2e-4)) { run_bad = true; why += std::string(" reference:") + kVarName[v]; }
                                }
                                if (lay == BHLD) { a_bhld_o[si] = o[0]; a_bhld_l[si] = l[0]; }
                                else if (o[0] != a_bhld_o[si] || l[0] != a_bhld_l[si]) { run_bad = true; why += " A-layout-differs"; }
                                ++ty.runs; ++total_runs;
                                if (run_bad) {
                                    ++ty.fails; ++bad;
                                    if (bad <= 40)
                                        printf("FAIL %s %d/%d d%d B=%d L=%d mode %d %s splits %d chunk %d:%s\n", bf ? "bf16" : "f16", hd.hq, hd.hkv, hd.d,
                                               B, L, mode, kLayName[lay], x.splits, x.chunk, why.c_str());
                                }
                            }
                        }
                    }
    }
    const double t_check = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    printf("\ncorrectness: %ld runs (each: A, S1, S2, S2T on poisoned outputs and partials), %.0f s, tolerance vs fp64: |o| <= 4u+1e-4 "
           "(u = 2^-11 F16, 2^-8 BF16), |lse| <= 2e-4 (1+|lse|), -inf for len 0\n", total_runs, t_check);
    printf("%-16s %-34s %5s %5s | %-11s %-11s %-11s | %-8s %-8s | %-8s %-8s\n", "heads dtype", "layouts", "runs", "fail", "S1 o/lse=A",
           "S2 o/lse=A", "S2T o/lse=A", "max|dO|", "max|dL|", "ref o", "ref lse");
    for (int hi = 0; hi < (int)(sizeof(heads) / sizeof(heads[0])); ++hi)
        for (int bf = 0; bf < 2; ++bf) {
            Tally t;
            std::string lays;
            for (int lay = 0; lay < NLAYOUT; ++lay) {
                const Tally& u = tally[(hi * 2 + bf) * NLAYOUT + lay];
                if (!u.runs) continue;
                lays += (lays.empty() ? "" : ",") + std::string(kLayName[lay]);
                t.runs += u.runs; t.fails += u.fails;
                for (int v = 0; v < NV; ++v) {
                    t.ident_o[v] += u.ident_o[v]; t.ident_l[v] += u.ident_l[v];
                    t.maxdiff_o[v] = std::max(t.maxdiff_o[v], u.maxdiff_o[v]); t.maxdiff_l[v] = std::max(t.maxdiff_l[v], u.maxdiff_l[v]);
                    t.ref_o[v] = std::max(t.ref_o[v], u.ref_o[v]); t.ref_l[v] = std::max(t.ref_l[v], u.ref_l[v]);
                }
            }
            if (!t.runs) continue;
            char name[32], c[3][24];
            snprintf(name, sizeof name, "%d/%d d%d %s", heads[hi].hq, heads[hi].hkv, heads[hi].d, bf ? "bf16" : "f16");
            for (int v = 1; v < NV; ++v) snprintf(c[v - 1], sizeof c[0], "%ld/%ld", t.ident_o[v], t.ident_l[v]);
            double mo = 0, ml = 0, ro = 0, rl = 0;
            for (int v = 0; v < NV; ++v) {
                mo = std::max(mo, t.maxdiff_o[v]); ml = std::max(ml, t.maxdiff_l[v]);
                ro = std::max(ro, t.ref_o[v]); rl = std::max(rl, t.ref_l[v]);
            }
            printf("%-16s %-34s %5ld %5ld | %-11s %-11s %-11s | %-8.1e %-8.1e | %-8.1e %-8.1e\n", name, lays.c_str(), t.runs, t.fails, c[0], c[1],
                   c[2], mo, ml, ro, rl);
        }
    printf("correctness: %s (%d failing runs of %ld)\n\n", bad ? "FAILED" : "ok", bad, total_runs);
    fflush(stdout);

    // ---------------- part 2: timing ----------------
    const size_t flush_bytes = 256u << 20;
    void* flush; unsigned* sink;
    CK(cudaMalloc(&flush, flush_bytes)); CK(cudaMemset(flush, 0x5a, flush_bytes)); CK(cudaMalloc(&sink, 4));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    FILE* csv = nullptr;
    if (const char* out = getenv("OUT")) {
        csv = fopen((std::string(out) + "/fixedcost_timing.csv").c_str(), "w");
        if (csv) fprintf(csv, "B,L,hq,hkv,d,layout,splits,chunk,floor_us,empty_us,read_us,A_us,S1_us,S2_us,S2T_us,NOM_us,plan_row\n");
    }
    const int reps = 101;
    constexpr int NT = NK + 2;  // + empty, read
    const Heads theads[] = {{32, 8, 128}, {16, 2, 64}};
    printf("timing: F16, lengths = L, the L2 flushed by a %s of 256 MiB before every launch, CUDA events, median of %d (us); "
           "NOM = no ticket/merge (wrong on purpose: what is left of the merge's cost)\n", flush_read ? "read" : "write", reps);
    const char* hdr = "%-30s %4s %6s | %6s %6s | %7s %7s %7s %7s %7s | %6s %6s %6s %6s | %s\n";
    double lg[NK] = {}, lg_split[NK] = {};
    int nrow = 0, nrow_split = 0;
    unsigned salt = 1;
    // One row: A, S1, S2, S2T, NOM, empty, read interleaved in rotating order; `mult` scales the plan's split count.
    auto time_row = [&](const Heads& hd, int lay, int B, int L, double mult, bool summary) {
        std::vector<int> lens(B, L);
        KArgs x = setup(bu, false, B, L, hd.hq, hd.hkv, hd.d, lay, lens, 7 + L + B, rng, st, sms);
        if (mult != 1) {  // another split count; rows that come out at the plan's are skipped
            const int plan = x.splits;
            split_chunk(L, std::max(1, std::min(256, (int)std::lround(plan * mult))), x.splits, x.chunk);
            if (x.splits == plan) return;
        }
        const size_t kv_total = (size_t)geometry(lay, B, L, hd.hkv, hd.d).elems * 4;  // K + V bytes
        // the checked variants' outputs equal A's here too
        const size_t on = (size_t)B * hd.hq * hd.d, ln = (size_t)B * hd.hq;
        std::vector<uint16_t> o0(on), o1(on);
        std::vector<float> l0(ln), l1(ln);
        bool same = true;
        for (int v = 0; v < NV; ++v) {
            CK(cudaMemsetAsync(bu.out, 0xff, on * 2, st)); CK(cudaMemsetAsync(bu.lse, 0xff, ln * 4, st));
            launch(v, false, x, st);
            CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
            CK(cudaMemcpy(v ? o1.data() : o0.data(), bu.out, on * 2, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(v ? l1.data() : l0.data(), bu.lse, ln * 4, cudaMemcpyDeviceToHost));
            if (v && (o1 != o0 || memcmp(l1.data(), l0.data(), ln * 4) != 0)) same = false;
        }
        std::vector<float> t[NT];
        for (int r = -3; r < reps; ++r)
            for (int i = 0; i < NT; ++i) {
                const int j = (i + r + 3) % NT;
                if (flush_read) l2_flush_read<<<4 * sms, 512, 0, st>>>((const uint4*)flush, (long long)(flush_bytes / 16), sink);
                else l2_flush_write<<<4 * sms, 512, 0, st>>>((uint4*)flush, (long long)(flush_bytes / 16), salt++);
                CK(cudaEventRecord(e0, st));
                if (j < NK) launch(j, false, x, st);
                else if (j == NK) empty_kernel<<<sms, 32, 0, st>>>();
                else l2_flush_read<<<4 * sms, 512, 0, st>>>((const uint4*)x.k, (long long)(kv_total / 16), sink);
                CK(cudaEventRecord(e1, st));
                CK(cudaEventSynchronize(e1)); CK(cudaGetLastError());
                float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
                if (r >= 0) t[j].push_back(ms * 1000);
            }
        double med[NT];
        for (int i = 0; i < NT; ++i) { std::sort(t[i].begin(), t[i].end()); med[i] = t[i][t[i].size() / 2]; }
        const double live = layout_page(lay) ? (double)L / ((double)x.max_pages * layout_page(lay)) : 1.0;  // pool padding
        const double floor_us = (kv_total * live + 2.0 * B * hd.hq * hd.d * 2) / (copy_gbps * 1e3);
        char name[64];
        snprintf(name, sizeof name, "B=%d L=%d %d/%d d%d %s", B, L, hd.hq, hd.hkv, hd.d, kLayName[lay]);
        printf("%-30s %4d %6.1f | %6.2f %6.2f | %7.2f %7.2f %7.2f %7.2f %7.2f | %6.3f %6.3f %6.3f %6.3f | %6.2f%s\n", name, x.splits, floor_us,
               med[NK], med[NK + 1], med[0], med[1], med[2], med[3], med[4], med[1] / med[0], med[2] / med[0], med[3] / med[0], med[4] / med[0],
               med[0] - med[NK + 1], same ? "" : "  OUTPUTS DIFFER FROM A");
        fflush(stdout);
        if (!same) ++bad;
        if (csv)
            fprintf(csv, "%d,%d,%d,%d,%d,%s,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%d\n", B, L, hd.hq, hd.hkv, hd.d, kLayName[lay], x.splits,
                    x.chunk, floor_us, med[NK], med[NK + 1], med[0], med[1], med[2], med[3], med[4], summary ? 1 : 0);
        if (summary) {
            for (int v = 0; v < NK; ++v) {
                lg[v] += std::log(med[v] / med[0]);
                if (x.splits > 1) lg_split[v] += std::log(med[v] / med[0]);
            }
            ++nrow; nrow_split += x.splits > 1;
        }
    };
    printf(hdr, "shape", "s", "floor", "empty", "read", "A", "S1", "S2", "S2T", "NOM", "S1/A", "S2/A", "S2T/A", "NOM/A", "A-read");
    for (const Heads& hd : theads)
        for (int lay : {(int)BHLD, (int)P16})
            for (int B : {1, 4, 16})
                for (int L : {512, 2048, 8192}) time_row(hd, lay, B, L, 1.0, true);
    printf("\nsplit sweep, 32/8 d128 bhld: half and twice the plan's split count (same columns)\n");
    for (int B : {1, 4})
        for (int L : {512, 2048, 8192})
            for (double m : {0.5, 2.0}) time_row(theads[0], BHLD, B, L, m, false);
    if (csv) fclose(csv);
    printf("\nsummary: geomean of time / A over the %d plan rows above   %6s %6s %6s %6s\n", nrow, "S1", "S2", "S2T", "NOM");
    printf("  all %2d rows                                                 %6.3f %6.3f %6.3f %6.3f\n", nrow, std::exp(lg[1] / nrow),
           std::exp(lg[2] / nrow), std::exp(lg[3] / nrow), std::exp(lg[4] / nrow));
    if (nrow_split)
        printf("  %2d rows with splits > 1                                     %6.3f %6.3f %6.3f %6.3f\n", nrow_split,
               std::exp(lg_split[1] / nrow_split), std::exp(lg_split[2] / nrow_split), std::exp(lg_split[3] / nrow_split),
               std::exp(lg_split[4] / nrow_split));
    printf("RESULT: correctness %s (%d failing runs of %ld)\n", bad ? "FAILED" : "ok", bad, total_runs);
    return bad ? 1 : 0;
}
