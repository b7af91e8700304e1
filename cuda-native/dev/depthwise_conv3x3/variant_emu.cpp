// Host emulation of the ring variant's kernel body (variant_nhwc_ring.cu built with RING_EMULATION), to check
// its indexing, ring protocol and arithmetic order without a GPU: every CUDA thread of a block is a
// std::thread, __syncthreads a std::barrier, shared memory a byte buffer poisoned with NaN per block, and
// each cp.async copy is deferred until the issuing thread's cp.async.wait_group requires it to have
// landed (so a missing wait or a slot reused too early reads poison). Outputs are compared with the
// reference's order (nine fmas from +0 in p, q order, + bias, + residual; activation in fp64; one
// rounding): bit-identical for NONE/RELU/RELU6, ≤ 1 ulp for the smooth activations (host expf/erfcf
// here, so this checks the order and the plumbing, not CUDA's libm). Small shapes only (a thread each).
//   bash cuda-native/dev/depthwise_conv3x3/run_variant.sh emulate
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

// ---- the device intrinsics the kernel and common/depthwise_conv3x3.cuh use, on the host
template <class T> T __ldg(const T* p) { return *p; }
template <class T> T __ldcs(const T* p) { return *p; }
template <class T> void __stcs(T* p, T v) { *p = v; }
template <class T> T __shfl_xor_sync(unsigned, T v, int) { return v; }  // gapfill_types.cuh (unused here)
inline float __fmaf_rn(float a, float b, float c) { return std::fmaf(a, b, c); }
inline float __fadd_rn(float a, float b) { volatile float r = a + b; return r; }
inline float __fmul_rn(float a, float b) { volatile float r = a * b; return r; }
inline float __fdiv_rn(float a, float b) { volatile float r = a / b; return r; }
inline float __fdividef(float a, float b) { return a / b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline float __double2float_rn(double d) { return (float)d; }
using std::max;
using std::min;
thread_local uint3 emuThread, emuBlock;
#define threadIdx emuThread
#define blockIdx emuBlock
static unsigned char* g_smem;  // the block's dynamic shared memory
static std::barrier<>* g_bar;
#define __syncthreads() g_bar->arrive_and_wait()
#define RING_SMEM(name) unsigned char* name = g_smem
thread_local std::vector<std::function<void()>> pendingCopies;
thread_local std::vector<std::vector<std::function<void()>>> copyGroups;
static unsigned smem_addr(const void* p) { return (unsigned)((const unsigned char*)p - g_smem); }
static void cp16(unsigned dst, const void* src, unsigned n) {
    pendingCopies.push_back([=] { memcpy(g_smem + dst, src, n); memset(g_smem + dst + n, 0, 16 - n); });
}
static void cp_commit() { copyGroups.push_back(pendingCopies); pendingCopies.clear(); }
template <int N> void cp_wait() {
    while ((int)copyGroups.size() > N) { for (auto& f : copyGroups.front()) f(); copyGroups.erase(copyGroups.begin()); }
}

#define RING_EMULATION 1
#include "variant_nhwc_ring.cu"
namespace {
int blocksPerSM(int, int, int, size_t) { return 2; }  // what ptxas's 120-122 registers give on an H100
int smCount() { return 132; }
}  // namespace

// ---------------------------------------------------------------- reference and driver
static float tof(int dt, uint16_t b) {
    if (dt == F16) { __half_raw r; r.x = b; return __half2float(__half(r)); }
    uint32_t u = (uint32_t)b << 16; float f; memcpy(&f, &u, 4); return f;
}
static uint16_t fromf(int dt, float f) {
    if (dt == F16) { __half_raw r = __float2half_rn(f); return r.x; }
    __nv_bfloat16_raw r = __float2bfloat16_rn(f); return r.x;
}
static double activate(double d, int a) {
    switch (a) {
        case 0: return d;
        case 1: return d < 0 ? 0 : d;
        case 2: return d < 0 ? 0 : d > 6 ? 6 : d;
        case 3: return d / (1 + exp(-d));
        case 4: return 0.5 * d * erfc(-d * 0.70710678118654752440);
        default: { double t = 0.79788456080286535588 * fma(0.044715 * d, d * d, d); return d / (1 + exp(-2 * t)); }
    }
}
template <typename T, int NS>
static void emulate(const RingGeo& g, const T* x, const T* w, const T* b, const T* r, T* y, int h, int wd, int c, int act) {
    std::vector<unsigned char> smem(g.smem);
    for (long long blk = 0; blk < g.blocks; ++blk) {
        std::fill(smem.begin(), smem.end(), 0xff);  // NaN in both dtypes
        g_smem = smem.data();
        std::barrier<> bar(g.threads);
        g_bar = &bar;
        std::vector<std::thread> th;
        for (int t = 0; t < g.threads; ++t)
            th.emplace_back([&, t] {
                emuThread = {(unsigned)t, 0, 0};
                emuBlock = {(unsigned)blk, 0, 0};
                dw_ring<T, 4, 2, NS>(x, w, b, r, y, h, wd, c, g.cgs, g.tws, g.colTiles, g.chunks, g.strips, g.rps, act, g.vec ? 1 : 0);
            });
        for (auto& q : th) q.join();
    }
}

int main() {
    std::mt19937 rng(5);
    // n, h, w, c, bias, residual (0 none, 1 separate, 2 in place), element offset (misaligned), forced rps, ring slots
    struct S { int n, h, w, c, bias, res, off, rps, ns; };
    const S cases[] = {{1, 5, 7, 16, 1, 0, 0, 0, 4},   {2, 3, 17, 24, 1, 1, 0, 2, 4},  {1, 9, 33, 136, 0, 1, 0, 0, 8},
                       {1, 1, 1, 8, 1, 0, 0, 0, 4},    {1, 6, 5, 13, 1, 2, 0, 0, 4},   {2, 4, 16, 12, 1, 1, 1, 1, 4},
                       {1, 7, 45, 72, 1, 0, 1, 3, 8},  {1, 2, 2, 520, 1, 1, 0, 0, 4},  {1, 17, 15, 64, 0, 2, 0, 0, 4},
                       {1, 3, 130, 8, 1, 0, 0, 1, 8},  {1, 4, 9, 3, 1, 1, 0, 0, 4},    {1, 12, 28, 96, 1, 1, 0, 5, 8},
                       {1, 14, 14, 64, 1, 0, 0, 0, 4}, {1, 2, 112, 16, 1, 0, 0, 0, 4}, {1, 20, 3, 40, 1, 1, 0, 0, 8}};
    int failed = 0, total = 0;
    for (const S& s : cases)
        for (int dt : {F16, BF16})
            for (int act = 0; act < 6; ++act) {
                const size_t nx = (size_t)s.n * s.h * s.w * s.c;
                std::vector<uint16_t> x(nx + 8), w(s.c * 9), b(s.c), r(nx + 8), y(nx + 8, 0xffff);
                std::uniform_real_distribution<float> u(0.05f, 2.f);
                auto rnd = [&](float sc) { float v = u(rng) * sc; return fromf(dt, rng() & 1 ? -v : v); };
                for (auto& v : x) v = rnd(1);
                for (auto& v : w) v = rnd(0.3f);
                for (auto& v : b) v = rnd(0.5f);
                for (auto& v : r) v = rnd(0.5f);
                if (s.res == 2) std::copy(r.begin(), r.end(), y.begin());
                uint16_t* yp = y.data() + s.off;
                const uint16_t *xp = x.data() + s.off, *res = r.data() + s.off;
                const uint16_t* rp = s.res == 0 ? nullptr : s.res == 1 ? res : yp;
                std::vector<uint16_t> ref(nx);
                for (int n = 0; n < s.n; ++n)
                    for (int i = 0; i < s.h; ++i)
                        for (int j = 0; j < s.w; ++j)
                            for (int c = 0; c < s.c; ++c) {
                                float acc = 0.f;
                                for (int p = 0; p < 3; ++p)
                                    for (int q = 0; q < 3; ++q) {
                                        const int ii = i + p - 1, jj = j + q - 1;
                                        const bool in = ii >= 0 && ii < s.h && jj >= 0 && jj < s.w;
                                        const float xv = in ? tof(dt, xp[(((size_t)n * s.h + ii) * s.w + jj) * s.c + c]) : 0.f;
                                        acc = std::fmaf(tof(dt, w[c * 9 + p * 3 + q]), xv, acc);
                                    }
                                const size_t o = (((size_t)n * s.h + i) * s.w + j) * s.c + c;
                                float v = acc;
                                if (s.bias) v = __fadd_rn(v, tof(dt, b[c]));
                                if (s.res) v = __fadd_rn(v, tof(dt, res[o]));
                                ref[o] = fromf(dt, (float)activate(v, act));
                            }
                const int cfg = s.ns == 8 ? 1 : 0;
                const RingGeo g = ring_geometry(cfg, dt, xp, yp, rp, s.n, s.h, s.w, s.c, s.rps);
                auto run = [&](auto tag) {
                    using T = decltype(tag);
                    const T *X = (const T*)xp, *Wt = (const T*)w.data(), *B = s.bias ? (const T*)b.data() : nullptr, *Rs = (const T*)rp;
                    if (s.ns == 8) emulate<T, 8>(g, X, Wt, B, Rs, (T*)yp, s.h, s.w, s.c, act);
                    else emulate<T, 4>(g, X, Wt, B, Rs, (T*)yp, s.h, s.w, s.c, act);
                };
                if (dt == F16) run(__half()); else run(__nv_bfloat16());
                size_t bad = 0, first = 0;
                long long mx = 0;
                auto ord = [](uint16_t v) { return (v & 0x8000) ? -(long long)(v & 0x7fff) : (long long)v; };
                for (size_t i = 0; i < nx; ++i) {
                    const long long d = llabs(ord(yp[i]) - ord(ref[i]));
                    mx = std::max(mx, d);
                    if (act <= 2 ? yp[i] != ref[i] : d > 1) { if (!bad) first = i; bad++; }
                }
                total++;
                if (bad) {
                    failed++;
                    printf("FAIL %s N=%d H=%d W=%d C=%d bias=%d res=%d off=%d rps=%d slots=%d act=%d: %zu bad (first %zu: %04x, ref %04x), max %lld ulp\n",
                           dt == F16 ? "F16" : "BF16", s.n, s.h, s.w, s.c, s.bias, s.res, s.off, s.rps, s.ns, act, bad, first, yp[first], ref[first], mx);
                }
            }
    printf("EMULATION %d cases (shapes x F16/BF16 x 6 activations), %d failed\n", total, failed);
    return failed ? 1 : 0;
}
