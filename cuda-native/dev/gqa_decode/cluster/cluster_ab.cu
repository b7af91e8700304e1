// A/B of gqa_decode's split merge inside a thread-block cluster (decode_mma.cu's gqa_decode_mma_c<CL>_* kernels, sm_90)
// against the shipped global merge (the last block of a (b, kv head, head tile) merges the others' partials after an
// acq_rel ticket). Twenty-sixth session. Run from the repository root on an H100 (run.sh beside this file).
//
// Kernels, all from the tree's decode_mma.cu: A4 = gqa_decode_mma_<t>_d<D> (4 warps), W8 = gqa_decode_mma_w8_<t>_d64,
// C2/C4/C8 = gqa_decode_mma_c<CL>_<t>_d<D> (4 warps, the grid's splits one cluster of CL blocks).
// Plan = GqaDecodeHeuristics.splits mirrored (narrow cost model, the merge cap, the D = 64 wide rule).
//
// Part 1, correctness: F16 and BF16; heads 32/8 d128, 16/2 d64, 28/4 d128, 64/8 d128, 32/32 d128, 16/4 d256 (the last
// for correctness only); B in {1, 3, 16}; L in {512, 2048, 8192}; bhld and paged16 (pages in random order); lengths = L,
// and lengths drawn in [0, L] with a 0, a 1 and a 65 among them (short sequences: one active split in a cluster, and
// inactive blocks beside active ones). K/V are NaN at and past each length, o and lse poisoned with NaN before every
// launch. Every path (the plan, A4 and C at S in {2, 4, 8}) must be within the fp64 tolerance on sequences 0 and B-1
// (every head): |o - ref| <= 4u + 1e-4 (u = 2^-11 F16, 2^-8 BF16), |lse - ref| <= 2e-4 (1 + |ref|), -inf for length 0;
// the split counters back at 0 after A4. The largest |C - A4| at the same splits is reported.
// Part 2, timing: F16, the same heads but d256, B in {1, 4, 16}, L in {512, 2048, 8192}, bhld and paged16, lengths = L.
// The plan's kernel, and A4 and C at each S in {2, 4, 8} with S <= L / 64, interleaved in rotating order, L2 flushed by a
// read of 256 MiB before every launch, CUDA events, medians of REPS (default 41).
// Exit 1 if any check fails.
#include "decode_mma.cu"
#include "dev_harness.h"
#include "gqa_inputs.cuh"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

// ---- the plan: GqaDecodeHeuristics.splits mirrored ----
struct Split { int splits, chunk, warps; };
static int chunk_for(int maxLen, int s) { return ((maxLen + s - 1) / s + 63) / 64 * 64; }
static Split narrow(int B, int hkv, int tiles, int maxLen, int sms) {
    const long long ctas = (long long)B * hkv * tiles;
    const int smax = std::min(256, std::max(1, (maxLen + 63) / 64));
    int best = 1; double bestCost = 1e300;
    for (int s = 1; s <= smax; ++s) {
        const int c = chunk_for(maxLen, s);
        if ((maxLen + c - 1) / c != s) continue;
        const double cost = (double)((ctas * s + sms - 1) / sms) * (c + 128);
        if (cost < bestCost * 0.999) { bestCost = cost; best = s; }
    }
    return {best, chunk_for(maxLen, best), 4};
}
static Split plan(int B, int hkv, int tiles, int D, int maxLen, int sms) {
    Split s = narrow(B, hkv, tiles, maxLen, sms);
    if (D != 64 || s.splits < 2 || s.chunk > 4096) {  // mergeCapped (4-warp plans)
        const long long units = (long long)B * hkv * tiles;
        const int cap = (int)std::max<long long>(16, (64 + units - 1) / units);
        if (s.splits <= cap) return s;
        const int c = chunk_for(maxLen, cap);
        if (c > 1024) return s;
        return {(maxLen + c - 1) / c, c, 4};
    }
    if (s.chunk > 256) return {s.splits, s.chunk, 8};
    const int c = chunk_for(maxLen, (s.splits + 1) / 2);
    return {(maxLen + c - 1) / c, c, 8};
}

// ---- kernels ----
enum { K_A4, K_W8, K_C2, K_C4, K_C8, NKERN };
static const void* kern(int kind, bool bf, int D) {
#define PICK(P) (bf ? (D == 64 ? (const void*)P##bf16_d64 : D == 128 ? (const void*)P##bf16_d128 : (const void*)P##bf16_d256) \
                    : (D == 64 ? (const void*)P##f16_d64 : D == 128 ? (const void*)P##f16_d128 : (const void*)P##f16_d256))
    switch (kind) {
        case K_A4: return PICK(gqa_decode_mma_);
        case K_W8: return D == 64 ? (bf ? (const void*)gqa_decode_mma_w8_bf16_d64 : (const void*)gqa_decode_mma_w8_f16_d64) : nullptr;
        case K_C2: return PICK(gqa_decode_mma_c2_);
        case K_C4: return PICK(gqa_decode_mma_c4_);
        default: return PICK(gqa_decode_mma_c8_);
    }
#undef PICK
}
static int smem_of(int kind, int D) {
    if (kind == K_W8) return gqa_mma::Cfg<64, 4, 8>::SMEM;
    return D == 64 ? gqa_mma::Cfg<64>::SMEM : D == 128 ? gqa_mma::Cfg<128>::SMEM : gqa_mma::Cfg<256>::SMEM;
}

struct Case {
    bool bf; int B, hq, hkv, D, L, page;  // page 0: bhld
    bool randomLens;
};
struct Dev {
    void *q = nullptr, *k = nullptr, *v = nullptr, *out = nullptr;
    float *lse = nullptr, *po = nullptr, *pl = nullptr;
    int *lens = nullptr, *table = nullptr, *cnt = nullptr;
};

int main() {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    const int REPS = getenv("REPS") ? atoi(getenv("REPS")) : 41;
    printf("GPU %s, %d SMs, cc %d.%d, REPS %d\n", prop.name, sms, prop.major, prop.minor, REPS);
    if (prop.major != 9) { printf("needs compute capability 9.x (clusters, sm_90a build)\n"); return 2; }
    for (int kind = 0; kind < NKERN; ++kind)
        for (int bf = 0; bf < 2; ++bf)
            for (int D : {64, 128, 256}) {
                const void* f = kern(kind, bf, D);
                if (f) CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_of(kind, D)));
            }
    cudaStream_t st; CK(cudaStreamCreate(&st));
    const size_t flushBytes = 256u << 20;
    void* flush; CK(cudaMalloc(&flush, flushBytes)); CK(cudaMemset(flush, 1, flushBytes));
    unsigned* sink; CK(cudaMalloc(&sink, 4));
    // buffers for the largest case: B=16, Hkv=32, L=8192, D=128 (K and V 128 MiB each as 16-bit)
    const size_t maxKV = (size_t)16 * 32 * 8192 * 128 + (size_t)16 * 16 * 8 * 64 * 128;  // + slack pages
    Dev dv;
    CK(cudaMalloc(&dv.k, maxKV * 2)); CK(cudaMalloc(&dv.v, maxKV * 2));
    CK(cudaMalloc(&dv.q, (size_t)16 * 64 * 256 * 2)); CK(cudaMalloc(&dv.out, (size_t)16 * 64 * 256 * 2));
    CK(cudaMalloc(&dv.lse, (size_t)16 * 64 * 4));
    CK(cudaMalloc(&dv.po, (size_t)16 * 64 * 256 * 256 * 4)); CK(cudaMalloc(&dv.pl, (size_t)16 * 64 * 256 * 4));
    CK(cudaMalloc(&dv.lens, 64 * 4)); CK(cudaMalloc(&dv.table, (size_t)16 * 8192 * 4));
    CK(cudaMalloc(&dv.cnt, 1 << 16)); CK(cudaMemset(dv.cnt, 0, 1 << 16));
    std::mt19937 rng(7);
    int bad = 0;
    long runs = 0;
    double maxCA[2] = {0, 0};

    // Sets up a case's inputs on the device; returns lens (host) and the layout's strides.
    struct Setup { std::vector<int> lens, table; long long sb, sh, sl, ps; int mp, pshift; };
    auto setup = [&](const Case& c) {
        Setup s;
        s.lens.assign(c.B, c.L);
        if (c.randomLens) {
            for (int b = 0; b < c.B; ++b) s.lens[b] = (int)(rng() % (c.L + 1));
            s.lens[0] = c.L;  // the longest
            if (c.B > 1) s.lens[1 % c.B] = 0;
            if (c.B > 2) s.lens[2] = 1;
            if (c.B > 3) s.lens[3] = 65;
        }
        CK(cudaMemcpy(dv.lens, s.lens.data(), c.B * 4, cudaMemcpyHostToDevice));
        s.mp = 0; s.pshift = 0; s.ps = 0;
        if (c.page == 0) {
            s.sl = c.D; s.sh = (long long)c.L * c.D; s.sb = (long long)c.hkv * c.L * c.D;
        } else {
            s.pshift = c.page == 16 ? 4 : 6;
            s.mp = (c.L + c.page - 1) / c.page;
            const int pages = c.B * s.mp;
            std::vector<int> perm(pages);
            for (int i = 0; i < pages; ++i) perm[i] = i;
            std::shuffle(perm.begin(), perm.end(), rng);
            s.table = perm;
            CK(cudaMemcpy(dv.table, perm.data(), (size_t)pages * 4, cudaMemcpyHostToDevice));
            s.sl = (long long)c.hkv * c.D; s.sh = c.D; s.ps = (long long)c.page * c.hkv * c.D; s.sb = 0;
        }
        const size_t kvElems = (size_t)c.B * c.hkv * c.L * c.D;
        CK(cudaMemset(dv.k, 0xff, kvElems * 2)); CK(cudaMemset(dv.v, 0xff, kvElems * 2));  // unmapped rows: NaN
        if (c.bf) {
            fill_q<__nv_bfloat16><<<4 * sms, 256, 0, st>>>((__nv_bfloat16*)dv.q, (long long)c.B * c.hq * c.D, 11u);
            fill_kv<__nv_bfloat16><<<8 * sms, 256, 0, st>>>((__nv_bfloat16*)dv.k, (__nv_bfloat16*)dv.v, dv.lens, c.page ? dv.table : nullptr,
                                                            c.B, c.hkv, c.L, c.D, s.mp, s.pshift, s.sb, s.sh, s.sl, s.ps, 5u);
        } else {
            fill_q<__half><<<4 * sms, 256, 0, st>>>((__half*)dv.q, (long long)c.B * c.hq * c.D, 11u);
            fill_kv<__half><<<8 * sms, 256, 0, st>>>((__half*)dv.k, (__half*)dv.v, dv.lens, c.page ? dv.table : nullptr, c.B, c.hkv,
                                                     c.L, c.D, s.mp, s.pshift, s.sb, s.sh, s.sl, s.ps, 5u);
        }
        CK(cudaStreamSynchronize(st));
        return s;
    };
    auto launcher = [&](const Case& c, const Setup& s, int kind, int splits) {
        const int g = c.hq / c.hkv, tiles = (g + 15) / 16;
        const int chunk = chunk_for(c.L, splits);
        const int nsplits = (c.L + chunk - 1) / chunk;
        struct P {
            const void *q, *k, *v; const int *table, *lens; void* out; float *lse, *po, *pl; int* cnt;
            int hq, hkv, g, tiles, splits, chunk, maxLen, mp, pshift, f[7];
            long long sb, sh, sl, ps; float scale;
        };
        auto p = std::make_shared<P>();
        *p = P{dv.q, dv.k, dv.v, c.page ? dv.table : nullptr, dv.lens, dv.out, dv.lse, dv.po, dv.pl, dv.cnt,
               c.hq, c.hkv, g, tiles, nsplits, chunk, c.L, s.mp, s.pshift, {0, 0, 0, 0, 0, 0, 0},
               s.sb, s.sh, s.sl, s.ps, (float)(1.4426950408889634 / std::sqrt((double)c.D))};
        const void* f = kern(kind, c.bf, c.D);
        if (kind >= K_C2 && nsplits != (kind == K_C2 ? 2 : kind == K_C4 ? 4 : 8)) { printf("internal: cluster launch of %d splits\n", nsplits); exit(2); }
        const int threads = kind == K_W8 ? 256 : 128, smem = smem_of(kind, c.D);
        const dim3 grid(nsplits, c.hkv * tiles, c.B);
        return std::function<void()>([p, f, threads, smem, grid, &st]() {
            void* args[] = {&p->q, &p->k, &p->v, &p->table, &p->lens, &p->out, &p->lse, &p->po, &p->pl, &p->cnt,
                            &p->hq, &p->hkv, &p->g, &p->tiles, &p->splits, &p->chunk, &p->maxLen, &p->mp, &p->pshift,
                            &p->f[0], &p->f[1], &p->f[2], &p->f[3], &p->f[4], &p->f[5], &p->f[6],
                            &p->sb, &p->sh, &p->sl, &p->ps, &p->scale};
            CK(cudaLaunchKernel(f, grid, dim3(threads), args, smem, st));
        });
    };
    // fp64 reference of sequence b, every head: o [Hq, D], lse [Hq]
    auto reference = [&](const Case& c, int b, int len, std::vector<double>& o, std::vector<double>& lse) {
        const int g = c.hq / c.hkv;
        o.assign((size_t)c.hq * c.D, 0.0); lse.assign(c.hq, -INFINITY);
        if (len == 0) return;
        const double scale = 1.0 / std::sqrt((double)c.D);
        std::vector<double> kd((size_t)len * c.D), vd((size_t)len * c.D), sc(len), qd(c.D);
        for (int kvh = 0; kvh < c.hkv; ++kvh) {
            for (int l = 0; l < len; ++l) {
                const unsigned long long base = (((unsigned long long)b * c.hkv + kvh) * c.L + l) * c.D;
                for (int d = 0; d < c.D; ++d) {
                    kd[(size_t)l * c.D + d] = host_round(c.bf, hash_unit(base + d, 6u));
                    vd[(size_t)l * c.D + d] = host_round(c.bf, hash_unit(base + d, 7u));
                }
            }
            for (int h = kvh * g; h < (kvh + 1) * g; ++h) {
                for (int d = 0; d < c.D; ++d) qd[d] = host_round(c.bf, 2.f * hash_unit(((unsigned long long)b * c.hq + h) * c.D + d, 11u));
                double mx = -INFINITY;
                for (int l = 0; l < len; ++l) {
                    double acc = 0;
                    for (int d = 0; d < c.D; ++d) acc += qd[d] * kd[(size_t)l * c.D + d];
                    sc[l] = acc * scale;
                    mx = std::max(mx, sc[l]);
                }
                double sum = 0;
                for (int l = 0; l < len; ++l) { sc[l] = std::exp(sc[l] - mx); sum += sc[l]; }
                double* oh = o.data() + (size_t)h * c.D;
                for (int l = 0; l < len; ++l) {
                    const double w = sc[l] / sum;
                    for (int d = 0; d < c.D; ++d) oh[d] += w * vd[(size_t)l * c.D + d];
                }
                lse[h] = mx + std::log(sum);
            }
        }
    };
    auto out_val = [](bool bf, const std::vector<uint16_t>& o, size_t i) {
        uint16_t x = o[i];
        if (bf) { uint32_t u = (uint32_t)x << 16; float f; memcpy(&f, &u, 4); return (double)f; }
        __half_raw r; r.x = x; return (double)__half2float(__half(r));
    };

    // ---------------- part 1: correctness ----------------
    std::vector<Case> ccases;
    const int heads[][3] = {{32, 8, 128}, {16, 2, 64}, {28, 4, 128}, {64, 8, 128}, {32, 32, 128}, {16, 4, 256}};
    for (int bf = 0; bf < 2; ++bf)
        for (auto& hd : heads)
            for (int B : {1, 3, 16})
                for (int L : {512, 2048, 8192})
                    for (int page : {0, 16})
                        for (int rl = 0; rl < 2; ++rl) {
                            if (bf && (B == 16 || L == 8192)) continue;  // BF16: the smaller half
                            if (hd[2] == 256 && (B == 16 || L == 8192)) continue;
                            ccases.push_back({(bool)bf, B, hd[0], hd[1], hd[2], L, page, (bool)rl});
                        }
    for (const Case& c : ccases) {
        Setup s = setup(c);
        const int g = c.hq / c.hkv, tiles = (g + 15) / 16;
        const Split pl = plan(c.B, c.hkv, tiles, c.D, c.L, sms);
        struct Path { std::string name; int kind, splits; };
        std::vector<Path> paths = {{"plan", pl.warps == 8 ? K_W8 : K_A4, pl.splits}};
        for (int S : {2, 4, 8}) {
            if (c.L < 64 * S) continue;
            paths.push_back({"A4@" + std::to_string(S), K_A4, S});
            paths.push_back({"C" + std::to_string(S), S == 2 ? K_C2 : S == 4 ? K_C4 : K_C8, S});
        }
        const size_t on = (size_t)c.B * c.hq * c.D;
        std::vector<std::vector<uint16_t>> outs(paths.size(), std::vector<uint16_t>(on));
        std::vector<std::vector<float>> lses(paths.size(), std::vector<float>(c.B * c.hq));
        for (size_t i = 0; i < paths.size(); ++i) {
            CK(cudaMemset(dv.out, 0xff, on * 2)); CK(cudaMemset(dv.lse, 0xff, (size_t)c.B * c.hq * 4));
            launcher(c, s, paths[i].kind, paths[i].splits)();
            CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
            CK(cudaMemcpy(outs[i].data(), dv.out, on * 2, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(lses[i].data(), dv.lse, (size_t)c.B * c.hq * 4, cudaMemcpyDeviceToHost));
            ++runs;
        }
        {
            std::vector<int> cnt(c.B * c.hkv * tiles);
            CK(cudaMemcpy(cnt.data(), dv.cnt, cnt.size() * 4, cudaMemcpyDeviceToHost));
            for (int x : cnt) if (x != 0) { ++bad; printf("FAIL counters not re-armed\n"); break; }
        }
        const double u = c.bf ? 1.0 / 256 : 1.0 / 2048, tolO = 4 * u + 1e-4;
        for (int b : {0, c.B - 1}) {
            std::vector<double> ro, rl;
            reference(c, b, s.lens[b], ro, rl);
            for (size_t i = 0; i < paths.size(); ++i) {
                double eo = 0, el = 0;
                bool nan = false;
                for (int h = 0; h < c.hq; ++h) {
                    for (int d = 0; d < c.D; ++d) {
                        const double x = out_val(c.bf, outs[i], ((size_t)b * c.hq + h) * c.D + d);
                        if (!std::isfinite(x)) nan = true;
                        eo = std::max(eo, std::fabs(x - ro[(size_t)h * c.D + d]));
                    }
                    const double gl = lses[i][b * c.hq + h];
                    if (s.lens[b] == 0) { if (!(std::isinf(gl) && gl < 0)) nan = true; }
                    else el = std::max(el, std::fabs(gl - rl[h]) / (1 + std::fabs(rl[h])));
                }
                if (nan || !(eo <= tolO) || !(el <= 2e-4)) {
                    ++bad;
                    printf("FAIL %s %d/%d d%d B=%d L=%d page=%d lens=%s path %s: seq %d len %d: max|o-ref| %.3g, lse rel %.3g%s\n",
                           c.bf ? "BF16" : "F16", c.hq, c.hkv, c.D, c.B, c.L, c.page, c.randomLens ? "rand" : "L",
                           paths[i].name.c_str(), b, s.lens[b], eo, el, nan ? ", non-finite" : "");
                }
            }
        }
        for (size_t i = 0; i + 1 < paths.size(); ++i)
            if (paths[i].kind == K_A4 && paths[i].name != "plan" && paths[i + 1].kind >= K_C2)
                for (size_t e = 0; e < on; ++e)
                    maxCA[c.bf] = std::max(maxCA[c.bf], std::fabs(out_val(c.bf, outs[i + 1], e) - out_val(c.bf, outs[i], e)));
    }
    printf("correctness: %zu cases, %ld launches, %d failures; max |C - A4| at the same splits: F16 %.3g, BF16 %.3g\n",
           ccases.size(), runs, bad, maxCA[0], maxCA[1]);
    fflush(stdout);

    // ---------------- part 2: timing ----------------
    std::vector<cudaEvent_t> ev(64);
    for (auto& e : ev) CK(cudaEventCreate(&e));
    printf("\n%-14s %-7s %2s %5s | %-9s %7s | %7s %7s %7s %7s %7s %7s | %-5s %7s %6s\n", "heads", "layout", "B", "L", "plan", "us",
           "A4@2", "C2", "A4@4", "C4", "A4@8", "C8", "bestC", "us", "C/plan");
    double logSum = 0, logSumSame = 0; int nRows = 0, nSame = 0;
    double logByB[3] = {0, 0, 0}; int nByB[3] = {0, 0, 0};
    for (auto& hd : heads) {
        if (hd[2] == 256) continue;
        for (int B : {1, 4, 16})
            for (int L : {512, 2048, 8192})
                for (int page : {0, 16}) {
                    const Case c{false, B, hd[0], hd[1], hd[2], L, page, false};
                    Setup s = setup(c);
                    const int g = c.hq / c.hkv, tiles = (g + 15) / 16;
                    const Split pl = plan(B, c.hkv, tiles, c.D, L, sms);
                    std::vector<std::function<void()>> f = {launcher(c, s, pl.warps == 8 ? K_W8 : K_A4, pl.splits)};
                    int idx[6];
                    for (int j = 0; j < 3; ++j) {
                        const int S = 2 << j;
                        if (L < 64 * S) { idx[2 * j] = idx[2 * j + 1] = -1; continue; }
                        idx[2 * j] = (int)f.size(); f.push_back(launcher(c, s, K_A4, S));
                        idx[2 * j + 1] = (int)f.size(); f.push_back(launcher(c, s, S == 2 ? K_C2 : S == 4 ? K_C4 : K_C8, S));
                    }
                    std::vector<std::vector<float>> t(f.size());
                    for (int r = -3; r < REPS; ++r) {
                        for (size_t j = 0; j < f.size(); ++j) {
                            const size_t i = (j + (size_t)(r + 3)) % f.size();
                            l2_flush_read<<<4 * sms, 512, 0, st>>>((const uint4*)flush, (long long)(flushBytes / 16), sink);
                            CK(cudaEventRecord(ev[2 * i], st)); f[i](); CK(cudaEventRecord(ev[2 * i + 1], st));
                        }
                        CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
                        if (r >= 0)
                            for (size_t i = 0; i < f.size(); ++i) {
                                float ms; CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1])); t[i].push_back(ms * 1000.f);
                            }
                    }
                    std::vector<double> med(f.size());
                    for (size_t i = 0; i < f.size(); ++i) { std::sort(t[i].begin(), t[i].end()); med[i] = t[i][t[i].size() / 2]; }
                    int bestS = 0; double best = 1e30;
                    for (int j = 0; j < 3; ++j) {
                        if (idx[2 * j + 1] < 0) continue;
                        if (med[idx[2 * j + 1]] < best) { best = med[idx[2 * j + 1]]; bestS = 2 << j; }
                        logSumSame += std::log(med[idx[2 * j + 1]] / med[idx[2 * j]]); ++nSame;
                    }
                    char hs[32]; snprintf(hs, sizeof hs, "%d/%d d%d", hd[0], hd[1], hd[2]);
                    char ps[16]; snprintf(ps, sizeof ps, "%s%d", pl.warps == 8 ? "W8@" : "A4@", pl.splits);
                    printf("%-14s %-7s %2d %5d | %-9s %7.2f |", hs, page ? "paged16" : "bhld", B, L, ps, med[0]);
                    for (int j = 0; j < 6; ++j) idx[j] < 0 ? printf(" %7s", "-") : printf(" %7.2f", med[idx[j]]);
                    printf(" | C%-4d %7.2f %6.3f\n", bestS, best, best / med[0]);
                    fflush(stdout);
                    logSum += std::log(best / med[0]); ++nRows;
                    const int bi = B == 1 ? 0 : B == 4 ? 1 : 2;
                    logByB[bi] += std::log(best / med[0]); ++nByB[bi];
                }
    }
    printf("\nsummary: best cluster launch / the plan's launch, geomean over %d rows: %.3f (B=1 %.3f, B=4 %.3f, B=16 %.3f);"
           " C / A4 at the same splits over %d pairs: %.3f\n",
           nRows, std::exp(logSum / nRows), std::exp(logByB[0] / nByB[0]), std::exp(logByB[1] / nByB[1]), std::exp(logByB[2] / nByB[2]),
           nSame, std::exp(logSumSame / nSame));
    printf("checks: %s\n", bad ? "FAILED" : "every path within the fp64 tolerance on every checked sequence, counters re-armed");
    return bad ? 1 : 0;
}
