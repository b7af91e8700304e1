// Checks and times the NHWC row-ring variant (variant_nhwc_ring.cu) against the shipped NHWC kernel
// (k_nhwc.cu: src/main/cuda/depthwise_conv3x3/nhwc.cu, launched with the shipped geometry), F16/BF16,
// stride 1. Run by run_variant.sh; README.md in this folder explains the variant.
//  1. odd sizes (H, W not multiples of the tile, C not a multiple of 8 or 4, misaligned views, bias and
//     residual on/off, residual in place, forced short strips) × every activation × every variant
//     configuration: every output element compared with the shipped kernel's, outputs poisoned (NaN)
//     before each launch, inputs random and non-zero: bit-identical required for NONE/RELU/RELU6, at most
//     1 ulp for SILU/GELU_ERF/GELU_TANH;
//  2. the sweep's stride-1 shapes (bias on, no residual, as the benchmark): the same check for every
//     activation, then shipped and variants timed interleaved (L2 flushed by a 256 MiB read before every
//     launch, CUDA events, median of 27) for NONE/RELU/SILU/GELU_ERF; floor = bytes / copy bandwidth
//     measured here; one line per row and a summary of the rows moving >= 32 MB.
#include "harness.h"
#include "variant.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

static const char* actName[] = {"NONE", "RELU", "RELU6", "SILU", "GELU_ERF", "GELU_TANH"};
static int numSMs;

// ---------------------------------------------------------------- shipped launch (DepthwiseConv3x3Heuristics.nhwcGrid)
static bool al(const void* p, int b) { return p == nullptr || (uintptr_t)p % b == 0; }
static void shipped(int dt, const void* x, const void* w, const void* b, const void* r, void* y, int n, int h, int wd, int c,
                    int act, cudaStream_t st) {
    const int cpt = nhwc_cpt(dt, 1, 0), wc = nhwc_wc(dt, 1, 0), groups = (c + cpt - 1) / cpt, cb = dw_pick_cb(groups);
    const long long perStrip = (long long)n * ((groups + cb - 1) / cb) * cb * ((wd + wc - 1) / wc);
    const int vec = c % cpt == 0 && al(x, cpt * 2) && al(y, cpt * 2) && al(r, cpt * 2);
    nhwc_launch(dt, 1, 0, x, w, b, r, y, n, h, wd, c, h, wd, dw_pick_rps(h, 16, perStrip, numSMs), cb, act, vec, st);
}

// ---------------------------------------------------------------- device helpers
// Random non-zero values: |v| uniform in [lo, hi], random sign, rounded once to the dtype.
__global__ void fill(uint16_t* p, size_t n, unsigned long long seed, float lo, float hi, int dt) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull; z = (z ^ (z >> 27)) * 0x94D049BB133111EBull; z ^= z >> 31;
        float v = lo + (hi - lo) * (float)(z >> 40) * (1.f / 16777216.f);
        if (z & 1) v = -v;
        p[i] = dt == F16 ? __half_as_ushort(__float2half_rn(v)) : __bfloat16_as_ushort(__float2bfloat16_rn(v));
    }
}
// Element-by-element comparison of the variant (b) with the shipped kernel (a): s[0] bit-different,
// s[1] failing (different bits where exact is required, else more than 1 ulp apart or NaN on one side),
// s[2] max ulp distance, s[3] NaNs in a (never: inputs are finite), s[4] first failing index.
__global__ void compare(const uint16_t* a, const uint16_t* b, size_t n, int exact, int dt, unsigned long long* s) {
    unsigned long long diff = 0, bad = 0, mx = 0, nanA = 0, first = ~0ull;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const unsigned ua = a[i], ub = b[i];
        const unsigned expMask = dt == F16 ? 0x7c00u : 0x7f80u, manMask = dt == F16 ? 0x03ffu : 0x007fu;
        const bool na = (ua & expMask) == expMask && (ua & manMask), nb = (ub & expMask) == expMask && (ub & manMask);
        const long long oa = (ua & 0x8000u) ? -(long long)(ua & 0x7fffu) : ua, ob = (ub & 0x8000u) ? -(long long)(ub & 0x7fffu) : ub;
        const unsigned long long d = na != nb ? 1ull << 20 : (unsigned long long)llabs(oa - ob);
        nanA += na;
        if (ua != ub) {
            diff++;
            mx = max(mx, d);
            if (exact || d > 1 || na != nb) { bad++; first = min(first, (unsigned long long)i); }
        }
    }
    atomicAdd(&s[0], diff); atomicAdd(&s[1], bad); atomicMax(&s[2], mx); atomicAdd(&s[3], nanA); atomicMin(&s[4], first);
}
// L2 flush: a read of n uint4 (never writes: the buffer is zero)
__global__ void flush_read(const uint4* p, size_t n, int* sink) {
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) *sink = 1;
}

static unsigned long long seedCounter = 20261124;
static void randomize(void* p, size_t n, float lo, float hi, int dt, cudaStream_t st) {
    fill<<<numSMs * 8, 256, 0, st>>>((uint16_t*)p, n, (seedCounter++) * 0x2545F4914F6CDD1Dull, lo, hi, dt);
}
struct Stats { unsigned long long diff, bad, maxUlp, nanA, first; };
static unsigned long long* dStats;
static Stats compareOut(const void* a, const void* b, size_t n, bool exact, int dt, cudaStream_t st) {
    Stats h{0, 0, 0, 0, ~0ull};
    CK(cudaMemcpyAsync(dStats, &h, sizeof h, cudaMemcpyHostToDevice, st));
    compare<<<numSMs * 8, 256, 0, st>>>((const uint16_t*)a, (const uint16_t*)b, n, exact ? 1 : 0, dt, dStats);
    CK(cudaMemcpyAsync(&h, dStats, sizeof h, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    return h;
}

// One problem on preallocated buffers. resMode: 0 none, 1 separate tensor, 2 in place (y holds it).
struct Case { int dt, n, h, w, c, bias, resMode, off, rps; };
struct Dev { char *x, *w, *b, *r, *ys, *yv; };
// Runs shipped and variant cfg on the case for act and compares; returns the stats.
static Stats runCase(const Case& k, const Dev& d, int cfg, int act, cudaStream_t st, bool regenerate) {
    const size_t nx = (size_t)k.n * k.h * k.w * k.c, e = 2 * (size_t)k.off;
    const void *x = d.x + e, *wt = d.w, *b = k.bias ? d.b : nullptr;
    void *ys = d.ys + e, *yv = d.yv + e, *r = d.r + e;
    if (regenerate) {
        randomize(d.x + e, nx, 0.05f, 2.f, k.dt, st); randomize(d.w, (size_t)k.c * 9, 0.05f, 0.6f, k.dt, st);
        randomize(d.b, k.c, 0.05f, 1.f, k.dt, st); randomize(r, nx, 0.05f, 1.f, k.dt, st);
    }
    const void* rs = k.resMode == 0 ? nullptr : k.resMode == 1 ? r : ys;
    const void* rv = k.resMode == 0 ? nullptr : k.resMode == 1 ? r : yv;
    if (k.resMode == 2) { CK(cudaMemcpyAsync(ys, r, nx * 2, cudaMemcpyDeviceToDevice, st)); CK(cudaMemcpyAsync(yv, r, nx * 2, cudaMemcpyDeviceToDevice, st)); }
    else { CK(cudaMemsetAsync(ys, 0xff, nx * 2, st)); CK(cudaMemsetAsync(yv, 0xff, nx * 2, st)); }  // NaN poison
    shipped(k.dt, x, wt, b, rs, ys, k.n, k.h, k.w, k.c, act, st);
    const RingGeo g = ring_geometry(cfg, k.dt, x, yv, rv, k.n, k.h, k.w, k.c, k.rps);
    ring_run(cfg, k.dt, g, x, wt, b, rv, yv, k.h, k.w, k.c, act, st);
    CK(cudaGetLastError());
    return compareOut(ys, yv, nx, act <= 2, k.dt, st);
}

// ---------------------------------------------------------------- 1. odd sizes
static int oddSizes(cudaStream_t st) {
    const int hs[] = {1, 2, 3, 7, 17, 33}, ws[] = {1, 2, 5, 15, 16, 45, 130}, cs[] = {1, 3, 4, 8, 12, 13, 24, 64, 72, 136, 520};
    Dev d;
    const size_t maxEl = 2ull * 33 * 130 * 520 + 64;
    for (char** p : {&d.x, &d.r, &d.ys, &d.yv}) CK(cudaMalloc(p, maxEl * 2));
    CK(cudaMalloc(&d.w, 520 * 9 * 2)); CK(cudaMalloc(&d.b, 520 * 2));
    long long cases = 0, launches = 0, failed = 0, compared[kRingConfigs] = {}, differing[kRingConfigs] = {};
    unsigned long long maxUlp[kRingConfigs] = {};
    int idx = 0;
    for (int h : hs)
        for (int w : ws)
            for (int c : cs) {
                const int rpsForce[] = {0, 1, 2, 3};
                for (int dt : {F16, BF16}) {
                    Case k{dt, 1 + idx % 2, h, w, c, idx & 1, (idx >> 1) % 3, idx % 5 == 4 ? 1 : 0, rpsForce[(idx / 3) % 4]};
                    idx++;
                    for (int act = 0; act < 6; ++act)
                        for (int cfg = 0; cfg < kRingConfigs; ++cfg) {
                            const Stats s = runCase(k, d, cfg, act, st, act == 0 && cfg == 0);
                            launches += 2; compared[cfg] += (long long)k.n * h * w * c; differing[cfg] += (long long)s.diff;
                            maxUlp[cfg] = std::max(maxUlp[cfg], s.maxUlp);
                            if (s.bad || s.nanA) {
                                if (failed < 20)
                                    printf("FAIL odd %s %s %s N=%d H=%d W=%d C=%d bias=%d res=%d off=%d rps=%d: %llu bad of %llu differing, max ulp %llu, first %llu, shipped NaNs %llu\n",
                                           ring_name(cfg), dt == F16 ? "F16" : "BF16", actName[act], k.n, h, w, c, k.bias, k.resMode, k.off, k.rps,
                                           s.bad, s.diff, s.maxUlp, s.first, s.nanA);
                                failed++;
                            }
                        }
                    cases++;
                }
            }
    printf("ODD sizes: %lld cases x 6 activations x %d configurations, %lld launches, %lld failed; elements differing from shipped:",
           cases, kRingConfigs, launches, failed);
    for (int v = 0; v < kRingConfigs; ++v)
        printf(" %s %lld of %lld (max %llu ulp)%s", ring_name(v), differing[v], compared[v], maxUlp[v], v + 1 < kRingConfigs ? "," : "\n");
    for (char* p : {d.x, d.r, d.ys, d.yv, d.w, d.b}) cudaFree(p);
    return (int)failed;
}

// ---------------------------------------------------------------- 2. sweep shapes
static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

int main() {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0)); numSMs = prop.multiProcessorCount;
    printf("GPU %s, %d SMs, cc %d.%d\n", prop.name, numSMs, prop.major, prop.minor);
    cudaStream_t st; CK(cudaStreamCreate(&st));
    CK(cudaMalloc(&dStats, 5 * sizeof(unsigned long long)));
    int failures = oddSizes(st);

    const size_t flushBytes = 256u << 20;  // ≥ 4× the 50 MB L2
    void* flushBuf; int* sink;
    CK(cudaMalloc(&flushBuf, flushBytes)); CK(cudaMemset(flushBuf, 0, flushBytes)); CK(cudaMalloc(&sink, 4));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    double bw;
    {
        const size_t nb = 1u << 30; void *a, *b2; CK(cudaMalloc(&a, nb)); CK(cudaMalloc(&b2, nb));
        std::vector<float> t;
        for (int i = 0; i < 12; ++i) {
            float ms;
            CK(cudaEventRecord(e0, st)); CK(cudaMemcpyAsync(b2, a, nb, cudaMemcpyDeviceToDevice, st)); CK(cudaEventRecord(e1, st));
            CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (i >= 2) t.push_back(ms);
        }
        bw = 2.0 * nb / (median(t) * 1e-3);
        cudaFree(a); cudaFree(b2);
        printf("copy bandwidth %.0f GB/s (1 GiB device-to-device copy, median of 10)\n", bw / 1e9);
    }
    const int shapes[][4] = {{1, 384, 64, 64}, {8, 96, 112, 112}, {16, 64, 224, 224}, {32, 256, 56, 56}, {32, 512, 28, 28}, {64, 1024, 14, 14}};
    const int timed[] = {0, 1, 3, 4};
    const int NV = 1 + kRingConfigs, reps = 27;
    struct Row { double mb, floor, t[1 + kRingConfigs]; int act; };
    std::vector<Row> rows;
    printf("\n%-5s %-18s %-8s %7s %8s | %9s %5s |", "dtype", "NxHxWxC", "act", "MB", "floor_us", "shipped", "frac");
    for (int v = 0; v < kRingConfigs; ++v) printf(" %9s %5s", ring_name(v), "frac");
    printf(" | best/shipped | check\n");
    for (auto& sh : shapes) {
        const int n = sh[0], c = sh[1], h = sh[2], w = sh[3];
        const size_t nx = (size_t)n * h * w * c;
        for (int dt : {F16, BF16}) {
            Dev d;
            for (char** p : {&d.x, &d.r, &d.ys, &d.yv}) CK(cudaMalloc(p, nx * 2));
            CK(cudaMalloc(&d.w, (size_t)c * 18)); CK(cudaMalloc(&d.b, (size_t)c * 2));
            const Case k{dt, n, h, w, c, 1, 0, 0, 0};
            std::string geo;
            for (int v = 0; v < kRingConfigs; ++v) {
                const RingGeo g = ring_geometry(v, dt, d.x, d.yv, nullptr, n, h, w, c, 0);
                char buf[256];
                snprintf(buf, sizeof buf, "%s: %dx%d threads (TC %d, TW %d), %d col tiles x %d chunks x %d strips of %d rows = %lld blocks, %d/SM, %zu B smem%s; ",
                         ring_name(v), g.cgs, g.tws, g.cgs * g.cpt, g.tws * g.wc, g.colTiles, g.chunks, g.strips, g.rps, g.blocks, g.blocksPerSM, g.smem, g.vec ? "" : " SCALAR");
                geo += buf;
            }
            printf("# %s %dx%dx%dx%d %s\n", dt == F16 ? "F16" : "BF16", n, h, w, c, geo.c_str());
            for (int act = 0; act < 6; ++act) {
                std::string chk;
                bool ok = true;
                for (int v = 0; v < kRingConfigs; ++v) {
                    const Stats s = runCase(k, d, v, act, st, act == 0 && v == 0);
                    if (s.bad || s.nanA) {
                        ok = false; failures++;
                        char buf[160];
                        snprintf(buf, sizeof buf, "%s FAIL %llu bad (max ulp %llu, first %llu) ", ring_name(v), s.bad, s.maxUlp, s.first);
                        chk += buf;
                    } else if (s.diff) {
                        char buf[80]; snprintf(buf, sizeof buf, "%s %llu differ by 1 ulp ", ring_name(v), s.diff); chk += buf;
                    }
                }
                if (ok && chk.empty()) chk = "ok, bit-identical";
                else if (ok) chk = "ok, " + chk;
                if (std::find(std::begin(timed), std::end(timed), act) == std::end(timed)) {
                    printf("%-5s %3dx%3dx%3dx%-5d %-8s check only | %s\n", dt == F16 ? "F16" : "BF16", n, h, w, c, actName[act], chk.c_str());
                    continue;
                }
                RingGeo geoV[kRingConfigs];
                for (int v = 0; v < kRingConfigs; ++v) geoV[v] = ring_geometry(v, dt, d.x, d.yv, nullptr, n, h, w, c, 0);
                std::vector<float> t[1 + kRingConfigs];
                for (int rep = -2; rep < reps; ++rep)
                    for (int j = 0; j < NV; ++j) {
                        const int v = (j + (rep & 0xff)) % NV;  // rotate the order every repetition
                        flush_read<<<numSMs * 4, 512, 0, st>>>((const uint4*)flushBuf, flushBytes / 16, sink);
                        CK(cudaEventRecord(e0, st));
                        if (v == 0) shipped(dt, d.x, d.w, d.b, nullptr, d.ys, n, h, w, c, act, st);
                        else ring_run(v - 1, dt, geoV[v - 1], d.x, d.w, d.b, nullptr, d.yv, h, w, c, act, st);
                        CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1));
                        float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
                        if (rep >= 0) t[v].push_back(ms * 1000.f);
                    }
                CK(cudaGetLastError());
                Row r;
                r.act = act;
                r.mb = 2.0 * 2 * nx / 1e6;
                r.floor = (2.0 * 2 * nx + 2.0 * 10 * c) / bw * 1e6;
                double best = 1e30;
                for (int v = 0; v < NV; ++v) { r.t[v] = median(t[v]); if (v) best = std::min(best, r.t[v]); }
                rows.push_back(r);
                printf("%-5s %3dx%3dx%3dx%-5d %-8s %7.1f %8.2f | %9.2f %5.2f |", dt == F16 ? "F16" : "BF16", n, h, w, c, actName[act], r.mb, r.floor,
                       r.t[0], r.floor / r.t[0]);
                for (int v = 1; v < NV; ++v) printf(" %9.2f %5.2f", r.t[v], r.floor / r.t[v]);
                printf(" | %11.2fx | %s\n", r.t[0] / best, chk.c_str());
                fflush(stdout);
            }
            for (char* p : {d.x, d.r, d.ys, d.yv, d.w, d.b}) cudaFree(p);
        }
    }
    // ---------- summary over the rows moving >= 32 MB
    int big = 0, reach[1 + kRingConfigs] = {};
    std::vector<double> frac[1 + kRingConfigs][6];
    for (auto& r : rows) {
        if (r.mb < 32) continue;
        big++;
        for (int v = 0; v < NV; ++v) { reach[v] += r.floor / r.t[v] >= 0.75; frac[v][r.act].push_back(r.floor / r.t[v]); }
    }
    printf("\nSUMMARY rows moving >= 32 MB (F16/BF16 NHWC stride 1): %d; reaching 0.75 of the floor: shipped %d", big, reach[0]);
    for (int v = 1; v < NV; ++v) printf(", %s %d", ring_name(v - 1), reach[v]);
    printf("\nSUMMARY median floor fraction by activation (shipped");
    for (int v = 1; v < NV; ++v) printf(" / %s", ring_name(v - 1));
    printf("):");
    for (int act : timed) {
        printf(" %s", actName[act]);
        for (int v = 0; v < NV; ++v) {
            std::vector<double> f = frac[v][act];
            std::sort(f.begin(), f.end());
            printf("%s%.2f", v ? " / " : " ", f.empty() ? 0.0 : f[f.size() / 2]);
        }
        printf(";");
    }
    printf("\nSUMMARY check failures (odd sizes + sweep shapes): %d\n", failures);
    return failures ? 1 : 0;
}
