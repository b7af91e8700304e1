// Fixed-cost A/B of the gqa_decode tensor-core kernel (README.md in this folder; run.sh builds and runs it).
//   A  = decode_mma.cu as in the tree (shipped.cu)
//   S1 = decode_fc.cu SYNC 1: the split ticket fenced by thread 0 alone (fence.sc, the cooperative-groups pattern)
//   S2 = decode_fc.cu SYNC 2: the ticket as one atom.acq_rel.gpu by thread 0 (no sequentially consistent fence)
//   S2T = S2 + EARLY_TABLE: paged caches (pages >= 16) request the first block-table entries with the length
//   F0  = decode_fc.cu SYNC 0 with 4 warps: the shipped code through the WARPS-parameterised path (checked only)
//   W8, W16 = SYNC 2 with 8 / 16 warps per block (fewer ring stages where shared memory needs it; no W16 at d256):
//         fewer splits for the same bytes in flight, so less (or, at 1 split, none) of the merge goes through the
//         global ticket. Their warp merge sums in another order, so they are checked against the fp64 reference
//         (and A's max difference is reported), not byte for byte.
// Part 1, correctness: a grid of small and odd cases (B, L, lengths full / random in [0, L] with a zero and a clamped
// length, six head configurations, F16/BF16, five cache layouts, three split counts). Random inputs, NaN in every
// cache row at or past a sequence's length, o/lse/partials poisoned with NaN bytes before every launch. Each variant
// must equal A byte for byte (o and lse; F0, S1, S2, S2T) or be within the tolerance (W8, W16), leave the split
// counters at 0, and equal its own bhld output on every layout; A and every variant must be within a stated tolerance
// of an fp64 CPU reference on checked sequences. Split counts: the plan's, the most, 3, half, a quarter and 1.
// Part 2, timing: F16 B in {1,4,16} x L in {512,2048,8192} x {32/8 d128, 16/2 d64} x {bhld, paged16}, lengths = L,
// the plan's split count (GqaDecodeHeuristics.splits mirrored), A/S1/S2/S2T and two reference launches (an empty
// kernel; a plain read of the same K+V bytes) interleaved in rotating order, the L2 flushed before every launch by a
// write of 256 MiB (FLUSH=read: dev_harness.h's read flush), CUDA events, median of 61 (3 untimed rounds first).
// Part 3, wide blocks: the same 36 shapes, A and S2 at the plan's split count interleaved with W8 and W16 at the
// plan's, half, a quarter of and 1 split; the summary gives geomeans of time / A per split setting and of the best.
// Exit status 1 if any correctness check fails. With OUT set, the timing rows also go to $OUT/fixedcost_timing.csv
// and $OUT/fixedcost_wide.csv.
#include "dev_harness.h"
#include "gqa_inputs.cuh"
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

constexpr int NK = 8;      // kernels
enum { VA, VS1, VS2, VS2T, VNOM, VF0, VW8, VW16 };
static const char* kVarName[NK] = {"A", "S1", "S2", "S2T", "NOM", "F0", "W8", "W16"};
constexpr int NTIMED = 5;  // timing table: A, S1, S2, S2T, NOM (no ticket, no merge: wrong output with splits, a bound)
static const int kChecked[] = {VA, VF0, VS1, VS2, VS2T, VW8, VW16};  // correctness, A first (the byte reference)
static bool byte_variant(int v) { return v == VF0 || v == VS1 || v == VS2 || v == VS2T; }
enum Layout { BHLD, BLHD, P16, P64, P4, NLAYOUT };
static const char* kLayName[NLAYOUT] = {"bhld", "blhd", "paged16", "paged64", "paged4"};
static int layout_page(int lay) { return lay == P16 ? 16 : lay == P64 ? 64 : lay == P4 ? 4 : 0; }

// ---- inputs: common/gqa_inputs.cuh (a hash of the logical index, rounded to T; identical on host and device) ----
static float q_value(bool bf16, unsigned long long i, unsigned seed) { return host_round(bf16, 2.f * hash_unit(i, seed)); }
static float kv_value(bool bf16, unsigned long long i, unsigned seed) { return host_round(bf16, hash_unit(i, seed)); }
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
static const void* g_kern[NK][2][3];  // nullptr: no such kernel (W16 d256), or it does not fit this device
static int g_smem[NK][3], g_threads[NK], g_stages[NK][3];
static int di(int d) { return d == 64 ? 0 : d == 128 ? 1 : 2; }
static void launch(int v, bool bf16, const KArgs& x, cudaStream_t st) {
    void* args[] = {(void*)&x.q, (void*)&x.k, (void*)&x.v, (void*)&x.table, (void*)&x.lens, (void*)&x.out, (void*)&x.lse,
                    (void*)&x.po, (void*)&x.pl, (void*)&x.cnt, (void*)&x.hq, (void*)&x.hkv, (void*)&x.g, (void*)&x.tiles,
                    (void*)&x.splits, (void*)&x.chunk, (void*)&x.max_len, (void*)&x.max_pages, (void*)&x.page_shift,
                    (void*)&x.sb, (void*)&x.sh, (void*)&x.sl, (void*)&x.ps, (void*)&x.scale_log2};
    const void* f = g_kern[v][bf16][di(x.d)];
    if (f == nullptr) { printf("internal: no kernel %s d%d\n", kVarName[v], x.d); exit(2); }
    CK(cudaLaunchKernel(f, dim3(x.splits, x.hkv * x.tiles, x.batch), dim3(g_threads[v]), args, g_smem[v][di(x.d)], st));
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
    long runs = 0, runs_v[NK] = {}, ident[NK] = {}, ident_o[NK] = {}, ident_l[NK] = {}, fails = 0;
    double maxdiff_o[NK] = {}, maxdiff_l[NK] = {}, ref_o[NK] = {}, ref_l[NK] = {};
};

int main() {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    cudaStream_t st; CK(cudaStreamCreate(&st));
    const char* flush_env = getenv("FLUSH");
    const bool flush_read = flush_env && strcmp(flush_env, "read") == 0;
    const double copy_gbps = copy_rate_gbps(st);
    printf("GPU %s, %d SMs, L2 %d MiB, copy %.0f GB/s, cc %d.%d\n", prop.name, sms, prop.l2CacheSize >> 20, copy_gbps, prop.major, prop.minor);
    // Kernels and their launch configuration, both from the kernels' translation units (the same compile-time
    // constants as the kernels: 32·warps threads, Cfg<D, stages, warps>::SMEM). The checks below fail the run if the
    // block size does not match the kernel's __launch_bounds__, or a kernel the tables need does not fit this device.
    struct Getters { const void* (*kern)(bool, int); int (*threads)(); int (*smem)(int); int (*stages)(int); };
    const Getters get[NK] = {{ship_kernel, ship_threads, ship_smem, ship_stages}, {fc1_kernel, fc1_threads, fc1_smem, fc1_stages},
                             {fc2_kernel, fc2_threads, fc2_smem, fc2_stages},     {fc3_kernel, fc3_threads, fc3_smem, fc3_stages},
                             {fc4_kernel, fc4_threads, fc4_smem, fc4_stages},     {fc0_kernel, fc0_threads, fc0_smem, fc0_stages},
                             {fc5_kernel, fc5_threads, fc5_smem, fc5_stages},     {fc6_kernel, fc6_threads, fc6_smem, fc6_stages}};
    for (int v = 0; v < NK; ++v) {
        g_threads[v] = get[v].threads();
        std::string line;
        for (int d : {64, 128, 256}) {
            g_smem[v][di(d)] = get[v].smem(d);
            g_stages[v][di(d)] = get[v].stages(d);
            char buf[128];
            int regs = 0;
            for (int bf = 0; bf < 2; ++bf) {
                const void* f = get[v].kern(bf, d);
                if (f != nullptr) {
                    cudaFuncAttributes fa; CK(cudaFuncGetAttributes(&fa, f));
                    if (fa.maxThreadsPerBlock != g_threads[v] || (g_threads[v] != 32 * (g_threads[v] / 32))) {
                        printf("launch configuration mismatch: %s %s d%d launches %d threads, the kernel allows %d\n", kVarName[v],
                               bf ? "bf16" : "f16", d, g_threads[v], fa.maxThreadsPerBlock);
                        exit(2);
                    }
                    if (fa.localSizeBytes != 0) printf("NOTE: %s %s d%d uses %zu B of local memory\n", kVarName[v], bf ? "bf16" : "f16", d,
                                                       (size_t)fa.localSizeBytes);
                    if ((size_t)g_smem[v][di(d)] + fa.sharedSizeBytes > prop.sharedMemPerBlockOptin) {
                        printf("NOTE: %s d%d needs %d + %zu B of shared memory, more than this device's %zu: not run\n", kVarName[v], d,
                               g_smem[v][di(d)], (size_t)fa.sharedSizeBytes, (size_t)prop.sharedMemPerBlockOptin);
                        f = nullptr;
                    } else {
                        CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, g_smem[v][di(d)]));
                        if (!bf) regs = fa.numRegs;
                    }
                }
                g_kern[v][bf][di(d)] = f;
            }
            if (g_kern[v][0][di(d)] && g_kern[v][1][di(d)])
                snprintf(buf, sizeof buf, "  d%d: %d st %5.1f KiB %3d regs", d, g_stages[v][di(d)], g_smem[v][di(d)] / 1024.0, regs);
            else
                snprintf(buf, sizeof buf, "  d%d: %-26s", d, "-");
            line += buf;
        }
        printf("%-4s %3d threads;%s (stages per warp, dynamic smem, f16 registers)\n", kVarName[v], g_threads[v], line.c_str());
    }
    // The tables need every kernel at d64 and d128, and all but W16 at d256.
    for (int v = 0; v < NK; ++v)
        for (int d : {64, 128, 256})
            for (int bf = 0; bf < 2; ++bf)
                if (g_kern[v][bf][di(d)] == nullptr && !(v == VW16 && d == 256) && !(v >= VW8 && prop.sharedMemPerBlockOptin < 232448)) {
                    printf("missing kernel %s %s d%d\n", kVarName[v], bf ? "bf16" : "f16", d);
                    exit(2);
                }
    if (g_smem[VF0][0] != g_smem[VA][0] || g_smem[VF0][1] != g_smem[VA][1] || g_smem[VF0][2] != g_smem[VA][2] || g_threads[VF0] != 128 ||
        g_threads[VW8] != 256 || g_threads[VW16] != 512) {
        printf("internal: unexpected launch configuration\n");
        exit(2);
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
                        constexpr int NSPLIT = 6;  // split settings: the plan's, the most (chunk 64), 3, half, a quarter, 1
                        std::vector<uint16_t> a_bhld_o[NSPLIT][NK];  // each variant's outputs on bhld per split setting
                        std::vector<float> a_bhld_l[NSPLIT][NK];     // (layout invariance)
                        for (int lay = 0; lay < NLAYOUT; ++lay) {
                            if ((lay == P64 || lay == P4) && !((hd.hq == 32 && hd.hkv == 8) || hd.hq == 16)) continue;
                            Tally& ty = tally[(hi * 2 + bf) * NLAYOUT + lay];
                            KArgs x = setup(bu, bf, B, L, hd.hq, hd.hkv, hd.d, lay, lens, seed, rng, st, sms);
                            const int plan = x.splits;
                            const int want[NSPLIT] = {plan, (L + 63) / 64, 3, plan / 2, plan / 4, 1};
                            int seen_s[NSPLIT], seen_c[NSPLIT], nseen = 0;
                            for (int si = 0; si < NSPLIT; ++si) {
                                if (si == 2 && L < 129) continue;
                                int sp, ck;
                                split_chunk(L, std::max(1, std::min(256, want[si])), sp, ck);
                                bool dup = false;
                                for (int j = 0; j < nseen; ++j) dup |= seen_s[j] == sp && seen_c[j] == ck;
                                if (dup) continue;  // this (splits, chunk) ran already
                                seen_s[nseen] = sp; seen_c[nseen] = ck; ++nseen;
                                x.splits = sp; x.chunk = ck;
                                const size_t on = (size_t)B * hd.hq * hd.d, ln = (size_t)B * hd.hq;
                                std::vector<uint16_t> o[NK];
                                std::vector<float> l[NK];
                                bool run_bad = false;
                                std::string why;
                                for (int v : kChecked) {
                                    if (g_kern[v][bf][di(hd.d)] == nullptr) continue;  // W16 at d256
                                    CK(cudaMemsetAsync(bu.out, 0xff, on * 2, st)); CK(cudaMemsetAsync(bu.lse, 0xff, ln * 4, st));
                                    CK(cudaMemsetAsync(bu.po, 0xff, on * x.splits * 4, st)); CK(cudaMemsetAsync(bu.pl, 0xff, ln * x.splits * 4, st));
                                    launch(v, bf, x, st);
                                    CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
                                    ++ty.runs_v[v];
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
                                    // byte comparison with A (required for F0, S1, S2, S2T), and the largest differences
                                    if (v != VA) {
                                        const bool io = memcmp(o[v].data(), o[VA].data(), on * 2) == 0;
                                        const bool il = memcmp(l[v].data(), l[VA].data(), ln * 4) == 0;
                                        ty.ident_o[v] += io; ty.ident_l[v] += il; ty.ident[v] += io && il;
                                        for (size_t i = 0; i < on; ++i) {
                                            const double dd = std::fabs((double)out_value(bf, o[v], i) - out_value(bf, o[VA], i));
                                            ty.maxdiff_o[v] = std::max(ty.maxdiff_o[v], std::isnan(dd) ? INFINITY : dd);
                                        }
                                        for (size_t i = 0; i < ln; ++i)
                                            if (l[v][i] != l[VA][i]) {
                                                const double dd = std::fabs((double)l[v][i] - l[VA][i]);
                                                ty.maxdiff_l[v] = std::max(ty.maxdiff_l[v], std::isnan(dd) ? INFINITY : dd);
                                            }
                                        if (byte_variant(v) && (!io || !il)) { run_bad = true; why += std::string(" differs-from-A:") + kVarName[v]; }
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
                                    // every variant gives the same bytes on every layout as on bhld (same split setting)
                                    if (lay == BHLD) { a_bhld_o[si][v] = o[v]; a_bhld_l[si][v] = l[v]; }
                                    else if (o[v] != a_bhld_o[si][v] || l[v] != a_bhld_l[si][v]) {
                                        run_bad = true; why += std::string(" layout-differs:") + kVarName[v];
                                    }
                                }
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
    printf("\ncorrectness: %ld runs (each: A, F0, S1, S2, S2T, W8, W16 on poisoned outputs and partials; no W16 at d256), %.0f s, "
           "tolerance vs fp64: |o| <= 4u+1e-4 (u = 2^-11 F16, 2^-8 BF16), |lse| <= 2e-4 (1+|lse|), -inf for len 0\n", total_runs, t_check);
    printf("byte-identical variants (o and lse must equal A's: count identical / runs; max |d| against A; max error against fp64 of A and these)\n");
    printf("%-16s %-34s %5s %5s | %-11s %-11s %-11s %-11s | %-8s %-8s | %-8s %-8s\n", "heads dtype", "layouts", "runs", "fail", "F0 o/lse=A",
           "S1 o/lse=A", "S2 o/lse=A", "S2T o/lse=A", "max|dO|", "max|dL|", "ref o", "ref lse");
    std::vector<Tally> sum_t;
    std::vector<std::string> sum_name, sum_lays;
    for (int hi = 0; hi < (int)(sizeof(heads) / sizeof(heads[0])); ++hi)
        for (int bf = 0; bf < 2; ++bf) {
            Tally t;
            std::string lays;
            for (int lay = 0; lay < NLAYOUT; ++lay) {
                const Tally& u = tally[(hi * 2 + bf) * NLAYOUT + lay];
                if (!u.runs) continue;
                lays += (lays.empty() ? "" : ",") + std::string(kLayName[lay]);
                t.runs += u.runs; t.fails += u.fails;
                for (int v = 0; v < NK; ++v) {
                    t.runs_v[v] += u.runs_v[v];
                    t.ident[v] += u.ident[v]; t.ident_o[v] += u.ident_o[v]; t.ident_l[v] += u.ident_l[v];
                    t.maxdiff_o[v] = std::max(t.maxdiff_o[v], u.maxdiff_o[v]); t.maxdiff_l[v] = std::max(t.maxdiff_l[v], u.maxdiff_l[v]);
                    t.ref_o[v] = std::max(t.ref_o[v], u.ref_o[v]); t.ref_l[v] = std::max(t.ref_l[v], u.ref_l[v]);
                }
            }
            if (!t.runs) continue;
            char name[32], c[4][24];
            snprintf(name, sizeof name, "%d/%d d%d %s", heads[hi].hq, heads[hi].hkv, heads[hi].d, bf ? "bf16" : "f16");
            const int bv[4] = {VF0, VS1, VS2, VS2T};
            double mo = 0, ml = 0, ro = t.ref_o[VA], rl = t.ref_l[VA];
            for (int i = 0; i < 4; ++i) {
                const int v = bv[i];
                snprintf(c[i], sizeof c[0], "%ld/%ld", t.ident[v], t.runs_v[v]);
                mo = std::max(mo, t.maxdiff_o[v]); ml = std::max(ml, t.maxdiff_l[v]);
                ro = std::max(ro, t.ref_o[v]); rl = std::max(rl, t.ref_l[v]);
            }
            printf("%-16s %-34s %5ld %5ld | %-11s %-11s %-11s %-11s | %-8.1e %-8.1e | %-8.1e %-8.1e\n", name, lays.c_str(), t.runs, t.fails, c[0], c[1],
                   c[2], c[3], mo, ml, ro, rl);
            sum_t.push_back(t); sum_name.push_back(name); sum_lays.push_back(lays);
        }
    printf("wide blocks (within the fp64 tolerance; not byte-identical by design): runs, max |d| against A at the same split count, max error "
           "against fp64 (A's in the last columns)\n");
    printf("%-16s | %5s %-8s %-8s %-8s %-8s | %5s %-8s %-8s %-8s %-8s | %-8s %-8s\n", "heads dtype", "W8", "max|dO|", "max|dL|", "ref o", "ref lse",
           "W16", "max|dO|", "max|dL|", "ref o", "ref lse", "A ref o", "A ref l");
    for (size_t i = 0; i < sum_t.size(); ++i) {
        const Tally& t = sum_t[i];
        std::string cols;
        for (int v : {VW8, VW16}) {
            char buf[96];
            if (t.runs_v[v]) snprintf(buf, sizeof buf, "%5ld %-8.1e %-8.1e %-8.1e %-8.1e | ", t.runs_v[v], t.maxdiff_o[v], t.maxdiff_l[v], t.ref_o[v], t.ref_l[v]);
            else snprintf(buf, sizeof buf, "%5s %-8s %-8s %-8s %-8s | ", "-", "", "", "", "");
            cols += buf;
        }
        printf("%-16s | %s%-8.1e %-8.1e\n", sum_name[i].c_str(), cols.c_str(), t.ref_o[VA], t.ref_l[VA]);
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
    constexpr int NT = NTIMED + 2;  // + empty, read
    const Heads theads[] = {{32, 8, 128}, {16, 2, 64}};
    printf("timing: F16, lengths = L, the L2 flushed by a %s of 256 MiB before every launch, CUDA events, median of %d (us); "
           "NOM = no ticket/merge (wrong on purpose: what is left of the merge's cost)\n", flush_read ? "read" : "write", reps);
    const char* hdr = "%-30s %4s %6s | %6s %6s | %7s %7s %7s %7s %7s | %6s %6s %6s %6s | %s\n";
    double lg[NTIMED] = {}, lg_split[NTIMED] = {};
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
        for (int v : {VA, VS1, VS2, VS2T}) {
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
                if (j < NTIMED) launch(j, false, x, st);
                else if (j == NTIMED) empty_kernel<<<sms, 32, 0, st>>>();
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
               med[NTIMED], med[NTIMED + 1], med[0], med[1], med[2], med[3], med[4], med[1] / med[0], med[2] / med[0], med[3] / med[0],
               med[4] / med[0], med[0] - med[NTIMED + 1], same ? "" : "  OUTPUTS DIFFER FROM A");
        fflush(stdout);
        if (!same) ++bad;
        if (csv)
            fprintf(csv, "%d,%d,%d,%d,%d,%s,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%d\n", B, L, hd.hq, hd.hkv, hd.d, kLayName[lay], x.splits,
                    x.chunk, floor_us, med[NTIMED], med[NTIMED + 1], med[0], med[1], med[2], med[3], med[4], summary ? 1 : 0);
        if (summary) {
            for (int v = 0; v < NTIMED; ++v) {
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

    // ---------------- part 3: wide blocks at fewer splits ----------------
    // Per shape: A and S2 at the plan's split count, W8 and W16 at the plan's, half, a quarter of it and 1 split
    // (settings that come out at the same split count are timed once), interleaved in rotating order, each after the
    // same flush. Before timing, every configuration's o and lse are checked against A's (S2: byte for byte; W8, W16:
    // within twice the fp64 tolerance, no NaN, counters back at 0).
    constexpr int NWS = 4;                     // split settings of W8 / W16: plan, half, quarter, 1
    const double kSetMult[NWS] = {1.0, 0.5, 0.25, 0.0};
    static const char* kSetName[NWS] = {"p", "p/2", "p/4", "1"};
    struct Slot { int v, set; KArgs x; int same_as; };
    FILE* wcsv = nullptr;
    if (const char* out = getenv("OUT")) {
        wcsv = fopen((std::string(out) + "/fixedcost_wide.csv").c_str(), "w");
        if (wcsv) fprintf(wcsv, "B,L,hq,hkv,d,layout,plan_splits,variant,setting,splits,chunk,us\n");
    }
    // geomean accumulators per subset (0: all rows, 1: plan splits > 1, 2: B·L <= 2048): log(time / A)
    constexpr int NSUB = 3;
    double gs2[NSUB] = {}, gw[NSUB][2][NWS] = {}, gbest[NSUB][2] = {}, gbest_any[NSUB] = {}, gbest_s2[NSUB] = {};
    int nsub[NSUB] = {}, nw[NSUB][2] = {};
    int wins[2][NWS] = {};  // rows where W@setting beats S2 at the plan's split count by more than 2 %
    printf("\nwide blocks: W8 = 8 warps/block, W16 = 16 warps/block (both SYNC 2), at the plan's (p), half, a quarter of and 1 split, "
           "against A and S2 at the plan's; F16, lengths = L, same flush, median of %d (us)\n", reps);
    printf("%-30s %4s %-12s | %7s %7s | %7s %7s %7s %7s | %7s %7s %7s %7s | %-12s %-12s %6s\n", "shape", "p", "W splits", "A", "S2", "W8@p",
           "W8@p/2", "W8@p/4", "W8@1", "W16@p", "W16@p/2", "W16@p/4", "W16@1", "best W8/A", "best W16/A", "best/S2");
    auto time_wide = [&](const Heads& hd, int lay, int B, int L) {
        std::vector<int> lens(B, L);
        const KArgs x0 = setup(bu, false, B, L, hd.hq, hd.hkv, hd.d, lay, lens, 7 + L + B, rng, st, sms);
        const int plan = x0.splits;
        std::vector<Slot> sl;
        sl.push_back({VA, 0, x0, -1});
        sl.push_back({VS2, 0, x0, -1});
        int wsplits[NWS];
        for (int w = 0; w < 2; ++w)
            for (int k = 0; k < NWS; ++k) {
                KArgs x = x0;
                split_chunk(L, std::max(1, std::min(256, (int)std::lround(plan * kSetMult[k]))), x.splits, x.chunk);
                wsplits[k] = x.splits;
                int same = -1;
                for (size_t j = 2; j < sl.size(); ++j)
                    if (sl[j].v == (w ? VW16 : VW8) && sl[j].x.splits == x.splits && sl[j].x.chunk == x.chunk) same = (int)j;
                sl.push_back({w ? VW16 : VW8, k, x, same});
            }
        // outputs of every configuration against A's
        const size_t on = (size_t)B * hd.hq * hd.d, ln = (size_t)B * hd.hq;
        const double tol_o = 4.0 / 2048 + 1e-4;
        std::vector<uint16_t> oa(on), ov(on);
        std::vector<float> la(ln), lv(ln);
        std::string wrong;
        for (size_t i = 0; i < sl.size(); ++i) {
            if (sl[i].same_as >= 0 || g_kern[sl[i].v][0][di(hd.d)] == nullptr) continue;
            CK(cudaMemsetAsync(bu.out, 0xff, on * 2, st)); CK(cudaMemsetAsync(bu.lse, 0xff, ln * 4, st));
            CK(cudaMemsetAsync(bu.po, 0xff, on * sl[i].x.splits * 4, st)); CK(cudaMemsetAsync(bu.pl, 0xff, ln * sl[i].x.splits * 4, st));
            launch(sl[i].v, false, sl[i].x, st);
            CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
            CK(cudaMemcpy(i ? ov.data() : oa.data(), bu.out, on * 2, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(i ? lv.data() : la.data(), bu.lse, ln * 4, cudaMemcpyDeviceToHost));
            std::vector<int> cnt((size_t)B * hd.hkv * sl[i].x.tiles);
            CK(cudaMemcpy(cnt.data(), bu.cnt, cnt.size() * 4, cudaMemcpyDeviceToHost));
            bool ok = true;
            for (int c : cnt) ok &= c == 0;
            if (!ok) CK(cudaMemset(bu.cnt, 0, bu.cnt_ints * 4));
            if (i == 0) {
                for (size_t e = 0; e < on; ++e) ok &= !std::isnan(out_value(false, oa, e));
                for (size_t e = 0; e < ln; ++e) ok &= !std::isnan(la[e]);
            } else if (sl[i].v == VS2) {
                ok &= ov == oa && memcmp(lv.data(), la.data(), ln * 4) == 0;
            } else {
                for (size_t e = 0; e < on; ++e) ok &= std::fabs((double)out_value(false, ov, e) - out_value(false, oa, e)) <= 2 * tol_o;
                for (size_t e = 0; e < ln; ++e) ok &= std::fabs((double)lv[e] - la[e]) <= 4e-4 * (1 + std::fabs((double)la[e]));
            }
            if (!ok) {
                char buf[64];
                snprintf(buf, sizeof buf, " %s@%d", kVarName[sl[i].v], sl[i].x.splits);
                wrong += buf;
            }
        }
        std::vector<int> uniq;  // slots to time
        for (size_t i = 0; i < sl.size(); ++i)
            if (sl[i].same_as < 0 && g_kern[sl[i].v][0][di(hd.d)] != nullptr) uniq.push_back((int)i);
        const int nu = (int)uniq.size();
        std::vector<std::vector<float>> t(nu);
        for (int r = -3; r < reps; ++r)
            for (int i = 0; i < nu; ++i) {
                const int j = (i + r + 3) % nu;
                if (flush_read) l2_flush_read<<<4 * sms, 512, 0, st>>>((const uint4*)flush, (long long)(flush_bytes / 16), sink);
                else l2_flush_write<<<4 * sms, 512, 0, st>>>((uint4*)flush, (long long)(flush_bytes / 16), salt++);
                CK(cudaEventRecord(e0, st));
                launch(sl[uniq[j]].v, false, sl[uniq[j]].x, st);
                CK(cudaEventRecord(e1, st));
                CK(cudaEventSynchronize(e1)); CK(cudaGetLastError());
                float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
                if (r >= 0) t[j].push_back(ms * 1000);
            }
        std::vector<double> med(sl.size(), NAN);
        for (int i = 0; i < nu; ++i) { std::sort(t[i].begin(), t[i].end()); med[uniq[i]] = t[i][t[i].size() / 2]; }
        for (size_t i = 0; i < sl.size(); ++i)
            if (sl[i].same_as >= 0) med[i] = med[sl[i].same_as];
        char name[64], ws[32], cells[2][NWS][16], best[2][24];
        snprintf(name, sizeof name, "B=%d L=%d %d/%d d%d %s", B, L, hd.hq, hd.hkv, hd.d, kLayName[lay]);
        snprintf(ws, sizeof ws, "%d/%d/%d/%d", wsplits[0], wsplits[1], wsplits[2], wsplits[3]);
        const double ta = med[0], ts2 = med[1];
        double bw[2] = {INFINITY, INFINITY};
        int bk[2] = {-1, -1};
        for (int w = 0; w < 2; ++w) {
            for (int k = 0; k < NWS; ++k) {
                const double m = med[2 + w * NWS + k];
                if (std::isnan(m)) snprintf(cells[w][k], sizeof cells[0][0], "%7s", "-");
                else snprintf(cells[w][k], sizeof cells[0][0], "%7.2f", m);
                if (!std::isnan(m) && m < bw[w]) { bw[w] = m; bk[w] = k; }
                if (!std::isnan(m) && m < 0.98 * ts2) ++wins[w][k];
            }
            if (bk[w] >= 0) snprintf(best[w], sizeof best[0], "%.3f @%-4s", bw[w] / ta, kSetName[bk[w]]);
            else snprintf(best[w], sizeof best[0], "-");
        }
        const double bany = std::min(bw[0], bw[1]);
        printf("%-30s %4d %-12s | %7.2f %7.2f | %s %s %s %s | %s %s %s %s | %-12s %-12s %6.3f%s%s\n", name, plan, ws, ta, ts2, cells[0][0],
               cells[0][1], cells[0][2], cells[0][3], cells[1][0], cells[1][1], cells[1][2], cells[1][3], best[0], best[1], bany / ts2,
               wrong.empty() ? "" : "  OUTPUTS WRONG:", wrong.c_str());
        fflush(stdout);
        if (!wrong.empty()) ++bad;
        if (wcsv)
            for (size_t i = 0; i < sl.size(); ++i)
                if (!std::isnan(med[i]))
                    fprintf(wcsv, "%d,%d,%d,%d,%d,%s,%d,%s,%s,%d,%d,%.3f\n", B, L, hd.hq, hd.hkv, hd.d, kLayName[lay], plan, kVarName[sl[i].v],
                            i < 2 ? "p" : kSetName[sl[i].set], sl[i].x.splits, sl[i].x.chunk, med[i]);
        for (int k = 0; k < NSUB; ++k) {
            if ((k == 1 && plan <= 1) || (k == 2 && (long long)B * L > 2048)) continue;
            ++nsub[k];
            gs2[k] += std::log(ts2 / ta);
            gbest_any[k] += std::log(bany / ta);
            gbest_s2[k] += std::log(bany / ts2);
            for (int w = 0; w < 2; ++w) {
                if (bk[w] < 0) continue;
                ++nw[k][w];
                gbest[k][w] += std::log(bw[w] / ta);
                for (int j = 0; j < NWS; ++j) gw[k][w][j] += std::log(med[2 + w * NWS + j] / ta);
            }
        }
    };
    for (const Heads& hd : theads)
        for (int lay : {(int)BHLD, (int)P16})
            for (int B : {1, 4, 16})
                for (int L : {512, 2048, 8192}) time_wide(hd, lay, B, L);
    if (wcsv) fclose(wcsv);
    printf("\nsummary: geomean of time / A over the %d plan rows above   %6s %6s %6s %6s\n", nrow, "S1", "S2", "S2T", "NOM");
    printf("  all %2d rows                                                 %6.3f %6.3f %6.3f %6.3f\n", nrow, std::exp(lg[1] / nrow),
           std::exp(lg[2] / nrow), std::exp(lg[3] / nrow), std::exp(lg[4] / nrow));
    if (nrow_split)
        printf("  %2d rows with splits > 1                                     %6.3f %6.3f %6.3f %6.3f\n", nrow_split,
               std::exp(lg_split[1] / nrow_split), std::exp(lg_split[2] / nrow_split), std::exp(lg_split[3] / nrow_split),
               std::exp(lg_split[4] / nrow_split));
    printf("\nsummary, wide blocks: geomean of time / A (A at the plan's split count) per W split setting, of the best setting "
           "per row, and of the best W8/W16 row against S2\n");
    printf("  %-32s %6s | %6s %6s %6s %6s %6s | %6s %6s %6s %6s %6s | %7s %7s\n", "rows", "S2", "W8@p", "@p/2", "@p/4", "@1", "best", "W16@p",
           "@p/2", "@p/4", "@1", "best", "best/A", "best/S2");
    const char* sub_name[NSUB] = {"all", "with plan splits > 1", "with B*L <= 2048"};
    for (int k = 0; k < NSUB; ++k) {
        if (!nsub[k]) continue;
        char lab[48];
        snprintf(lab, sizeof lab, "%2d rows %s", nsub[k], sub_name[k]);
        std::string cols;
        for (int w = 0; w < 2; ++w) {
            char buf[64];
            for (int j = 0; j < NWS; ++j) {
                if (nw[k][w]) snprintf(buf, sizeof buf, "%6.3f ", std::exp(gw[k][w][j] / nw[k][w]));
                else snprintf(buf, sizeof buf, "%6s ", "-");
                cols += buf;
            }
            if (nw[k][w]) snprintf(buf, sizeof buf, "%6.3f | ", std::exp(gbest[k][w] / nw[k][w]));
            else snprintf(buf, sizeof buf, "%6s | ", "-");
            cols += buf;
        }
        printf("  %-32s %6.3f | %s%7.3f %7.3f\n", lab, std::exp(gs2[k] / nsub[k]), cols.c_str(), std::exp(gbest_any[k] / nsub[k]),
               std::exp(gbest_s2[k] / nsub[k]));
    }
    printf("  rows (of %d) where the setting beats S2 at the plan's split count by > 2 %%: W8 p %d, p/2 %d, p/4 %d, 1 %d; W16 p %d, p/2 %d, "
           "p/4 %d, 1 %d\n", nsub[0], wins[0][0], wins[0][1], wins[0][2], wins[0][3], wins[1][0], wins[1][1], wins[1][2], wins[1][3]);
    printf("RESULT: correctness %s (%d failing runs of %ld)\n", bad ? "FAILED" : "ok", bad, total_runs);
    return bad ? 1 : 0;
}
