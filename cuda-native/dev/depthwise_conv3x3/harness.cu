// Standalone check-and-time harness for the depthwise_conv3x3 kernels (no Java). Host part; the
// kernels live in k_old.cu (previous design, commit 69a26a8), k_nchw.cu and k_nhwc.cu (the shipped
// sources plus two alternative NHWC configurations), compiled in parallel by run.sh.
//  1. odd-shape correctness sweep of every new kernel instantiation (every dtype × layout × stride ×
//     activation × access width / configuration, bias and residual on and off, unaligned pointers,
//     outputs poisoned): bit-exact vs a CPU reference with the same tap order for NONE/RELU/RELU6,
//     ≤ 1 ulp for SILU/GELU;
//  2. the issue's sweep: every variant checked element by element against the reference for every
//     activation timed (poisoned outputs, fresh random inputs), then timed with CUDA events, L2 flushed
//     before every repetition, all variants and the vendor interleaved, medians. The vendor is the
//     faster of cuDNN's fused conv+bias+act call (where cuDNN accepts it) and the composition
//     conv → add bias → activation (GELU: our elementwise pass), as DepthwiseConv3x3Cudnn keeps the
//     faster of the two.
//  3. "prof" mode: one launch each of old/new NCHW/NHWC on f16 32×256×56×56 for ncu.
// cuDNN is loaded with dlopen (no headers needed).
#include "vendor_gelu.cu"
#include "harness.h"

#include <dlfcn.h>
#include <omp.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

static const char* dtName[] = {"F32", "F16", "BF16"};
static const int dtBytes[] = {4, 2, 2};
static const char* actName[] = {"NONE", "RELU", "RELU6", "SILU", "GELU_ERF", "GELU_TANH"};
static int numSMs = 132;

// ---------------------------------------------------------------- host dtype helpers
static float bitsToFloat(DT dt, uint32_t b) {
    if (dt == F32) { float f; memcpy(&f, &b, 4); return f; }
    if (dt == BF16) { uint32_t u = b << 16; float f; memcpy(&f, &u, 4); return f; }
    __half_raw r; r.x = (unsigned short)b; return __half2float(__half(r));
}
static uint32_t floatToBits(DT dt, float f) {  // round to nearest even, once
    if (dt == F32) { uint32_t u; memcpy(&u, &f, 4); return u; }
    if (dt == BF16) { __nv_bfloat16 h = __float2bfloat16_rn(f); __nv_bfloat16_raw r = h; return r.x; }
    __half h = __float2half_rn(f); __half_raw r = h; return r.x;
}
static long long ordered(DT dt, uint32_t b) {
    int w = dt == F32 ? 32 : 16;
    long long sign = 1LL << (w - 1), mag = b & (sign - 1);
    return (b & sign) ? -mag : mag;
}

struct Buf {  // raw element bits on the host, in the dtype
    DT dt; std::vector<uint32_t> v;
    float at(size_t i) const { return bitsToFloat(dt, v[i]); }
};
// Uniform values in [-1, 1), rounded to the dtype (splitmix64 per element, parallel).
static Buf randomBuf(DT dt, size_t n, std::mt19937& g) {
    Buf b{dt, std::vector<uint32_t>(n)};
    uint64_t seed = ((uint64_t)g() << 32) | g() | 1;
    #pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)n; ++i) {
        uint64_t z = seed + 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull; z = (z ^ (z >> 27)) * 0x94D049BB133111EBull; z ^= z >> 31;
        float u = (float)(z >> 40) * (1.0f / 16777216.0f) * 2.f - 1.f;
        b.v[i] = floatToBits(dt, u);
    }
    return b;
}
// Device copy at an element offset `off` (0 = 256-byte aligned; 1 = misaligned view).
struct DBuf { void* base = nullptr; void* p = nullptr; };
static DBuf upload(const Buf& b, int off = 0) {
    size_t n = b.v.size(), e = dtBytes[b.dt];
    std::vector<unsigned char> raw(n * e);
    #pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)n; ++i) memcpy(&raw[i * e], &b.v[i], e);
    DBuf d; CK(cudaMalloc(&d.base, raw.size() + 16)); d.p = (char*)d.base + off * e;
    CK(cudaMemcpy(d.p, raw.data(), raw.size(), cudaMemcpyHostToDevice));
    return d;
}
static DBuf alloc(DT dt, size_t n, int off = 0) { DBuf d; CK(cudaMalloc(&d.base, n * dtBytes[dt] + 16)); d.p = (char*)d.base + off * dtBytes[dt]; return d; }
static void release(DBuf& d) { if (d.base) cudaFree(d.base); d.base = d.p = nullptr; }
static void download(DT dt, const void* d, size_t n, std::vector<uint32_t>& v) {
    size_t e = dtBytes[dt];
    static std::vector<unsigned char> raw; raw.resize(n * e);
    CK(cudaMemcpy(raw.data(), d, raw.size(), cudaMemcpyDeviceToHost));
    v.assign(n, 0);
    #pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)n; ++i) memcpy(&v[i], &raw[i * e], e);
}

// ---------------------------------------------------------------- problem + reference
struct Prob { DT dt; bool nhwc; int n, c, h, w, s; bool bias, res; };
static int outH(const Prob& p) { return (p.h + p.s - 1) / p.s; }
static int outW(const Prob& p) { return (p.w + p.s - 1) / p.s; }
static size_t nIn(const Prob& p) { return (size_t)p.n * p.c * p.h * p.w; }
static size_t nOut(const Prob& p) { return (size_t)p.n * p.c * outH(p) * outW(p); }

static double activate(float v, int act) {
    double d = v;
    switch (act) {
        case 0: return v;
        case 1: return v < 0.f ? 0.f : v;
        case 2: return v < 0.f ? 0.f : (v > 6.f ? 6.f : v);
        case 3: return d / (1.0 + exp(-d));
        case 4: return 0.5 * d * erfc(-d * 0.70710678118654752440);
        default: { double t = 0.79788456080286535588 * fma(0.044715 * d, d * d, d); return d / (1.0 + exp(-2.0 * t)); }
    }
}

// fp32 pre-activation (nine fmas in the fixed order, + bias, + residual), output order of the layout.
static std::vector<float> preact(const Prob& p, const Buf& x, const Buf& w, const Buf* b, const Buf* r) {
    int ho = outH(p), wo = outW(p);
    std::vector<float> y(nOut(p));
    #pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < p.n; ++n)
        for (int c = 0; c < p.c; ++c) {
            float wf[9];
            for (int t = 0; t < 9; ++t) wf[t] = w.at((size_t)c * 9 + t);
            for (int i = 0; i < ho; ++i)
                for (int j = 0; j < wo; ++j) {
                    float acc = 0.f;
                    for (int pp = 0; pp < 3; ++pp)
                        for (int q = 0; q < 3; ++q) {
                            int row = p.s * i + pp - 1, col = p.s * j + q - 1;
                            float xv = 0.f;
                            if (row >= 0 && row < p.h && col >= 0 && col < p.w) {
                                size_t xi = p.nhwc ? (((size_t)n * p.h + row) * p.w + col) * p.c + c
                                                   : (((size_t)n * p.c + c) * p.h + row) * p.w + col;
                                xv = x.at(xi);
                            }
                            acc = fmaf(wf[pp * 3 + q], xv, acc);
                        }
                    size_t o = p.nhwc ? (((size_t)n * ho + i) * wo + j) * p.c + c : (((size_t)n * p.c + c) * ho + i) * wo + j;
                    float v = acc;
                    if (b) v = v + b->at(c);
                    if (r) v = v + r->at(o);
                    y[o] = v;
                }
        }
    return y;
}
static void refBits(DT dt, const std::vector<float>& v, int act, std::vector<uint32_t>& out) {
    out.resize(v.size());
    #pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)v.size(); ++i) out[i] = floatToBits(dt, (float)activate(v[i], act));
}

struct Cmp { size_t n = 0, identical = 0, fail = 0; long long maxUlp = 0; size_t firstBad = (size_t)-1; };
static Cmp compare(DT dt, const std::vector<uint32_t>& got, const std::vector<uint32_t>& ref, long long allow) {
    Cmp c; c.n = got.size();
    size_t ident = 0, fail = 0; long long mx = 0; size_t first = (size_t)-1;
    #pragma omp parallel for reduction(+ : ident, fail) reduction(max : mx) reduction(min : first) schedule(static)
    for (long long i = 0; i < (long long)got.size(); ++i) {
        long long d = llabs(ordered(dt, got[i]) - ordered(dt, ref[i]));
        if (std::isnan(bitsToFloat(dt, got[i])) != std::isnan(bitsToFloat(dt, ref[i]))) d = 1LL << 40;
        if (got[i] == ref[i]) ident++;
        mx = std::max(mx, d);
        if (d > allow) { fail++; first = std::min(first, (size_t)i); }
    }
    c.identical = ident; c.fail = fail; c.maxUlp = mx; c.firstBad = first;
    return c;
}

// ---------------------------------------------------------------- launch parameters (mirror DepthwiseConv3x3.java)
static bool al(const void* p, int bytes) { return p == nullptr || ((uintptr_t)p % bytes) == 0; }
// strip-row targets of the shipped choice (DepthwiseConv3x3Heuristics.NCHW_ROWS, NCHW_ROWS_F32_S2, NHWC_ROWS)
static const int kRowsNchw = 8, kRowsNchwF32S2 = 16, kRowsNhwc = 16;
struct NchwCfg { int vw, rps; };
// The shipped choice (DepthwiseConv3x3Heuristics.nchwVectorWidth, then narrowed for alignment as
// DepthwiseConv3x3.launchCustom does); th = 0 takes the shipped strip target.
static NchwCfg pickNchw(const Prob& p, const void* x, const void* y, const void* r, int th = 0) {
    int esz = dtBytes[p.dt], ho = outH(p), wo = outW(p), vw = 1;
    for (int v = 16 / esz; v >= 2; v /= 2) {
        bool shape = p.s == 1 ? p.w % v == 0 : (p.w == 2 * wo && wo % v == 0);
        if (shape) { vw = v; break; }
    }
    bool f32s2 = p.dt == F32 && p.s == 2;
    if (f32s2 && vw > 1) vw /= 2;
    while (vw > 1 && !(al(x, vw * esz) && al(y, vw * esz) && al(r, vw * esz))) vw /= 2;
    if (th == 0) th = f32s2 ? kRowsNchwF32S2 : kRowsNchw;
    long long perStrip = (long long)p.n * p.c * ((wo + vw - 1) / vw);
    return {vw, dw_pick_rps(ho, th, perStrip, numSMs)};
}
struct NhwcCfg { int rps, cb, vec; };
static NhwcCfg pickNhwc(const Prob& p, int cfg, const void* x, const void* y, const void* r) {
    int esz = dtBytes[p.dt], cpt = nhwc_cpt(p.dt, p.s, cfg), wc = nhwc_wc(p.dt, p.s, cfg), ho = outH(p), wo = outW(p);
    int groups = (p.c + cpt - 1) / cpt, cb = dw_pick_cb(groups);
    int vec = p.c % cpt == 0 && al(x, cpt * esz) && al(y, cpt * esz) && al(r, cpt * esz);
    long long perStrip = (long long)p.n * ((groups + cb - 1) / cb) * cb * ((wo + wc - 1) / wc);
    return {dw_pick_rps(ho, kRowsNhwc, perStrip, numSMs), cb, vec};
}

// ---------------------------------------------------------------- variants timed
// 0 old, 1 new (the shipped choice), 2 alt1 (NCHW: strips of ≤ 16 rows; NHWC: CPT 2 × WC 2, 128 registers),
// 3 alt2 (NCHW: half the shipped access width; NHWC: CPT 2 × WC 4, 128 registers).
// NOTE: h100-results.txt was measured before the shipped choice was fixed: there "new" was NCHW strips
// of ≤ 16 at full width and NHWC CPT 4 × WC 2 everywhere, "alt1" NCHW strips of ≤ 8; see the doc.
static const char* varName[] = {"old", "new", "alt1", "alt2"};
static bool runVar(int v, const Prob& p, const void* x, const void* w, const void* b, const void* r, void* y, int act, cudaStream_t st) {
    int ho = outH(p), wo = outW(p);
    if (v == 0) { old_launch(p.dt, p.nhwc, p.s, x, w, b, r, y, p.n, p.c, p.h, p.w, act, st); return true; }
    if (!p.nhwc) {
        NchwCfg c = pickNchw(p, x, y, r, v == 2 ? 16 : 0);
        if (v == 2 && c.rps == pickNchw(p, x, y, r).rps) return false;
        if (v == 3) { if (c.vw == 1) return false; c.vw /= 2; }
        nchw_launch(p.dt, p.s, c.vw, x, w, b, r, y, p.n * p.c, p.c, p.h, p.w, ho, wo, c.rps, act, st);
    } else {
        int cfg = v == 1 ? 0 : v;  // new = shipped, alt1 = CPT 2 × WC 2, alt2 = CPT 2 × WC 4
        NhwcCfg c = pickNhwc(p, cfg, x, y, r);
        nhwc_launch(p.dt, p.s, cfg, x, w, b, r, y, p.n, p.h, p.w, p.c, ho, wo, c.rps, c.cb, act, c.vec, st);
    }
    return true;
}

// ---------------------------------------------------------------- cuDNN through dlopen
typedef void* H;
struct PerfT { int algo; int status; float time; size_t memory; int determinism; int mathType; int reserved[3]; };
struct Dnn {
    bool ok = false;
    H h = nullptr;
    int (*create)(H*); int (*setStream)(H, cudaStream_t); size_t (*getVersion)();
    int (*cTensor)(H*); int (*sTensor4d)(H, int, int, int, int, int, int);
    int (*cFilter)(H*); int (*sFilter4d)(H, int, int, int, int, int, int);
    int (*cConv)(H*); int (*sConv2d)(H, int, int, int, int, int, int, int, int); int (*sGroup)(H, int); int (*sMath)(H, int);
    int (*find)(H, H, H, H, H, int, int*, PerfT*);
    int (*fwd)(H, const void*, H, const void*, H, const void*, H, int, void*, size_t, const void*, H, void*);
    int (*fused)(H, const void*, H, const void*, H, const void*, H, int, void*, size_t, const void*, H, const void*, H, const void*, H, H, void*);
    int (*addT)(H, const void*, H, const void*, const void*, H, void*);
    int (*cAct)(H*); int (*sAct)(H, int, int, double); int (*sSwish)(H, double);
    int (*actF)(H, H, const void*, H, const void*, const void*, H, void*);
    bool load() {
        const char* names[] = {"libcudnn.so.9", "libcudnn.so", nullptr};
        void* lib = nullptr;
        for (int i = 0; names[i] && !lib; ++i) lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
        if (!lib) { printf("cuDNN: not loadable (%s); timing custom only\n", dlerror()); return false; }
#define S(f, n) *(void**)(&f) = dlsym(lib, n); if (!f) { printf("cuDNN: missing %s\n", n); return false; }
        S(create, "cudnnCreate"); S(setStream, "cudnnSetStream"); S(getVersion, "cudnnGetVersion");
        S(cTensor, "cudnnCreateTensorDescriptor"); S(sTensor4d, "cudnnSetTensor4dDescriptor");
        S(cFilter, "cudnnCreateFilterDescriptor"); S(sFilter4d, "cudnnSetFilter4dDescriptor");
        S(cConv, "cudnnCreateConvolutionDescriptor"); S(sConv2d, "cudnnSetConvolution2dDescriptor");
        S(sGroup, "cudnnSetConvolutionGroupCount"); S(sMath, "cudnnSetConvolutionMathType");
        S(find, "cudnnFindConvolutionForwardAlgorithm"); S(fwd, "cudnnConvolutionForward");
        S(fused, "cudnnConvolutionBiasActivationForward"); S(addT, "cudnnAddTensor");
        S(cAct, "cudnnCreateActivationDescriptor"); S(sAct, "cudnnSetActivationDescriptor");
        S(sSwish, "cudnnSetActivationDescriptorSwishBeta"); S(actF, "cudnnActivationForward");
#undef S
        if (create(&h) != 0) { printf("cuDNN: cudnnCreate failed\n"); return false; }
        printf("cuDNN version %zu loaded\n", getVersion());
        ok = true;
        return true;
    }
} dnn;

struct Plan { H x, y, b, w, conv; int algo, math; size_t ws; std::string desc; };
static bool makePlan(const Prob& p, Plan& pl, cudaStream_t st) {
    int type = p.dt == F32 ? 0 : (p.dt == F16 ? 2 : 9), fmt = p.nhwc ? 1 : 0;
    dnn.setStream(dnn.h, st);
    dnn.cTensor(&pl.x); dnn.cTensor(&pl.y); dnn.cTensor(&pl.b); dnn.cFilter(&pl.w); dnn.cConv(&pl.conv);
    int e = 0;
    e |= dnn.sTensor4d(pl.x, fmt, type, p.n, p.c, p.h, p.w);
    e |= dnn.sTensor4d(pl.y, fmt, type, p.n, p.c, outH(p), outW(p));
    e |= dnn.sTensor4d(pl.b, 0, type, 1, p.c, 1, 1);
    e |= dnn.sFilter4d(pl.w, type, fmt, p.c, 1, 3, 3);
    e |= dnn.sConv2d(pl.conv, 1, 1, p.s, p.s, 1, 1, 1, 0);
    e |= dnn.sGroup(pl.conv, p.c);
    e |= dnn.sMath(pl.conv, p.dt == F32 ? 3 : 1);
    if (e) { printf("cuDNN descriptor setup failed\n"); return false; }
    PerfT perf[8]; int got = 0;
    int s = dnn.find(dnn.h, pl.x, pl.w, pl.conv, pl.y, 8, &got, perf);
    if (s) { printf("cuDNN find failed %d\n", s); return false; }
    for (int i = 0; i < got; ++i)
        if (perf[i].status == 0 && (p.dt != F32 || perf[i].mathType == 3)) {
            pl.algo = perf[i].algo; pl.math = perf[i].mathType; pl.ws = perf[i].memory;
            char buf[96]; snprintf(buf, sizeof buf, "algo%d/math%d", pl.algo, pl.math); pl.desc = buf;
            dnn.sMath(pl.conv, pl.math);
            return true;
        }
    printf("cuDNN: no algorithm\n");
    return false;
}
static H actDesc(int act) {
    static H d[7] = {};
    int slot = act < 0 ? 6 : act;
    if (!d[slot]) {
        dnn.cAct(&d[slot]);
        int mode = act < 0 ? 5 : (act == 1 ? 1 : (act == 2 ? 3 : 6));
        dnn.sAct(d[slot], mode, 1, act == 2 ? 6.0 : 0.0);
        if (act == 3) dnn.sSwish(d[slot], 1.0);
    }
    return d[slot];
}
static bool fusible(const Prob& p, const Plan& pl, int act) { return act == 1 || (act == 0 && pl.algo == 1); }
// fused = cudnnConvolutionBiasActivationForward (RELU, or IDENTITY with IMPLICIT_PRECOMP_GEMM); else the
// composition. Returns a cuDNN status.
static int runVendor(const Prob& p, Plan& pl, bool fused, int act, const void* x, const void* w, const void* b,
                     const void* zeroBias, const void* r, void* y, void* ws, cudaStream_t st) {
    static const float one = 1.f, zero = 0.f;
    dnn.setStream(dnn.h, st);
    if (fused)
        return dnn.fused(dnn.h, &one, pl.x, x, pl.w, w, pl.conv, pl.algo, ws, pl.ws, r ? &one : &zero, pl.y, r ? r : y, pl.b,
                         b ? b : zeroBias, actDesc(act == 1 ? 1 : -1), pl.y, y);
    if (r && r != y) CK(cudaMemcpyAsync(y, r, nOut(p) * dtBytes[p.dt], cudaMemcpyDeviceToDevice, st));
    int s = dnn.fwd(dnn.h, &one, pl.x, x, pl.w, w, pl.conv, pl.algo, ws, pl.ws, r ? &one : &zero, pl.y, y);
    if (s) return s;
    // the GELU pass adds the bias itself (as the library's VENDOR path since the fiftieth session)
    if (b && act < 4 && (s = dnn.addT(dnn.h, &one, pl.b, b, &one, pl.y, y))) return s;
    if (act >= 1 && act <= 3) {
        if ((s = dnn.actF(dnn.h, actDesc(act), &one, pl.y, y, &zero, pl.y, y))) return s;
    } else if (act >= 4) {
        int n = (int)nOut(p), v = 16 / dtBytes[p.dt];
        int blocks = std::max(1, std::min((n + 256 * v - 1) / (256 * v), numSMs * 16));
        int inner = p.nhwc ? 1 : outH(p) * outW(p);
        if (b) {
            if (p.dt == F32) dwconv3x3_vendor_bias_gelu_f32<<<blocks, 256, 0, st>>>((float*)y, (const float*)b, n, p.c, inner, act);
            if (p.dt == F16) dwconv3x3_vendor_bias_gelu_f16<<<blocks, 256, 0, st>>>((__half*)y, (const __half*)b, n, p.c, inner, act);
            if (p.dt == BF16)
                dwconv3x3_vendor_bias_gelu_bf16<<<blocks, 256, 0, st>>>((__nv_bfloat16*)y, (const __nv_bfloat16*)b, n, p.c, inner, act);
        } else {
            if (p.dt == F32) dwconv3x3_vendor_gelu_f32<<<blocks, 256, 0, st>>>((float*)y, n, act);
            if (p.dt == F16) dwconv3x3_vendor_gelu_f16<<<blocks, 256, 0, st>>>((__half*)y, n, act);
            if (p.dt == BF16) dwconv3x3_vendor_gelu_bf16<<<blocks, 256, 0, st>>>((__nv_bfloat16*)y, n, act);
        }
    }
    return 0;
}

static float median(std::vector<float> v) { if (v.empty()) return NAN; std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

// ---------------------------------------------------------------- 1. odd-shape sweep
static size_t sweep(std::mt19937& g, cudaStream_t st) {
    int hw[][2] = {{1, 1}, {1, 7}, {7, 17}, {17, 97}, {97, 7}, {16, 16}, {14, 28}, {9, 64}, {5, 48}, {6, 14}};
    int cs[] = {1, 3, 8, 13, 64};
    size_t cases = 0, launches = 0, failed = 0;
    long long maxUlp[3] = {0, 0, 0};
    int combo = 0;
    std::vector<uint32_t> got, ref;
    for (int dti = 0; dti < 3; ++dti)
        for (int layout = 0; layout < 2; ++layout)
            for (int s = 1; s <= 2; ++s)
                for (int act = 0; act < 6; ++act)
                    for (auto& sz : hw)
                        for (int c : cs) {
                            Prob p{(DT)dti, layout == 1, 2, c, sz[0], sz[1], s, (combo & 1) != 0, (combo & 2) != 0};
                            int off = (combo % 5 == 4) ? 1 : 0;  // misaligned views every fifth case
                            combo++;
                            size_t nx = nIn(p), ny = nOut(p);
                            Buf x = randomBuf(p.dt, nx, g), w = randomBuf(p.dt, (size_t)c * 9, g), b = randomBuf(p.dt, c, g), r = randomBuf(p.dt, ny, g);
                            DBuf dx = upload(x, off), dw = upload(w), db, dr, dy = alloc(p.dt, ny, off);
                            if (p.bias) db = upload(b);
                            if (p.res) dr = upload(r, off);
                            std::vector<float> pre = preact(p, x, w, p.bias ? &b : nullptr, p.res ? &r : nullptr);
                            refBits(p.dt, pre, act, ref);
                            // every instantiation that applies: (kind, a, b) = NCHW (vw, rps) / NHWC (cfg, rps, cb)
                            struct L { int a, b2, c2; };
                            std::vector<L> ls;
                            int ho = outH(p), wo = outW(p);
                            if (!p.nhwc) {
                                NchwCfg cfg = pickNchw(p, dx.p, dy.p, dr.p);
                                for (int v = cfg.vw; v >= 1; v /= 2) ls.push_back({v, cfg.rps, 0});
                                ls.push_back({cfg.vw, 3, 0});
                                ls.push_back({cfg.vw, 1, 0});
                            } else {
                                for (int k = 0; k < 4; ++k) { NhwcCfg cf = pickNhwc(p, k, dx.p, dy.p, dr.p); ls.push_back({k, cf.rps, cf.cb}); }
                                NhwcCfg cf = pickNhwc(p, 0, dx.p, dy.p, dr.p);
                                ls.push_back({0, 3, std::max(1, std::min(2, cf.cb))});
                            }
                            for (auto& l : ls) {
                                CK(cudaMemset(dy.p, 0xff, ny * dtBytes[p.dt]));  // poison (NaN in every dtype)
                                if (!p.nhwc) nchw_launch(p.dt, p.s, l.a, dx.p, dw.p, db.p, dr.p, dy.p, p.n * c, c, p.h, p.w, ho, wo, l.b2, act, st);
                                else {
                                    NhwcCfg cf = pickNhwc(p, l.a, dx.p, dy.p, dr.p);
                                    nhwc_launch(p.dt, p.s, l.a, dx.p, dw.p, db.p, dr.p, dy.p, p.n, p.h, p.w, c, ho, wo, l.b2, l.c2, act, cf.vec, st);
                                }
                                CK(cudaGetLastError()); CK(cudaStreamSynchronize(st));
                                download(p.dt, dy.p, ny, got);
                                Cmp cm = compare(p.dt, got, ref, act <= 2 ? 0 : 1);
                                if (act > 2) maxUlp[dti] = std::max(maxUlp[dti], cm.maxUlp);
                                launches++;
                                if (cm.fail) {
                                    if (failed < 20)
                                        printf("FAIL %s %s s=%d %s C=%d H=%d W=%d bias=%d res=%d off=%d inst=(%d,%d,%d): %zu/%zu bad, first i=%zu got %.8g ref %.8g\n",
                                               dtName[dti], p.nhwc ? "NHWC" : "NCHW", s, actName[act], c, p.h, p.w, p.bias, p.res, off, l.a, l.b2, l.c2,
                                               cm.fail, cm.n, cm.firstBad, bitsToFloat(p.dt, got[cm.firstBad]), bitsToFloat(p.dt, ref[cm.firstBad]));
                                    failed++;
                                }
                            }
                            cases++;
                            release(dx); release(dw); release(db); release(dr); release(dy);
                        }
    printf("SWEEP new kernels: %zu cases, %zu launches, %zu failed; max ulp (SILU/GELU) F32 %lld F16 %lld BF16 %lld\n", cases, launches,
           failed, maxUlp[0], maxUlp[1], maxUlp[2]);
    return failed;
}

// ---------------------------------------------------------------- 3. ncu target
static void prof(std::mt19937& g, cudaStream_t st) {
    for (int layout = 0; layout < 2; ++layout) {
        Prob p{F16, layout == 1, 32, 256, 56, 56, 1, true, false};
        Buf x = randomBuf(p.dt, nIn(p), g), w = randomBuf(p.dt, (size_t)p.c * 9, g), b = randomBuf(p.dt, p.c, g);
        DBuf dx = upload(x), dw = upload(w), db = upload(b), dy = alloc(p.dt, nOut(p));
        for (int v = 0; v < 2; ++v) runVar(v, p, dx.p, dw.p, db.p, nullptr, dy.p, 3, st);
        CK(cudaStreamSynchronize(st));
        release(dx); release(dw); release(db); release(dy);
    }
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "all";
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    numSMs = prop.multiProcessorCount;
    cudaStream_t st; CK(cudaStreamCreate(&st));
    std::mt19937 g(20261122);
    if (!strcmp(mode, "prof")) { prof(g, st); return 0; }
    printf("GPU %s, %d SMs, cc %d.%d, %d OpenMP threads\n", prop.name, prop.multiProcessorCount, prop.major, prop.minor, omp_get_max_threads());
    dnn.load();
    size_t sweepFailed = sweep(g, st);
    if (!strcmp(mode, "sweep")) return sweepFailed ? 1 : 0;

    // ---------- 2. the issue's sweep
    size_t flushBytes = 256u << 20; void* flushBuf; CK(cudaMalloc(&flushBuf, flushBytes));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    double bw;
    {
        size_t nb = 1u << 30; void *a, *b2; CK(cudaMalloc(&a, nb)); CK(cudaMalloc(&b2, nb));
        std::vector<float> t;
        for (int i = 0; i < 10; ++i) {
            CK(cudaEventRecord(e0, st)); CK(cudaMemcpyAsync(b2, a, nb, cudaMemcpyDeviceToDevice, st)); CK(cudaEventRecord(e1, st));
            CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms);
        }
        bw = 2.0 * nb / (median(t) * 1e-3);
        cudaFree(a); cudaFree(b2);
        printf("copy bandwidth %.0f GB/s\n", bw / 1e9);
    }
    int shapes[][4] = {{32, 256, 56, 56}, {8, 96, 112, 112}, {16, 64, 224, 224}, {32, 512, 28, 28}, {64, 1024, 14, 14}, {1, 384, 64, 64}};
    bool stride2[] = {true, true, true, false, false, false};
    int acts[] = {0, 1, 3, 4};
    const int NV = 4;
    struct Row { std::string name; double t[NV], ve, floor, mb; DT dt; };
    std::vector<Row> rows;
    size_t checkFail = 0;
    int reps = 15;
    std::vector<uint32_t> got, ref;
    for (int si = 0; si < 6; ++si)
        for (int s = 1; s <= (stride2[si] ? 2 : 1); ++s)
            for (int layout = 0; layout < 2; ++layout)
                for (int dti = 0; dti < 3; ++dti) {
                    Prob p{(DT)dti, layout == 1, shapes[si][0], shapes[si][1], shapes[si][2], shapes[si][3], s, true, false};
                    size_t nx = nIn(p), ny = nOut(p);
                    Buf x = randomBuf(p.dt, nx, g), w = randomBuf(p.dt, (size_t)p.c * 9, g), b = randomBuf(p.dt, p.c, g);
                    DBuf dx = upload(x), dw = upload(w), db = upload(b), dy = alloc(p.dt, ny), dv = alloc(p.dt, ny), zb = alloc(F32, p.c);
                    CK(cudaMemset(zb.p, 0, p.c * 4));
                    std::vector<float> pre = preact(p, x, w, &b, nullptr);
                    Plan pl; bool haveV = dnn.ok && makePlan(p, pl, st);
                    void* ws = nullptr; if (haveV && pl.ws) CK(cudaMalloc(&ws, pl.ws));
                    for (int act : acts) {
                        refBits(p.dt, pre, act, ref);
                        bool has[NV];
                        std::string chk;
                        for (int v = 0; v < NV; ++v) {
                            CK(cudaMemset(dy.p, 0xff, ny * dtBytes[dti]));
                            has[v] = runVar(v, p, dx.p, dw.p, db.p, nullptr, dy.p, act, st);
                            CK(cudaGetLastError()); CK(cudaStreamSynchronize(st));
                            if (!has[v]) continue;
                            download(p.dt, dy.p, ny, got);
                            Cmp cm = compare(p.dt, got, ref, act <= 2 ? 0 : 1);
                            if (cm.fail) {
                                checkFail++;
                                printf("FAIL check %s %s: %zu bad, first i=%zu got %.8g ref %.8g\n", varName[v], actName[act], cm.fail, cm.firstBad,
                                       bitsToFloat(p.dt, got[cm.firstBad]), bitsToFloat(p.dt, ref[cm.firstBad]));
                                chk += std::string(varName[v]) + ":FAIL ";
                            }
                        }
                        bool fz = haveV && fusible(p, pl, act), fzOk = fz;
                        if (haveV && act == 0) {  // vendor accuracy at NONE (its tolerance is checked in Java)
                            CK(cudaMemset(dv.p, 0xff, ny * dtBytes[dti]));
                            int stt = runVendor(p, pl, false, act, dx.p, dw.p, db.p, zb.p, nullptr, dv.p, ws, st); CK(cudaStreamSynchronize(st));
                            if (stt) { printf("vendor status %d\n", stt); haveV = false; }
                            else {
                                download(p.dt, dv.p, ny, got);
                                Cmp vm = compare(p.dt, got, ref, 1LL << 30);
                                char buf[96]; snprintf(buf, sizeof buf, "vendor %.3f identical max %lld ulp %s", (double)vm.identical / vm.n, vm.maxUlp, pl.desc.c_str());
                                chk += buf;
                            }
                        }
                        if (fz) {  // does cuDNN accept the fused call for this plan?
                            int stt = runVendor(p, pl, true, act, dx.p, dw.p, db.p, zb.p, nullptr, dv.p, ws, st); CK(cudaStreamSynchronize(st));
                            fzOk = stt == 0;
                        }
                        std::vector<float> tv[NV], tc, tf;
                        for (int rep = -2; rep < reps; ++rep) {
                            float ms;
                            for (int v = 0; v < NV + 2; ++v) {
                                if (v < NV && !has[v]) continue;
                                if (v == NV && !haveV) continue;
                                if (v == NV + 1 && !fzOk) continue;
                                CK(cudaMemsetAsync(flushBuf, rep & 0xff, flushBytes, st));
                                CK(cudaEventRecord(e0, st));
                                if (v < NV) runVar(v, p, dx.p, dw.p, db.p, nullptr, dy.p, act, st);
                                else runVendor(p, pl, v == NV + 1, act, dx.p, dw.p, db.p, zb.p, nullptr, dv.p, ws, st);
                                CK(cudaEventRecord(e1, st));
                                CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1));
                                if (rep >= 0) (v < NV ? tv[v] : (v == NV ? tc : tf)).push_back(ms * 1000);
                            }
                        }
                        CK(cudaGetLastError());
                        Row rr;
                        char name[160];
                        snprintf(name, sizeof name, "%2d,%4d,%3d,%3d s%d %s %-4s %-8s", p.n, p.c, p.h, p.w, s, layout ? "NHWC" : "NCHW", dtName[dti], actName[act]);
                        rr.name = name; rr.dt = p.dt;
                        for (int v = 0; v < NV; ++v) rr.t[v] = has[v] ? median(tv[v]) : NAN;
                        double vc = median(tc), vf = fzOk ? median(tf) : NAN;
                        rr.ve = haveV ? (fzOk && vf < vc ? vf : vc) : NAN;
                        rr.mb = (double)(nx + ny) * dtBytes[dti] / 1e6;
                        rr.floor = ((double)(nx + ny) * dtBytes[dti] + 10.0 * p.c * dtBytes[dti]) / bw * 1e6;
                        rows.push_back(rr);
                        printf("%s old %7.1f new %7.1f alt1 %7.1f alt2 %7.1f | vendor %7.1f (composed %7.1f fused %7.1f) floor %6.1f | %s\n", name, rr.t[0],
                               rr.t[1], rr.t[2], rr.t[3], rr.ve, vc, vf, rr.floor, chk.c_str());
                        fflush(stdout);
                    }
                    release(dx); release(dw); release(db); release(dy); release(dv); release(zb); if (ws) cudaFree(ws);
                }
    // ---------- compact table
    printf("\n%-40s %8s %8s %8s %8s %8s %7s | %5s %5s | %6s %6s\n", "N,C,H,W s layout dtype act", "old", "new", "alt1", "alt2", "vendor", "floor",
           "new%", "best%", "new×v", "old×v");
    double lg[3][2] = {}, lgBest[3] = {}; int cnt[3] = {}; int below75 = 0, big = 0;
    for (auto& r : rows) {
        double best = r.t[1];
        for (int v = 2; v < NV; ++v) if (!std::isnan(r.t[v]) && r.t[v] < best) best = r.t[v];
        printf("%-40s %8.1f %8.1f %8.1f %8.1f %8.1f %7.1f | %4.0f%% %4.0f%% | %6.2f %6.2f\n", r.name.c_str(), r.t[0], r.t[1], r.t[2], r.t[3], r.ve, r.floor,
               100 * r.floor / r.t[1], 100 * r.floor / best, r.ve / r.t[1], r.ve / r.t[0]);
        if (!std::isnan(r.ve)) { lg[r.dt][0] += log(r.ve / r.t[1]); lg[r.dt][1] += log(r.ve / r.t[0]); lgBest[r.dt] += log(r.ve / best); cnt[r.dt]++; }
        if (r.mb >= 32) { big++; if (r.floor / r.t[1] < 0.75) below75++; }
    }
    for (int d = 0; d < 3; ++d)
        printf("SUMMARY %-4s geomean vs vendor: new %.2fx, best variant %.2fx, old %.2fx (%d rows)\n", dtName[d], exp(lg[d][0] / cnt[d]),
               exp(lgBest[d] / cnt[d]), exp(lg[d][1] / cnt[d]), cnt[d]);
    printf("SUMMARY rows moving >= 32 MB: %d, new below 75%% of floor: %d\n", big, below75);
    printf("SUMMARY odd-shape sweep failures %zu, timing-shape check failures %zu\n", sweepFailed, checkFail);
    return (sweepFailed || checkFail) ? 1 : 0;
}
