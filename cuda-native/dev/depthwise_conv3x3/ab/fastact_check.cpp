// CPU check of the fast smooth activations (src/main/cuda/common/fast_smooth_act.cuh (was ab/dwconv_fastact.cuh), README "Cheaper smooth activations"): every
// fp32 operation is IEEE here as on the GPU (the same source, compiled with -ffp-contract=off), and the two
// hardware approximations are replaced by the correctly rounded value moved by kE ulps (ex2.approx.ftz,
// documented ≤ 2 ulp from it) and kR ulps (rcp.approx.ftz, ≤ 1 ulp), for every (kE, kR) in {−2, 0, 2} × {−1, 0, 1},
// flush-to-zero kept. The fp32 result is rounded to F16 and BF16 and compared with the exactly rounded fp64
// reference (DepthwiseConv3x3Reference's formulas, libm erfc) of the same pre-activation v. Inputs:
//   - every fp32 bit pattern whose lowest 8 bits are 0 (2^24 values: the whole range, ±0, subnormals, ±inf),
//   - every fp32 value within ±1 % of each transition: where |y| crosses the F16/BF16 smallest normal, the
//     smallest subnormal and half of it (both sides of 0), where y reaches the F16/BF16 overflow threshold, and
//     where the fast forms' ex2 argument reaches −126 (flush to zero).
// Prints, per activation and dtype, the max ulp and the count of 1-ulp results (nominal kE = kR = 0, and the
// worst of the 9 corners), the fp32 value's largest errors over the corners (relative where |y| ≥ 2^-25 and where
// |y| ≥ 2^-126, absolute below), then the same with 8× the documented errors (kE = ±16, kR = ±8) as a margin. Exit code 1 if any result is > 1 ulp.
//   bash cuda-native/dev/depthwise_conv3x3/ab/run_fastact.sh check      (g++, about a minute on 2 cores)
#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "exact16.h"

// ---- the device code on the host: IEEE fp32 operations, emulated MUFU approximations
#define __device__
#define __forceinline__ inline
static float __fmul_rn(float a, float b) { volatile float r = a * b; return r; }
static float __fadd_rn(float a, float b) { volatile float r = a + b; return r; }
static float __fmaf_rn(float a, float b, float c) { return std::fmaf(a, b, c); }
static thread_local int kE = 0, kR = 0;  // ulps the emulated ex2 / rcp results are moved by
static float steps(float r, int k) {
    for (; k > 0; --k) r = std::nextafter(r, INFINITY);
    for (; k < 0; ++k) r = std::nextafter(r, -INFINITY);
    return r;
}
static float ftz(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.f, x) : x; }
static float fa_ex2(float x) {
    x = ftz(x);
    if (std::isnan(x)) return x;
    float r = (float)std::exp2((double)x);
    if (r != 0.f && !std::isinf(r)) r = steps(r, kE);
    return r < FLT_MIN ? 0.f : r;  // results below 2^-126 flushed (+0: 2^x > 0)
}
static float fa_rcp(float x) {
    x = ftz(x);
    float r = (float)(1.0 / (double)x);
    if (r != 0.f && !std::isinf(r) && !std::isnan(r)) r = steps(r, kR);
    return ftz(r);
}
#define GAPFILL_FASTACT_HOST_EMULATION 1
#include "fast_smooth_act.cuh"  // the shipped forms, src/main/cuda/common
using namespace gapfill::dwconv;

static float fast(float v, int act) {
    return act == 3 ? fast_silu_f32(v) : act == 4 ? fast_gelu_erf_f32(v) : fast_gelu_tanh_f32(v);
}

// ---- inputs
static float bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
// every fp32 in [lo, hi] (same sign)
static void add_range(std::vector<float>& in, double lo, double hi) {
    if (lo > hi) std::swap(lo, hi);
    if (hi <= 0) { size_t n = in.size(); add_range(in, -hi, -lo); for (size_t i = n; i < in.size(); ++i) in[i] = -in[i]; return; }
    for (uint32_t u = fbits((float)std::max(lo, 0.0)), e = fbits((float)hi); u <= e && u < 0x7f800000u; ++u) in.push_back(bitsf(u));
}
// v < vmin (< 0) with |exact(v)| = target, by bisection on the monotone tail
static double tail_crossing(int act, double target, double vmin) {
    double lo = -1e4, hi = vmin;  // |y(lo)| < target < |y(hi)|
    for (int i = 0; i < 200; ++i) {
        double mid = 0.5 * (lo + hi);
        (std::fabs(exact_act((float)mid, act)) < target ? lo : hi) = mid;
    }
    return hi;
}
static std::vector<float> inputs(int act) {
    std::vector<float> in;
    for (uint32_t hi = 0; hi < (1u << 24); ++hi) in.push_back(bitsf(hi << 8));  // NaNs among them are skipped later
    const double vmin = act == 3 ? -1.28 : act == 4 ? -0.76 : -0.76;  // where |y| peaks on the negative side
    auto win = [&](double v0) { add_range(in, v0 * 0.99, v0 * 1.01); };
    for (double t : {0x1p-14, 0x1p-24, 0x1p-25, 0x1p-126, 0x1p-133, 0x1p-134}) {
        win(tail_crossing(act, t, vmin));
        win(2 * t);  // y ≈ v/2 near 0
        win(-2 * t);
    }
    win(65520.0);                 // F16 overflow (y ≈ v there)
    win(3.3961775292304e38);      // BF16 overflow threshold (2 − 2^-8)·2^127
    // ex2's argument at −126 (its result flushes below): silu |v| = 252/log2 e; gelu_tanh |a| = 2|t| the same;
    // gelu_erf v²·log2(e)/4 ≈ 126 + 1.4
    if (act == 3) { win(-174.67); win(174.67); }
    if (act == 5) { win(-12.93); win(12.93); }
    if (act == 4) { win(-18.72); win(18.72); }
    return in;
}

struct Stat { long maxUlp = 0, n1 = 0, bad = 0; float worstV = 0; };
// largest relative error of the fp32 value where 2^-25 ≤ |y| ≤ 2^127 (F16 outputs not flushed to 0) and where
// 2^-126 ≤ |y| ≤ 2^127, and the largest absolute error where |y| < 2^-126
struct Res { Stat s[2]; double rel16 = 0, rel = 0, abs = 0; float relV = 0; };

static void run(int act, const std::vector<float>& in, const std::vector<std::pair<int, int>>& corners, Res& res) {
    const int T = std::max(1u, std::thread::hardware_concurrency());
    std::vector<Res> part(T);
    std::vector<std::thread> th;
    for (int t = 0; t < T; ++t)
        th.emplace_back([&, t] {
            Res& r = part[t];
            for (size_t i = t; i < in.size(); i += T) {
                const float v = in[i];
                if (std::isnan(v)) continue;
                const double y = exact_act(v, act);
                const uint16_t ref[2] = {round16(y, false), round16(y, true)};
                for (auto [e, q] : corners) {
                    kE = e; kR = q;
                    const float f = fast(v, act);
                    const double ay = std::fabs(y), err = std::fabs((double)f - y);
                    if (ay >= 0x1p-126 && ay <= 0x1p127) {  // above: both round to ±inf in F16 and BF16
                        if (err / ay > r.rel) { r.rel = err / ay; r.relV = v; }
                        if (ay >= 0x1p-25) r.rel16 = std::max(r.rel16, err / ay);
                    } else if (ay < 0x1p-126) {
                        r.abs = std::max(r.abs, err);
                    }
                    for (int b = 0; b < 2; ++b) {
                        const uint16_t got = round16(f, b == 1);
                        Stat& s = r.s[b];
                        long d = isnan16(got, b) != isnan16(ref[b], b) ? 1L << 20 : isnan16(got, b) ? 0 : ulp16(got, ref[b]);
                        if (d > s.maxUlp) { s.maxUlp = d; s.worstV = v; }
                        if (d == 1) s.n1++;
                        if (d > 1) s.bad++;
                    }
                }
            }
        });
    for (auto& x : th) x.join();
    for (auto& r : part) {
        if (r.rel > res.rel) { res.rel = r.rel; res.relV = r.relV; }
        res.rel16 = std::max(res.rel16, r.rel16);
        res.abs = std::max(res.abs, r.abs);
        for (int b = 0; b < 2; ++b) {
            Stat& s = res.s[b];
            if (r.s[b].maxUlp > s.maxUlp) { s.maxUlp = r.s[b].maxUlp; s.worstV = r.s[b].worstV; }
            s.n1 += r.s[b].n1; s.bad += r.s[b].bad;
        }
    }
}

int main() {
    const char* name[6] = {"", "", "", "SILU", "GELU_ERF", "GELU_TANH"};
    std::vector<std::pair<int, int>> nominal = {{0, 0}}, corners, stress = {{-16, -8}, {-16, 8}, {16, -8}, {16, 8}};
    for (int e : {-2, 0, 2}) for (int q : {-1, 0, 1}) corners.push_back({e, q});
    long bad = 0;
    printf("%-9s %-5s %9s | %-28s | %-34s | %s\n", "act", "dtype", "inputs", "nominal: max ulp, n at 1 ulp",
           "9 corners: max ulp, n1 (of 9x), >1", "8x errors: max ulp");
    for (int act : {3, 5, 4}) {
        std::vector<float> in = inputs(act);
        Res r0, r9, r8;
        run(act, in, nominal, r0);
        run(act, in, corners, r9);
        run(act, in, stress, r8);
        for (int b = 0; b < 2; ++b) {
            printf("%-9s %-5s %9zu | %ld ulp, %9ld (%.4f%%)      | %ld ulp, %10ld, %ld (worst v %.9g) | %ld ulp (v %.9g)\n", name[act],
                   b ? "BF16" : "F16", in.size(), r0.s[b].maxUlp, r0.s[b].n1, 100.0 * r0.s[b].n1 / in.size(), r9.s[b].maxUlp,
                   r9.s[b].n1, r9.s[b].bad, r9.s[b].worstV, r8.s[b].maxUlp, r8.s[b].worstV);
            bad += r9.s[b].bad;
        }
        printf("%-9s fp32 value: relative error 2^%.2f where |y| >= 2^-25, 2^%.2f where |y| >= 2^-126 (at v = %.9g), "
               "absolute 2^%.1f below; 8x: 2^%.2f, 2^%.2f, 2^%.1f\n",
               name[act], std::log2(r9.rel16), std::log2(r9.rel), r9.relV, std::log2(r9.abs), std::log2(r8.rel16),
               std::log2(r8.rel), std::log2(r8.abs));
        fflush(stdout);
    }
    printf("%s: %ld results above 1 ulp\n", bad ? "FAIL" : "PASS", bad);
    return bad ? 1 : 0;
}
