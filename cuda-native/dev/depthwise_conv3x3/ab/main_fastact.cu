// A/B/B2 of the fast smooth activations (run_fastact.sh; README "Cheaper smooth activations"): the shipped kernels
// compiled against the shipped header (A, symbols a_*), variant_fastact.sed (B) and variant_fastact_cap.sed (B2,
// symbols c_*), launched with the shipped geometry as main.cu does, on main.cu's shapes and data (seed 7).
// Correctness is decided against the exact value, not against A: the host recomputes every output's fp32
// pre-activation in the reference's order (nine fmaf from +0, p then q, x = +0 outside the image, + bias) and
// rounds the fp64 activation of it once to F16/BF16 (exact16.h). NONE must match that rounding bit for bit (which
// also proves the host pre-activation is the kernels'), SILU/GELU_TANH/GELU_ERF within 1 ulp, for A, B and B2 on
// every element. Timing: A, B, B2 interleaved (order rotated), L2 flushed by a 256 MiB read before every launch,
// CUDA events, median of 25. Exit code 1 on any check failure.
#include "ab_common.h"
#include "exact16.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

void c_nchw_launch(int dt, int s, int vw, const void* x, const void* w, const void* b, const void* r, void* y, int planes,
                   int c, int h, int wd, int ho, int wo, int rps, int act, cudaStream_t st);
void c_nhwc_launch(int dt, int s, int cfg, const void* x, const void* w, const void* b, const void* r, void* y, int n, int h,
                   int wd, int c, int ho, int wo, int rps, int cb, int act, int vec, cudaStream_t st);

static const int NV = 3;  // 0 = A, 1 = B, 2 = B2

static void launch(int var, int dt, bool nhwc, int n, int c, int h, int w, int act, const void* x, const void* wt, const void* b,
                   void* y, cudaStream_t st) {
    const NchwLaunch nchw[NV] = {a_nchw_launch, nchw_launch, c_nchw_launch};
    const NhwcLaunch nhwcs[NV] = {a_nhwc_launch, nhwc_launch, c_nhwc_launch};
    launch_shipped(nchw[var], nhwcs[var], dt, nhwc, n, c, h, w, act, x, wt, b, y, st);
}

static float tof(int dt, uint16_t u) {
    if (dt == F16) { __half_raw r; r.x = u; return __half2float(__half(r)); }
    uint32_t v = (uint32_t)u << 16; float f; memcpy(&f, &v, 4); return f;
}

// f(i) for i in [0, n) on every hardware thread
template <class F> static void par(size_t n, F f) {
    const unsigned T = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> th;
    for (unsigned t = 0; t < T; ++t) th.emplace_back([=] { for (size_t i = n * t / T; i < n * (t + 1) / T; ++i) f(i); });
    for (auto& x : th) x.join();
}

// The fp32 pre-activation of every output in y's order: the reference's fmaf order, then + bias.
static void pre_activation(bool nhwc, int n, int c, int h, int w, const std::vector<float>& x, const std::vector<float>& wt,
                           const std::vector<float>& b, std::vector<float>& pre) {
    pre.resize((size_t)n * c * h * w);
    par(pre.size(), [&](size_t o) {
        int cc, i, j, nn;
        if (nhwc) { cc = (int)(o % c); size_t r = o / c; j = (int)(r % w); r /= w; i = (int)(r % h); nn = (int)(r / h); }
        else { j = (int)(o % w); size_t r = o / w; i = (int)(r % h); r /= h; cc = (int)(r % c); nn = (int)(r / c); }
        float acc = 0.f;
        for (int p = 0; p < 3; ++p)
            for (int q = 0; q < 3; ++q) {
                const int xi = i + p - 1, xj = j + q - 1;
                float xv = 0.f;
                if (xi >= 0 && xi < h && xj >= 0 && xj < w)
                    xv = nhwc ? x[(((size_t)nn * h + xi) * w + xj) * c + cc] : x[(((size_t)nn * c + cc) * h + xi) * w + xj];
                acc = std::fmaf(wt[cc * 9 + p * 3 + q], xv, acc);
            }
        volatile float v = acc + b[cc];
        pre[o] = v;
    });
}

struct Check { long maxUlp = 0, n1 = 0, bad = 0; };
static Check check(int dt, int act, const std::vector<uint16_t>& got, const std::vector<uint16_t>& ref) {
    const bool bf = dt == BF16;
    const unsigned T = std::max(1u, std::thread::hardware_concurrency());
    std::vector<Check> part(T);
    std::vector<std::thread> th;
    for (unsigned t = 0; t < T; ++t)
        th.emplace_back([&, t] {
            Check& k = part[t];
            for (size_t i = got.size() * t / T; i < got.size() * (t + 1) / T; ++i) {
                if (got[i] == ref[i]) continue;
                long d = isnan16(got[i], bf) || isnan16(ref[i], bf) ? (isnan16(got[i], bf) && isnan16(ref[i], bf) ? 0 : 1L << 20)
                                                                   : ulp16(got[i], ref[i]);
                k.maxUlp = std::max(k.maxUlp, d);
                if (d == 1) k.n1++;
                if (d > (act == 0 ? 0 : 1)) k.bad++;
            }
        });
    for (auto& x : th) x.join();
    Check r;
    for (auto& k : part) { r.maxUlp = std::max(r.maxUlp, k.maxUlp); r.n1 += k.n1; r.bad += k.bad; }
    return r;
}

int main() {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0)); numSMs = prop.multiProcessorCount;
    printf("GPU %s, %d SMs; A = shipped header, B = variant_fastact.sed, B2 = variant_fastact_cap.sed\n", prop.name, numSMs);
    Timer timer;
    cudaStream_t st = timer.st;
    std::mt19937 g(7);
    long failures = 0;
    printf("%-5s %-4s %-15s %-9s %8s %8s %6s %8s %6s | ulp vs exact (max/n at 1): %-16s %-16s %-16s\n", "dtype", "lay", "NxCxHxW", "act",
           "A us", "B us", "B/A", "B2 us", "B2/A", "A", "B", "B2");
    for (auto& sh : kShapes) {
        int n = sh[0], c = sh[1], h = sh[2], w = sh[3];
        size_t el = (size_t)n * c * h * w;
        for (int dt : {F16, BF16}) {
            const Inputs in = draw_inputs(g, dt, el, c);
            const std::vector<uint16_t>&hx = in.x, &hw = in.w, &hb = in.b;
            std::vector<float> fx(el), fw(c * 9), fbias(c), pre;
            par(el, [&](size_t i) { fx[i] = tof(dt, hx[i]); });
            for (int i = 0; i < c * 9; ++i) fw[i] = tof(dt, hw[i]);
            for (int i = 0; i < c; ++i) fbias[i] = tof(dt, hb[i]);
            void *x, *wt, *b, *y[NV];
            CK(cudaMalloc(&x, el * 2)); CK(cudaMalloc(&wt, c * 18)); CK(cudaMalloc(&b, c * 2));
            for (int v = 0; v < NV; ++v) CK(cudaMalloc(&y[v], el * 2));
            CK(cudaMemcpy(x, hx.data(), el * 2, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(wt, hw.data(), c * 18, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(b, hb.data(), c * 2, cudaMemcpyHostToDevice));
            std::vector<uint16_t> ref(el), got(el);
            for (bool nhwc : {false, true}) {
                pre_activation(nhwc, n, c, h, w, fx, fw, fbias, pre);
                for (int act : kActs) {
                    par(el, [&](size_t i) { ref[i] = round16(act == 0 ? (double)pre[i] : exact_act(pre[i], act), dt == BF16); });
                    Check ck[NV];
                    for (int v = 0; v < NV; ++v) {
                        CK(cudaMemset(y[v], 0xff, el * 2));  // NaN poison
                        launch(v, dt, nhwc, n, c, h, w, act, x, wt, b, y[v], st);
                        CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
                        CK(cudaMemcpy(got.data(), y[v], el * 2, cudaMemcpyDeviceToHost));
                        ck[v] = check(dt, act, got, ref);
                        failures += ck[v].bad;
                    }
                    std::vector<float> t[NV];
                    for (int rep = 0; rep < 27; ++rep)
                        for (int k = 0; k < NV; ++k) {
                            const int v = (k + rep) % NV;
                            const float us = timer.time_us([&] { launch(v, dt, nhwc, n, c, h, w, act, x, wt, b, y[v], st); });
                            if (rep >= 2) t[v].push_back(us);
                        }
                    float med[NV];
                    for (int v = 0; v < NV; ++v) { std::sort(t[v].begin(), t[v].end()); med[v] = t[v][t[v].size() / 2]; }
                    char shs[32], cs[NV][32];
                    snprintf(shs, sizeof shs, "%dx%dx%dx%d", n, c, h, w);
                    for (int v = 0; v < NV; ++v)
                        snprintf(cs[v], sizeof cs[v], "%ld/%ld%s", ck[v].maxUlp, ck[v].n1, ck[v].bad ? " FAIL" : "");
                    printf("%-5s %-4s %-15s %-9s %8.1f %8.1f %6.3f %8.1f %6.3f | %27s %-16s %-16s %-16s\n", dt == F16 ? "f16" : "bf16",
                           nhwc ? "NHWC" : "NCHW", shs, kActName[act], med[0], med[1], med[1] / med[0], med[2], med[2] / med[0], "",
                           cs[0], cs[1], cs[2]);
                    fflush(stdout);
                }
            }
            cudaFree(x); cudaFree(wt); cudaFree(b);
            for (int v = 0; v < NV; ++v) cudaFree(y[v]);
        }
    }
    printf("%s: %ld elements outside the rule (NONE bit-exact, smooth activations <= 1 ulp of the exact rounding)\n",
           failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
