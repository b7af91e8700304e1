// Standalone validation and timing harness for the depthwise_conv3x3 kernels (no Java).
//  1. correctness sweep on odd shapes: every dtype × layout × stride × activation, bias/residual on
//     and off, outputs poisoned; custom vs a CPU reference with the same tap order (bit-exact for
//     NONE/RELU/RELU6, ≤ 1 ulp for SILU/GELU);
//  2. timing of the benchmark shapes: custom vs the cuDNN composition (grouped conv, fastest algorithm
//     from cudnnFindConvolutionForwardAlgorithm, then bias/activation as DepthwiseConv3x3Cudnn does),
//     CUDA events, L2 flushed before every repetition, interleaved, medians; plus vendor-vs-reference
//     identical fraction and max ulp at act=NONE.
// cuDNN is loaded with dlopen (no headers needed); without it only the custom path is timed.
// Build: nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -I<kernels> -I<common> harness.cu -ldl -lgomp
#include "nhwc.cu"
#include "nchw.cu"
#include "vendor_gelu.cu"

#include <dlfcn.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

enum DT { F32 = 0, F16 = 1, BF16 = 2 };
static const char* dtName[] = {"F32", "F16", "BF16"};
static const int dtBytes[] = {4, 2, 2};
static const char* actName[] = {"NONE", "RELU", "RELU6", "SILU", "GELU_ERF", "GELU_TANH"};

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
static long long ulpDist(DT dt, uint32_t a, uint32_t b) { return llabs(ordered(dt, a) - ordered(dt, b)); }

struct Buf {  // raw element bits on the host, in the dtype
    DT dt; std::vector<uint32_t> v;
    float at(size_t i) const { return bitsToFloat(dt, v[i]); }
};
// Uniform values in [-1, 1) (never all zero), rounded to the dtype; xorshift so 50M elements take < 1 s.
static Buf randomBuf(DT dt, size_t n, std::mt19937& g) {
    Buf b{dt, std::vector<uint32_t>(n)};
    uint64_t seed = ((uint64_t)g() << 32) | g() | 1;
    #pragma omp parallel
    {
        #pragma omp for schedule(static)
        for (long long i = 0; i < (long long)n; ++i) {
            uint64_t z = seed + 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);  // splitmix64
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull; z = (z ^ (z >> 27)) * 0x94D049BB133111EBull; z ^= z >> 31;
            float u = (float)(z >> 40) * (1.0f / 16777216.0f) * 2.f - 1.f;
            b.v[i] = floatToBits(dt, u);
        }
    }
    return b;
}
static void* upload(const Buf& b) {
    size_t n = b.v.size(), e = dtBytes[b.dt];
    std::vector<unsigned char> raw(n * e);
    for (size_t i = 0; i < n; ++i) memcpy(&raw[i * e], &b.v[i], e);
    void* d; CK(cudaMalloc(&d, std::max<size_t>(raw.size(), 16))); CK(cudaMemcpy(d, raw.data(), raw.size(), cudaMemcpyHostToDevice));
    return d;
}
static std::vector<uint32_t> download(DT dt, const void* d, size_t n) {
    size_t e = dtBytes[dt];
    std::vector<unsigned char> raw(n * e);
    CK(cudaMemcpy(raw.data(), d, raw.size(), cudaMemcpyDeviceToHost));
    std::vector<uint32_t> v(n, 0);
    for (size_t i = 0; i < n; ++i) memcpy(&v[i], &raw[i * e], e);
    return v;
}

// ---------------------------------------------------------------- problem + reference
struct Prob { DT dt; bool nhwc; int n, c, h, w, s, act; bool bias, res; };
static int outH(const Prob& p) { return (p.h + p.s - 1) / p.s; }
static int outW(const Prob& p) { return (p.w + p.s - 1) / p.s; }

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

// Reference result before the final rounding (double), output order of the layout.
static std::vector<double> reference(const Prob& p, const Buf& x, const Buf& w, const Buf* b, const Buf* r) {
    int ho = outH(p), wo = outW(p);
    size_t total = (size_t)p.n * p.c * ho * wo;
    std::vector<double> y(total);
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
                    y[o] = activate(v, p.act);
                }
        }
    return y;
}

// ---------------------------------------------------------------- custom launch (mirrors DepthwiseConv3x3.launchCustom)
static void launchCustom(const Prob& p, const void* x, const void* w, const void* b, const void* r, void* y, cudaStream_t st) {
    int v = 16 / dtBytes[p.dt], th = p.s == 1 ? 4 : 2, ho = outH(p), wo = outW(p);
    bool al = ((uintptr_t)x % 16 == 0) && ((uintptr_t)y % 16 == 0) && (!r || (uintptr_t)r % 16 == 0);
    if (p.nhwc) {
        int cv = (p.c + v - 1) / v, lanes = 1;
        while (lanes < cv && lanes < 32) lanes <<= 1;
        int cols = 256 / lanes;
        dim3 grid((unsigned)((long long)p.n * ((ho + th - 1) / th) * ((wo + cols - 1) / cols)), (cv + lanes - 1) / lanes), block(lanes, cols);
        int vec = al && p.c % v == 0;
#define L(T, K) K<<<grid, block, 0, st>>>((const T*)x, (const T*)w, (const T*)b, (const T*)r, (T*)y, p.n, p.h, p.w, p.c, ho, wo, p.act, vec)
        if (p.dt == F32) { if (p.s == 1) L(float, dwconv3x3_nhwc_f32_s1); else L(float, dwconv3x3_nhwc_f32_s2); }
        if (p.dt == F16) { if (p.s == 1) L(__half, dwconv3x3_nhwc_f16_s1); else L(__half, dwconv3x3_nhwc_f16_s2); }
        if (p.dt == BF16) { if (p.s == 1) L(__nv_bfloat16, dwconv3x3_nhwc_bf16_s1); else L(__nv_bfloat16, dwconv3x3_nhwc_bf16_s2); }
#undef L
    } else {
        long long threads = (long long)p.n * p.c * ((ho + th - 1) / th) * ((wo + v - 1) / v);
        dim3 grid((unsigned)((threads + 255) / 256)), block(256);
        int vec = al && p.w % v == 0 && wo % v == 0;
#define L(T, K) K<<<grid, block, 0, st>>>((const T*)x, (const T*)w, (const T*)b, (const T*)r, (T*)y, p.n, p.c, p.h, p.w, ho, wo, p.act, vec)
        if (p.dt == F32) { if (p.s == 1) L(float, dwconv3x3_nchw_f32_s1); else L(float, dwconv3x3_nchw_f32_s2); }
        if (p.dt == F16) { if (p.s == 1) L(__half, dwconv3x3_nchw_f16_s1); else L(__half, dwconv3x3_nchw_f16_s2); }
        if (p.dt == BF16) { if (p.s == 1) L(__nv_bfloat16, dwconv3x3_nchw_bf16_s1); else L(__nv_bfloat16, dwconv3x3_nchw_bf16_s2); }
#undef L
    }
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

struct Plan { H x, y, b, w, conv; int algo, math; size_t ws; bool fusedRefused = false; std::string desc; };

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
            char buf[96]; snprintf(buf, sizeof buf, "algo%d/math%d/ws%zu", pl.algo, pl.math, pl.ws); pl.desc = buf;
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

// The vendor composition (as DepthwiseConv3x3Cudnn runs it). Returns a cuDNN status.
static int runVendor(const Prob& p, Plan& pl, const void* x, const void* w, const void* b, const void* zeroBias, const void* r,
                     void* y, void* ws, cudaStream_t st) {
    static const float one = 1.f, zero = 0.f;
    dnn.setStream(dnn.h, st);
    bool fusible = !pl.fusedRefused && (p.act == 1 || (p.act == 0 && pl.algo == 1));
    if (fusible) {
        int s = dnn.fused(dnn.h, &one, pl.x, x, pl.w, w, pl.conv, pl.algo, ws, pl.ws, r ? &one : &zero, pl.y, r ? r : y, pl.b,
                          b ? b : zeroBias, actDesc(p.act == 1 ? 1 : -1), pl.y, y);
        if (s == 0) return 0;
        if ((s >= 3000 && s < 4000) || (s >= 2000 && s < 3000)) { pl.fusedRefused = true; pl.desc += "/fused-refused"; }
        else return s;
    }
    if (r && r != y) CK(cudaMemcpyAsync(y, r, (size_t)p.n * p.c * outH(p) * outW(p) * dtBytes[p.dt], cudaMemcpyDeviceToDevice, st));
    int s = dnn.fwd(dnn.h, &one, pl.x, x, pl.w, w, pl.conv, pl.algo, ws, pl.ws, r ? &one : &zero, pl.y, y);
    if (s) return s;
    if (b && (s = dnn.addT(dnn.h, &one, pl.b, b, &one, pl.y, y))) return s;
    if (p.act >= 1 && p.act <= 3) {
        if ((s = dnn.actF(dnn.h, actDesc(p.act), &one, pl.y, y, &zero, pl.y, y))) return s;
    } else if (p.act >= 4) {
        int n = p.n * p.c * outH(p) * outW(p), v = 16 / dtBytes[p.dt];
        int blocks = std::max(1, std::min((n + 256 * v - 1) / (256 * v), 132 * 16));
        if (p.dt == F32) dwconv3x3_vendor_gelu_f32<<<blocks, 256, 0, st>>>((float*)y, n, p.act);
        if (p.dt == F16) dwconv3x3_vendor_gelu_f16<<<blocks, 256, 0, st>>>((__half*)y, n, p.act);
        if (p.dt == BF16) dwconv3x3_vendor_gelu_bf16<<<blocks, 256, 0, st>>>((__nv_bfloat16*)y, n, p.act);
    }
    return 0;
}

// ---------------------------------------------------------------- compare
struct Cmp { size_t n = 0, identical = 0, fail = 0; long long maxUlp = 0; std::string first; };
static Cmp compare(DT dt, const std::vector<uint32_t>& got, const std::vector<double>& ref, long long allow) {
    Cmp c; c.n = got.size();
    for (size_t i = 0; i < got.size(); ++i) {
        uint32_t rb = floatToBits(dt, (float)ref[i]);
        long long d = ulpDist(dt, got[i], rb);
        float gv = bitsToFloat(dt, got[i]);
        if (std::isnan(gv)) d = 1LL << 40;
        if (got[i] == rb) c.identical++;
        c.maxUlp = std::max(c.maxUlp, d);
        if (d > allow) {
            if (!c.fail) { char b[160]; snprintf(b, sizeof b, "i=%zu got %.9g ref %.9g (%lld ulp)", i, gv, ref[i], d); c.first = b; }
            c.fail++;
        }
    }
    return c;
}

// ---------------------------------------------------------------- timing
static void* flushBuf; static size_t flushBytes = 256u << 20;
static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

int main(int argc, char** argv) {
    bool sweepOnly = argc > 1 && !strcmp(argv[1], "sweep");
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    printf("GPU %s, %d SMs, cc %d.%d\n", prop.name, prop.multiProcessorCount, prop.major, prop.minor);
    cudaStream_t st; CK(cudaStreamCreate(&st));
    dnn.load();
    std::mt19937 g(1234);

    // ---------- 1. correctness sweep
    int hw[][2] = {{1, 1}, {1, 7}, {7, 17}, {17, 97}, {97, 7}, {16, 16}, {14, 28}};
    int cs[] = {1, 3, 8, 13, 64};
    size_t cases = 0, failed = 0, vendorCases = 0, vendorIdent = 0, vendorN = 0;
    long long maxUlpSmooth[3] = {0, 0, 0}, vendorMaxUlp[3] = {0, 0, 0};
    int combo = 0;
    for (int dti = 0; dti < 3; ++dti)
        for (int layout = 0; layout < 2; ++layout)
            for (int s = 1; s <= 2; ++s)
                for (int act = 0; act < 6; ++act)
                    for (auto& sz : hw)
                        for (int c : cs) {
                            Prob p{(DT)dti, layout == 1, 2, c, sz[0], sz[1], s, act, (combo & 1) != 0, (combo & 2) != 0};
                            combo++;
                            int ho = outH(p), wo = outW(p);
                            size_t nx = (size_t)p.n * c * p.h * p.w, ny = (size_t)p.n * c * ho * wo;
                            Buf x = randomBuf(p.dt, nx, g), w = randomBuf(p.dt, (size_t)c * 9, g), b = randomBuf(p.dt, c, g), r = randomBuf(p.dt, ny, g);
                            void *dx = upload(x), *dw = upload(w), *db = p.bias ? upload(b) : nullptr, *dr = p.res ? upload(r) : nullptr, *dy;
                            CK(cudaMalloc(&dy, ny * dtBytes[p.dt]));
                            CK(cudaMemset(dy, 0xff, ny * dtBytes[p.dt]));  // poison
                            launchCustom(p, dx, dw, db, dr, dy, st);
                            CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
                            std::vector<double> ref = reference(p, x, w, p.bias ? &b : nullptr, p.res ? &r : nullptr);
                            Cmp cm = compare(p.dt, download(p.dt, dy, ny), ref, act <= 2 ? 0 : 1);
                            if (act > 2) maxUlpSmooth[dti] = std::max(maxUlpSmooth[dti], cm.maxUlp);
                            cases++;
                            if (cm.fail) {
                                if (failed < 15)
                                    printf("FAIL custom %s %s s=%d %s N=%d C=%d H=%d W=%d bias=%d res=%d: %zu/%zu bad, first %s\n", dtName[dti],
                                           layout ? "NHWC" : "NCHW", s, actName[act], p.n, c, p.h, p.w, p.bias, p.res, cm.fail, cm.n, cm.first.c_str());
                                failed++;
                            }
                            // vendor on a subset (the composition's tolerance is checked in Java; here: identical fraction)
                            if (dnn.ok && (combo % 7) == 0) {
                                Plan pl;
                                if (makePlan(p, pl, st)) {
                                    void* ws = nullptr; if (pl.ws) CK(cudaMalloc(&ws, pl.ws));
                                    void* zb; CK(cudaMalloc(&zb, c * 4)); CK(cudaMemset(zb, 0, c * 4));
                                    CK(cudaMemset(dy, 0xff, ny * dtBytes[p.dt]));
                                    int stt = runVendor(p, pl, dx, dw, db, zb, dr, dy, ws, st);
                                    CK(cudaStreamSynchronize(st));
                                    if (stt) printf("vendor status %d for %s C=%d H=%d W=%d\n", stt, dtName[dti], c, p.h, p.w);
                                    else {
                                        Cmp vm = compare(p.dt, download(p.dt, dy, ny), ref, 1LL << 30);
                                        vendorCases++; vendorIdent += vm.identical; vendorN += vm.n;
                                        vendorMaxUlp[dti] = std::max(vendorMaxUlp[dti], vm.maxUlp);
                                    }
                                    if (ws) cudaFree(ws);
                                    cudaFree(zb);
                                }
                            }
                            cudaFree(dx); cudaFree(dw); if (db) cudaFree(db); if (dr) cudaFree(dr); cudaFree(dy);
                        }
    printf("SWEEP custom: %zu cases, %zu failed; max ulp (SILU/GELU) F32 %lld F16 %lld BF16 %lld\n", cases, failed, maxUlpSmooth[0],
           maxUlpSmooth[1], maxUlpSmooth[2]);
    if (vendorCases)
        printf("SWEEP vendor: %zu cases, identical fraction %.4f, max ulp F32 %lld F16 %lld BF16 %lld\n", vendorCases,
               (double)vendorIdent / vendorN, vendorMaxUlp[0], vendorMaxUlp[1], vendorMaxUlp[2]);
    if (sweepOnly) return failed ? 1 : 0;

    // ---------- 2. timing
    CK(cudaMalloc(&flushBuf, flushBytes));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    double bw;  // copy bandwidth, bytes read + written per second
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
    // the issue's shapes, the anchor's (32,256,56,56) first; stride 2 for three of them
    int shapes[][4] = {{32, 256, 56, 56}, {8, 96, 112, 112}, {16, 64, 224, 224}, {32, 512, 28, 28}, {64, 1024, 14, 14}, {1, 384, 64, 64}};
    bool stride2[] = {true, true, true, false, false, false};
    int acts[] = {0, 1, 3, 4};
    struct Row { std::string name; double cu, ve, floor; std::string algo; };
    std::vector<Row> rows;
    double logSum[3] = {0, 0, 0}; int logN[3] = {0, 0, 0};
    int reps = 15;
    for (int si = 0; si < 6; ++si)
        for (int s = 1; s <= (stride2[si] ? 2 : 1); ++s)
            for (int layout = 0; layout < 2; ++layout)
                for (int dti = 0; dti < 3; ++dti) {
                    Prob base{(DT)dti, layout == 1, shapes[si][0], shapes[si][1], shapes[si][2], shapes[si][3], s, 0, true, false};
                    size_t nx = (size_t)base.n * base.c * base.h * base.w, ny = (size_t)base.n * base.c * outH(base) * outW(base);
                    Buf x = randomBuf(base.dt, nx, g), w = randomBuf(base.dt, (size_t)base.c * 9, g), b = randomBuf(base.dt, base.c, g);
                    void *dx = upload(x), *dw = upload(w), *db = upload(b), *dy, *dv;
                    CK(cudaMalloc(&dy, ny * dtBytes[dti])); CK(cudaMalloc(&dv, ny * dtBytes[dti]));
                    Plan pl; bool haveV = dnn.ok && makePlan(base, pl, st);
                    void* ws = nullptr; if (haveV && pl.ws) CK(cudaMalloc(&ws, pl.ws));
                    void* zb; CK(cudaMalloc(&zb, base.c * 4)); CK(cudaMemset(zb, 0, base.c * 4));
                    // check at act=NONE: custom bit-exact, vendor identical fraction
                    std::string chk;
                    {
                        CK(cudaMemset(dy, 0xff, ny * dtBytes[dti]));
                        launchCustom(base, dx, dw, db, nullptr, dy, st); CK(cudaStreamSynchronize(st));
                        std::vector<double> ref = reference(base, x, w, &b, nullptr);
                        Cmp cm = compare(base.dt, download(base.dt, dy, ny), ref, 0);
                        char buf[128]; snprintf(buf, sizeof buf, "custom %s", cm.fail ? "FAIL" : "exact");
                        chk = buf;
                        if (cm.fail) printf("FAIL timing-shape check: %s\n", cm.first.c_str());
                        if (haveV) {
                            CK(cudaMemset(dv, 0xff, ny * dtBytes[dti]));
                            int stt = runVendor(base, pl, dx, dw, db, zb, nullptr, dv, ws, st); CK(cudaStreamSynchronize(st));
                            if (stt) { printf("vendor status %d\n", stt); haveV = false; }
                            else {
                                Cmp vm = compare(base.dt, download(base.dt, dv, ny), ref, 1LL << 30);
                                snprintf(buf, sizeof buf, ", vendor %.3f identical, max %lld ulp", (double)vm.identical / vm.n, vm.maxUlp);
                                chk += buf;
                            }
                        }
                    }
                    for (int act : acts) {
                        Prob p = base; p.act = act;
                        std::vector<float> tc, tv;
                        for (int rep = -2; rep < reps; ++rep) {
                            float ms;
                            CK(cudaMemsetAsync(flushBuf, rep & 0xff, flushBytes, st));
                            CK(cudaEventRecord(e0, st)); launchCustom(p, dx, dw, db, nullptr, dy, st); CK(cudaEventRecord(e1, st));
                            CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (rep >= 0) tc.push_back(ms * 1000);
                            if (haveV) {
                                CK(cudaMemsetAsync(flushBuf, rep & 0xff, flushBytes, st));
                                CK(cudaEventRecord(e0, st)); runVendor(p, pl, dx, dw, db, zb, nullptr, dv, ws, st); CK(cudaEventRecord(e1, st));
                                CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (rep >= 0) tv.push_back(ms * 1000);
                            }
                        }
                        CK(cudaGetLastError());
                        double floorUs = (double)(nx + ny + 10 * base.c) * dtBytes[dti] / bw * 1e6;
                        char name[160];
                        snprintf(name, sizeof name, "%2d,%4d,%3d,%3d s%d %s %-4s %-8s", p.n, p.c, p.h, p.w, s, layout ? "NHWC" : "NCHW", dtName[dti],
                                 actName[act]);
                        Row rr{name, median(tc), haveV ? median(tv) : NAN, floorUs, haveV ? pl.desc : "-"};
                        rows.push_back(rr);
                        if (haveV) { logSum[dti] += log(rr.ve / rr.cu); logN[dti]++; }
                        printf("%s custom %8.1f us vendor %8.1f us x%5.2f floor %7.1f us (%3.0f%%) %s %s\n", name, rr.cu, rr.ve, rr.ve / rr.cu,
                               floorUs, 100 * floorUs / rr.cu, act == 0 ? chk.c_str() : "", act == 0 ? rr.algo.c_str() : "");
                        fflush(stdout);
                    }
                    cudaFree(dx); cudaFree(dw); cudaFree(db); cudaFree(dy); cudaFree(dv); cudaFree(zb); if (ws) cudaFree(ws);
                }
    printf("\nSUMMARY geomean speedup custom vs cuDNN composition: F32 %.2fx (%d rows), F16 %.2fx (%d), BF16 %.2fx (%d)\n",
           logN[0] ? exp(logSum[0] / logN[0]) : NAN, logN[0], logN[1] ? exp(logSum[1] / logN[1]) : NAN, logN[1],
           logN[2] ? exp(logSum[2] / logN[2]) : NAN, logN[2]);
    printf("SUMMARY custom sweep: %zu cases, %zu failed\n", cases, failed);
    return failed ? 1 : 0;
}
