// Checks and times the whole-plane NCHW kernel (src/main/cuda/depthwise_conv3x3/nchw_plane.cu, k_plane.cu) against
// the shipped NCHW kernel (nchw.cu through k_nchw.cu, launched with DepthwiseConv3x3Heuristics' geometry), every
// dtype; stride 1 (the plane kernel takes no stride-2 problem: those cases are counted as not taken). Run by run_plane.sh.
//  1. odd sizes (H, W, C, N; bias and residual on/off, residual in place, y misaligned for the per-element stores,
//     forced small chunks so the last chunk has a tail of < 16 bytes, forced strip heights, grids of 1-3 persistent
//     blocks so the double buffer turns over) × every activation: every output element compared with the shipped
//     kernel's, outputs poisoned (NaN) before each launch, inputs random and non-zero. Both kernels run the same
//     operations in the same order, so every element must be bit-identical, smooth activations included.
//  2. the sweep's NCHW shapes (bias on, no residual, as the benchmark): the same check for every activation, then
//     timed interleaved (L2 flushed by a 256 MiB read before every launch, CUDA events, median of 25) for
//     NONE/RELU/SILU/GELU_ERF: nchw.cu, the plane kernel in its shipped geometry, and with outputs stored from
//     registers (PLANE_GEO=1: staged/direct × 128/256 threads instead; PLANE_AB=1: an earlier revision beside it);
//     floor = bytes / copy bandwidth measured here; a summary of the rows moving >= 32 MB.
#include "dev_harness.h"  // cuda-native/dev/common: CK, l2_flush_read, copy_rate_gbps
#include "harness.h"
#include "plane.h"
#ifndef PLANE_AB
#define PLANE_AB 0
#endif
#ifndef PLANE_GEO  // PLANE_GEO=1: time geometry alternatives of the current kernel instead (direct stores, 256 threads)
#define PLANE_GEO 0
#endif

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>


static const char* actName[] = {"NONE", "RELU", "RELU6", "SILU", "GELU_ERF", "GELU_TANH"};
static const char* dtName[] = {"F32", "F16", "BF16"};
static int numSMs;
static int esz(int dt) { return dt == F32 ? 4 : 2; }
static bool al(const void* p, int b) { return p == nullptr || (uintptr_t)p % b == 0; }

// shipped NCHW launch (DepthwiseConv3x3Heuristics.nchwVectorWidth / nchwGrid)
static void shipped(int dt, int s, const void* x, const void* w, const void* b, const void* r, void* y, int planes, int c,
                    int h, int wd, int act, cudaStream_t st) {
    const int ho = (h + s - 1) / s, wo = (wd + s - 1) / s, es = esz(dt);
    int vw = 1;
    for (int v = 16 / es; v >= 2; v /= 2)
        if (s == 1 ? wd % v == 0 : (wd == 2 * wo && wo % v == 0)) { vw = v; break; }
    if (dt == F32 && s == 2 && vw > 1) vw /= 2;
    while (vw > 1 && !(al(x, vw * es) && al(y, vw * es) && al(r, vw * es))) vw /= 2;
    const long long perStrip = (long long)planes * ((wo + vw - 1) / vw);
    const int rps = dw_pick_rps(ho, dt == F32 && s == 2 ? 16 : 8, perStrip, numSMs);
    nchw_launch(dt, s, vw, x, w, b, r, y, planes, c, h, wd, ho, wo, rps, act, st);
}

__global__ void fill(void* p, size_t n, unsigned long long seed, float lo, float hi, int dt) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull; z = (z ^ (z >> 27)) * 0x94D049BB133111EBull; z ^= z >> 31;
        float v = lo + (hi - lo) * (float)(z >> 40) * (1.f / 16777216.f);
        if (z & 1) v = -v;
        if (dt == F32) ((float*)p)[i] = v;
        else ((uint16_t*)p)[i] = dt == F16 ? __half_as_ushort(__float2half_rn(v)) : __bfloat16_as_ushort(__float2bfloat16_rn(v));
    }
}
// s[0] bit-different elements, s[1] max ulp distance, s[2] NaNs in a (the shipped output: never, inputs finite),
// s[3] first differing index
__global__ void compare(const void* a, const void* b, size_t n, int dt, unsigned long long* s) {
    unsigned long long diff = 0, mx = 0, nanA = 0, first = ~0ull;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        long long oa, ob; bool na;
        if (dt == F32) {
            const unsigned ua = ((const unsigned*)a)[i], ub = ((const unsigned*)b)[i];
            na = (ua & 0x7f800000u) == 0x7f800000u && (ua & 0x7fffffu);
            oa = (ua & 0x80000000u) ? -(long long)(ua & 0x7fffffffu) : ua;
            ob = (ub & 0x80000000u) ? -(long long)(ub & 0x7fffffffu) : ub;
        } else {
            const unsigned ua = ((const uint16_t*)a)[i], ub = ((const uint16_t*)b)[i];
            const unsigned em = dt == F16 ? 0x7c00u : 0x7f80u, mm = dt == F16 ? 0x03ffu : 0x007fu;
            na = (ua & em) == em && (ua & mm);
            oa = (ua & 0x8000u) ? -(long long)(ua & 0x7fffu) : ua;
            ob = (ub & 0x8000u) ? -(long long)(ub & 0x7fffu) : ub;
        }
        nanA += na;
        if (oa != ob) { diff++; mx = max(mx, (unsigned long long)llabs(oa - ob)); first = min(first, (unsigned long long)i); }
    }
    atomicAdd(&s[0], diff); atomicMax(&s[1], mx); atomicAdd(&s[2], nanA); atomicMin(&s[3], first);
}
static unsigned long long seedCounter = 20261126;
static void randomize(void* p, size_t n, float lo, float hi, int dt, cudaStream_t st) {
    fill<<<numSMs * 8, 256, 0, st>>>(p, n, (seedCounter++) * 0x2545F4914F6CDD1Dull, lo, hi, dt);
}
struct Stats { unsigned long long diff, maxUlp, nanA, first; };
static unsigned long long* dStats;
static Stats compareOut(const void* a, const void* b, size_t n, int dt, cudaStream_t st) {
    Stats h{0, 0, 0, ~0ull};
    CK(cudaMemcpyAsync(dStats, &h, sizeof h, cudaMemcpyHostToDevice, st));
    compare<<<numSMs * 8, 256, 0, st>>>(a, b, n, dt, dStats);
    CK(cudaMemcpyAsync(&h, dStats, sizeof h, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    return h;
}

// resMode: 0 none, 1 separate tensor, 2 in place (y holds it). yOff: elements y (and res) are shifted by.
struct Case { int dt, s, n, c, h, w, bias, resMode, yOff, gridMode, pOv, rOv; bool noStage; int variant; };
struct Dev { char *x, *w, *b, *r, *ys, *yv; };
static bool runCase(const Case& k, const Dev& d, int act, cudaStream_t st, bool regenerate, Stats* out, PlaneGeo* geo) {
    const int es = esz(k.dt), ho = (k.h + k.s - 1) / k.s, wo = (k.w + k.s - 1) / k.s, planes = k.n * k.c;
    const size_t nx = (size_t)planes * k.h * k.w, ny = (size_t)planes * ho * wo, e = (size_t)k.yOff * es;
    const void *x = d.x, *wt = d.w, *b = k.bias ? d.b : nullptr;
    void *ys = d.ys + e, *yv = d.yv + e, *r = d.r + e;
    if (regenerate) {
        randomize(d.x, nx, 0.05f, 2.f, k.dt, st); randomize(d.w, (size_t)k.c * 9, 0.05f, 0.6f, k.dt, st);
        randomize(d.b, k.c, 0.05f, 1.f, k.dt, st); randomize(r, ny, 0.05f, 1.f, k.dt, st);
    }
    const void* rs = k.resMode == 0 ? nullptr : k.resMode == 1 ? r : ys;
    const void* rv = k.resMode == 0 ? nullptr : k.resMode == 1 ? r : yv;
    const PlaneGeo g = plane_geometry(k.dt, k.s, x, yv, rv, planes, k.h, k.w, k.gridMode, k.pOv, k.rOv, k.noStage, k.variant);
    if (geo) *geo = g;
    if (!g.ok) return false;
    if (k.resMode == 2) { CK(cudaMemcpyAsync(ys, r, ny * es, cudaMemcpyDeviceToDevice, st)); CK(cudaMemcpyAsync(yv, r, ny * es, cudaMemcpyDeviceToDevice, st)); }
    else { CK(cudaMemsetAsync(ys, 0xff, ny * es, st)); CK(cudaMemsetAsync(yv, 0xff, ny * es, st)); }  // NaN poison
    shipped(k.dt, k.s, x, wt, b, rs, ys, planes, k.c, k.h, k.w, act, st);
    plane_run(k.dt, k.s, g, x, wt, b, rv, yv, planes, k.c, k.h, k.w, act, st);
    CK(cudaGetLastError());
    *out = compareOut(ys, yv, ny, k.dt, st);
    return true;
}

// quick (PLANE_ODD=quick, for compute-sanitizer): a subset of the sizes
static int oddSizes(cudaStream_t st, bool quick) {
    std::vector<int> hs = {1, 2, 3, 7, 14, 17}, ws = {1, 2, 3, 6, 14, 16, 28, 34, 56, 64}, cs = {1, 3, 5, 64};
    if (quick) { hs = {2, 7, 17}; ws = {3, 6, 14, 56}; cs = {3, 64}; }
    Dev d;
    const size_t maxEl = 2ull * 17 * 64 * 64 + 64;
    for (char** p : {&d.x, &d.r, &d.ys, &d.yv}) CK(cudaMalloc(p, maxEl * 4));
    CK(cudaMalloc(&d.w, 64 * 9 * 4)); CK(cudaMalloc(&d.b, 64 * 4));
    long long cases = 0, launches = 0, failed = 0, skipped = 0, compared = 0;
    int idx = 0;
    for (int s : {1, 2})
        for (int h : hs)
            for (int w : ws)
                for (int c : cs)
                    for (int dt : {F32, F16, BF16}) {
                        const int gridModes[] = {0, 1, 2, 3};
                        const int pOv[] = {0, 1, 3, 0, 2};
                        const int rOv[] = {0, 0, 1, 2, 3, 0};
                        Case k{dt, s, 1 + idx % 2, c, h, w, idx & 1, (idx >> 1) % 3, idx % 7 == 3 ? 1 : 0, gridModes[(idx / 3) % 4],
                               pOv[idx % 5], rOv[(idx / 5) % 6], idx % 11 == 5, 0};
                        idx++;
                        bool any = false;
                        for (int act = 0; act < 6; ++act) {
                            Stats sres; PlaneGeo g;
                            if (!runCase(k, d, act, st, act == 0, &sres, &g)) { skipped++; break; }
                            any = true;
                            launches += 2;
                            compared += (long long)k.n * c * ((h + s - 1) / s) * ((w + s - 1) / s);
                            if (sres.diff || sres.nanA) {
                                if (failed < 20)
                                    printf("FAIL odd %s s%d %s N=%d C=%d H=%d W=%d bias=%d res=%d yOff=%d seg=%d R=%d P=%d grid=%d chunks=%d vec=%d stage=%d: %llu differ, max ulp %llu, first %llu, shipped NaNs %llu\n",
                                           dtName[dt], s, actName[act], k.n, c, h, w, k.bias, k.resMode, k.yOff, g.seg, g.R, g.P, g.grid, g.chunks, g.vecOut, g.stage,
                                           sres.diff, sres.maxUlp, sres.first, sres.nanA);
                                failed++;
                            }
                        }
                        cases += any;
                    }
    printf("ODD sizes: %lld cases x 6 activations, %lld launches, %lld elements compared, %lld failed (not bit-identical); %lld cases the plane kernel does not take\n",
           cases, launches, compared, failed, skipped);
    for (char* p : {d.x, d.r, d.ys, d.yv, d.w, d.b}) cudaFree(p);
    return (int)failed;
}

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

int main() {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0)); numSMs = prop.multiProcessorCount;
    printf("GPU %s, %d SMs, cc %d.%d\n", prop.name, numSMs, prop.major, prop.minor);
    cudaStream_t st; CK(cudaStreamCreate(&st));
    CK(cudaMalloc(&dStats, 4 * sizeof(unsigned long long)));
    if (getenv("PLANE_PROFILE")) {  // one launch per listed shape (F16, NONE, bias): for ncu
        const int ps[][4] = {{64, 1024, 14, 14}, {32, 512, 28, 28}, {32, 256, 56, 56}};
        for (auto& q : ps) {
            const size_t nx = (size_t)q[0] * q[1] * q[2] * q[3];
            char *x, *y, *w, *b;
            CK(cudaMalloc(&x, nx * 2)); CK(cudaMalloc(&y, nx * 2)); CK(cudaMalloc(&w, q[1] * 18)); CK(cudaMalloc(&b, q[1] * 2));
            randomize(x, nx, 0.05f, 2.f, F16, st); randomize(w, (size_t)q[1] * 9, 0.05f, 0.6f, F16, st); randomize(b, q[1], 0.05f, 1.f, F16, st);
            const PlaneGeo g = plane_geometry(F16, 1, x, y, nullptr, q[0] * q[1], q[2], q[3], 0, 0, 0);
            shipped(F16, 1, x, w, b, nullptr, y, q[0] * q[1], q[1], q[2], q[3], 0, st);
            plane_run(F16, 1, g, x, w, b, nullptr, y, q[0] * q[1], q[1], q[2], q[3], 0, st);
            CK(cudaStreamSynchronize(st));
            for (char* p : {x, y, w, b}) cudaFree(p);
        }
        return 0;
    }
    const char* oddMode = getenv("PLANE_ODD");  // "only": odd sizes, no timing; "quick": a subset, no timing
    const bool quick = oddMode && std::string(oddMode) == "quick";
    int failures = getenv("PLANE_SKIP_ODD") ? 0 : oddSizes(st, quick);
    if (oddMode) {
        printf("SUMMARY check failures (odd sizes%s): %d\n", quick ? ", quick subset" : "", failures);
        return failures ? 1 : 0;
    }

    const size_t flushBytes = 256u << 20;
    void* flushBuf; unsigned* sink;
    CK(cudaMalloc(&flushBuf, flushBytes)); CK(cudaMemset(flushBuf, 0, flushBytes)); CK(cudaMalloc(&sink, 4));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    const double bw = copy_rate_gbps(st) * 1e9;
    printf("copy bandwidth %.0f GB/s (1 GiB device-to-device copy, median of 9)\n", bw / 1e9);
    // {N, C, H, W, stride}
    const int shapes[][5] = {{1, 384, 64, 64, 1}, {8, 96, 112, 112, 1}, {32, 256, 56, 56, 1}, {32, 512, 28, 28, 1},
                             {64, 1024, 14, 14, 1}, {16, 64, 224, 224, 1}, {8, 96, 112, 112, 2}, {32, 256, 56, 56, 2},
                             {16, 64, 224, 224, 2}};
    const int timed[] = {0, 1, 3, 4};
#if PLANE_AB
    const int NV = 3, reps = 25;  // shipped nchw.cu; plane; prev (the same geometry)
#elif PLANE_GEO
    const int NV = 5, reps = 25;  // shipped nchw.cu; plane (staged, 128 threads targeted); direct 128; direct 256; staged 256
#else
    const int NV = 3, reps = 25;  // shipped nchw.cu; plane (the shipped geometry); plane with outputs stored from registers
#endif
    struct Row { double mb, floor, t[NV]; int act; };
    std::vector<Row> rows;
    printf("\n%-5s %-20s %-8s %7s %8s | %9s %5s |", "dtype", "NxCxHxW s", "act", "MB", "floor_us", "shipped", "frac");
    static const char* geoNames[] = {"", "plane", "dir128", "dir256", "stg256"};
    for (int v = 1; v < NV; ++v) printf(" %9s %5s |", PLANE_AB ? plane_variant_name(v - 1) : PLANE_GEO ? geoNames[v] : v == 1 ? "plane" : "direct", "frac");
    printf(" %8s | check\n", "best/shp");
    for (auto& sh : shapes) {
        const int n = sh[0], c = sh[1], h = sh[2], w = sh[3], s = sh[4];
        const int ho = (h + s - 1) / s, wo = (w + s - 1) / s, planes = n * c;
        const size_t nx = (size_t)planes * h * w, ny = (size_t)planes * ho * wo;
        for (int dt : {F16, BF16, F32}) {
            const int es = esz(dt);
            Dev d;
            for (char** p : {&d.x, &d.r}) CK(cudaMalloc(p, nx * es));
            for (char** p : {&d.ys, &d.yv}) CK(cudaMalloc(p, ny * es));
            CK(cudaMalloc(&d.w, (size_t)c * 9 * es)); CK(cudaMalloc(&d.b, (size_t)c * es));
            const Case k{dt, s, n, c, h, w, 1, 0, 0, 0, 0, 0, false, 0};
            PlaneGeo g = plane_geometry(dt, s, d.x, d.yv, nullptr, planes, h, w, 0, 0, 0);
            PlaneGeo gv[NV];
            gv[1] = g;
            gv[2] = plane_geometry(dt, s, d.x, d.yv, nullptr, planes, h, w, 1, 0, 0);
#if PLANE_AB
            gv[2] = plane_geometry(dt, s, d.x, d.yv, nullptr, planes, h, w, 0, 0, 0, false, 1);
#elif PLANE_GEO
            gv[2] = plane_geometry(dt, s, d.x, d.yv, nullptr, planes, h, w, 0, 0, 0, true, 0, 128);
            gv[3] = plane_geometry(dt, s, d.x, d.yv, nullptr, planes, h, w, 0, 0, 0, true, 0, 256);
            gv[4] = plane_geometry(dt, s, d.x, d.yv, nullptr, planes, h, w, 0, 0, 0, false, 0, 256);
#else
            gv[2] = plane_geometry(dt, s, d.x, d.yv, nullptr, planes, h, w, 0, 0, 0, true);
#endif
            if (!g.ok) {
                printf("# %s %dx%dx%dx%d s%d: plane kernel does not apply\n", dtName[dt], n, c, h, w, s);
                for (char* p : {d.x, d.r, d.ys, d.yv, d.w, d.b}) cudaFree(p);
                continue;
            }
            printf("# %s %dx%dx%dx%d s%d:", dtName[dt], n, c, h, w, s);
            for (int v = 1; v < NV; ++v)
                printf(" [%d] SEG %d R %d P %d %dthr %dB %d/SM grid %d stage %d;", v, gv[v].seg, gv[v].R, gv[v].P, gv[v].threads, gv[v].smem,
                       gv[v].bps, gv[v].grid, gv[v].stage);
            printf("\n");
            for (int act = 0; act < 6; ++act) {
                Stats sres;
                runCase(k, d, act, st, act == 0, &sres, nullptr);
                std::string chk = "ok, bit-identical";
                if (sres.diff || sres.nanA) {
                    failures++;
                    char buf[160];
                    snprintf(buf, sizeof buf, "FAIL %llu differ (max ulp %llu, first %llu), shipped NaNs %llu", sres.diff, sres.maxUlp, sres.first, sres.nanA);
                    chk = buf;
                }
                if (std::find(std::begin(timed), std::end(timed), act) == std::end(timed)) {
                    printf("%-5s %3dx%4dx%3dx%-3d s%d %-8s check only | %s\n", dtName[dt], n, c, h, w, s, actName[act], chk.c_str());
                    continue;
                }
                std::vector<float> t[NV];
                for (int rep = -2; rep < reps; ++rep)
                    for (int j = 0; j < NV; ++j) {
                        const int v = (j + (rep & 0xff)) % NV;
                        l2_flush_read<<<numSMs * 4, 512, 0, st>>>((const uint4*)flushBuf, (long long)(flushBytes / 16), sink);
                        CK(cudaEventRecord(e0, st));
                        if (v == 0) shipped(dt, s, d.x, d.w, d.b, nullptr, d.ys, planes, c, h, w, act, st);
                        else plane_run(dt, s, gv[v], d.x, d.w, d.b, nullptr, d.yv, planes, c, h, w, act, st);
                        CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1));
                        float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
                        if (rep >= 0) t[v].push_back(ms * 1000.f);
                    }
                CK(cudaGetLastError());
                Row r;
                r.act = act;
                r.mb = (double)(nx + ny) * es / 1e6;
                r.floor = ((double)(nx + ny) * es + 10.0 * c * es) / bw * 1e6;
                for (int v = 0; v < NV; ++v) r.t[v] = median(t[v]);
                rows.push_back(r);
                double best = 1e30;
                printf("%-5s %3dx%4dx%3dx%-3d s%d %-8s %7.1f %8.2f |", dtName[dt], n, c, h, w, s, actName[act], r.mb, r.floor);
                for (int v = 0; v < NV; ++v) { printf(" %9.2f %5.2f |", r.t[v], r.floor / r.t[v]); if (v) best = std::min(best, (double)r.t[v]); }
                printf(" %7.2fx | %s\n", r.t[0] / best, chk.c_str());
                fflush(stdout);
            }
            for (char* p : {d.x, d.r, d.ys, d.yv, d.w, d.b}) cudaFree(p);
        }
    }
    int big = 0, reach[5] = {}, faster = 0;
    for (auto& r : rows) {
        if (r.mb < 32) continue;
        big++;
        for (int v = 0; v < NV && v < 3; ++v) reach[v] += r.floor / r.t[v] >= 0.75;
        faster += r.t[1] < r.t[0];
    }
    printf("\nSUMMARY rows moving >= 32 MB that the plane kernel takes: %d; reaching 0.75 of the floor: shipped %d, v1 %d, v2 %d; plane (persistent) faster than shipped on %d\n",
           big, reach[0], reach[1], reach[2], faster);
    printf("SUMMARY check failures (odd sizes + sweep shapes): %d\n", failures);
    return failures ? 1 : 0;
}
