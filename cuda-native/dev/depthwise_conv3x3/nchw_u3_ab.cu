// A/B of nchw.cu's stride-1 row loop: the rolled loop (one iteration per input row; the three accumulator rows and the
// three row buffers rotate by register copies) against the same loop unrolled three times with the roles renamed
// instead of copied (nchw.cu's _u3 entry points, F16/BF16 at VW 8; the first run, h100-8b0c8c5-nchw-u3.txt, had its own
// copy of the loop and an F32 instantiation too). Same taps in the same order, so the outputs must be bit-identical;
// checked on every element of every case.
// Build and run on a GPU host from the repository root: bash cuda-native/dev/depthwise_conv3x3/nchw_u3_ab.sh
#include "nchw.cu"
#include "harness.h"  // dw_pick_rps: the shipped strip rows

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

// ---------------------------------------------------------------------------------------------------------- host
#define CK(e)                                                                                    \
    do {                                                                                         \
        cudaError_t err_ = (e);                                                                  \
        if (err_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #e, cudaGetErrorString(err_)); \
            exit(2);                                                                             \
        }                                                                                        \
    } while (0)

enum Dt { DF32, DF16, DBF16 };
static const char* kDt[] = {"F32", "F16", "BF16"};
static const char* kAct[] = {"NONE", "RELU", "RELU6", "SILU", "GELU_ERF", "GELU_TANH"};

static int esize(int dt) { return dt == DF32 ? 4 : 2; }

// Random values in [-1, 1) (never all zero), in the element type's bits.
static void fill(std::vector<unsigned char>& buf, size_t n, int dt, std::mt19937& rng) {
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    buf.resize(n * esize(dt));
    for (size_t i = 0; i < n; ++i) {
        float f = u(rng);
        if (dt == DF32) {
            memcpy(&buf[4 * i], &f, 4);
        } else if (dt == DF16) {
            __half h = __float2half_rn(f);
            memcpy(&buf[2 * i], &h, 2);
        } else {
            __nv_bfloat16 h = __float2bfloat16_rn(f);
            memcpy(&buf[2 * i], &h, 2);
        }
    }
}

static void launch(bool u3, int dt, const void* x, const void* w, const void* b, const void* r, void* y, int planes, int C,
                   int H, int W, int rps, int act, cudaStream_t st) {
    const int vw = dt == DF32 ? 4 : 8;
    long long nv = (W + vw - 1) / vw, strips = (H + rps - 1) / rps, threads = (long long)planes * strips * nv;
    dim3 grid((unsigned)((threads + 255) / 256)), block(256);
#define GO(T, TN, V)                                                                                                  \
    if (u3) dwconv3x3_nchw_##TN##_s1_v##V##_u3<<<grid, block, 0, st>>>((const T*)x, (const T*)w, (const T*)b, (const T*)r, (T*)y, \
                                                             planes, C, H, W, H, W, rps, act);                       \
    else dwconv3x3_nchw_##TN##_s1_v##V<<<grid, block, 0, st>>>((const T*)x, (const T*)w, (const T*)b, (const T*)r,  \
                                                                 (T*)y, planes, C, H, W, H, W, rps, act)
    if (dt == DF16) { GO(__half, f16, 8); }
    else { GO(__nv_bfloat16, bf16, 8); }
#undef GO
}

struct Case { int n, c, h, w; };

int main(int argc, char** argv) {
    const int reps = argc > 1 ? atoi(argv[1]) : 30;
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("GPU %s, %d SMs\n", prop.name, sms);
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    size_t flushBytes = 256u << 20;
    void* flush;
    CK(cudaMalloc(&flush, flushBytes));
    std::mt19937 rng(12345);
    // odd cases: every strip/trip-count remainder (rps + 2 mod 3), H below a strip, one column vector, one plane
    std::vector<Case> odd = {{1, 1, 1, 8}, {2, 3, 2, 16}, {1, 5, 3, 8}, {2, 3, 7, 24}, {1, 2, 17, 40}, {3, 7, 9, 64},
                             {1, 1, 97, 8}, {2, 13, 33, 16}, {1, 4, 100, 112}};
    std::vector<Case> timed = {{8, 96, 112, 112}, {16, 64, 224, 224}, {32, 256, 56, 56}, {1, 384, 64, 64}};
    long long checked = 0, differ = 0;
    printf("%-5s %-20s %-9s %5s %9s %9s %7s %s\n", "dtype", "shape NxCxHxW", "act", "rps", "rolled", "u3", "u3/rol", "bits");
    for (int phase = 0; phase < 2; ++phase) {
        const std::vector<Case>& cases = phase == 0 ? odd : timed;
        for (const Case& cs : cases) {
            for (int dt = DF16; dt <= DBF16; ++dt) {
                for (int act : {0, 1, 3, 4}) {
                    const int vw = dt == DF32 ? 4 : 8;
                    if (cs.w % vw) continue;
                    const int planes = cs.n * cs.c;
                    const size_t n = (size_t)planes * cs.h * cs.w, es = esize(dt);
                    const long long nv = cs.w / vw;
                    const int rps = dw_pick_rps(cs.h, 8, (long long)planes * nv, sms);
                    std::vector<unsigned char> hx, hw, hb, hr;
                    fill(hx, n, dt, rng);
                    fill(hw, (size_t)cs.c * 9, dt, rng);
                    fill(hb, cs.c, dt, rng);
                    const bool withRes = (cs.h + act) % 2 == 0;
                    if (withRes) fill(hr, n, dt, rng);
                    void *dx, *dw, *db, *dr = nullptr, *dyA, *dyB;
                    CK(cudaMalloc(&dx, n * es));
                    CK(cudaMalloc(&dw, hw.size()));
                    CK(cudaMalloc(&db, hb.size()));
                    CK(cudaMalloc(&dyA, n * es));
                    CK(cudaMalloc(&dyB, n * es));
                    CK(cudaMemcpy(dx, hx.data(), n * es, cudaMemcpyHostToDevice));
                    CK(cudaMemcpy(dw, hw.data(), hw.size(), cudaMemcpyHostToDevice));
                    CK(cudaMemcpy(db, hb.data(), hb.size(), cudaMemcpyHostToDevice));
                    if (withRes) {
                        CK(cudaMalloc(&dr, n * es));
                        CK(cudaMemcpy(dr, hr.data(), n * es, cudaMemcpyHostToDevice));
                    }
                    CK(cudaMemset(dyA, 0xff, n * es));  // poison: an unwritten element shows as NaN bits in both
                    CK(cudaMemset(dyB, 0xa5, n * es));  // different poison, so an element neither wrote differs
                    launch(false, dt, dx, dw, db, dr, dyA, planes, cs.c, cs.h, cs.w, rps, act, st);
                    launch(true, dt, dx, dw, db, dr, dyB, planes, cs.c, cs.h, cs.w, rps, act, st);
                    CK(cudaStreamSynchronize(st));
                    CK(cudaGetLastError());
                    std::vector<unsigned char> ya(n * es), yb(n * es);
                    CK(cudaMemcpy(ya.data(), dyA, n * es, cudaMemcpyDeviceToHost));
                    CK(cudaMemcpy(yb.data(), dyB, n * es, cudaMemcpyDeviceToHost));
                    long long bad = 0;
                    for (size_t i = 0; i < n; ++i) bad += memcmp(&ya[i * es], &yb[i * es], es) != 0;
                    checked += (long long)n;
                    differ += bad;
                    double tA = 0, tB = 0;
                    if (phase == 1) {
                        std::vector<float> va, vb;
                        cudaEvent_t e0, e1;
                        CK(cudaEventCreate(&e0));
                        CK(cudaEventCreate(&e1));
                        for (int rep = 0; rep < reps; ++rep) {
                            for (int which = 0; which < 2; ++which) {  // interleaved, order alternating per rep
                                bool u3 = (which ^ (rep & 1)) != 0;
                                CK(cudaMemsetAsync(flush, rep & 0xff, flushBytes, st));  // L2 flushed before every launch
                                CK(cudaEventRecord(e0, st));
                                launch(u3, dt, dx, dw, db, dr, u3 ? dyB : dyA, planes, cs.c, cs.h, cs.w, rps, act, st);
                                CK(cudaEventRecord(e1, st));
                                CK(cudaEventSynchronize(e1));
                                float ms;
                                CK(cudaEventElapsedTime(&ms, e0, e1));
                                (u3 ? vb : va).push_back(ms * 1000.f);
                            }
                        }
                        std::sort(va.begin(), va.end());
                        std::sort(vb.begin(), vb.end());
                        tA = va[va.size() / 2];
                        tB = vb[vb.size() / 2];
                        CK(cudaEventDestroy(e0));
                        CK(cudaEventDestroy(e1));
                    }
                    char shape[64];
                    snprintf(shape, sizeof shape, "%dx%dx%dx%d%s", cs.n, cs.c, cs.h, cs.w, withRes ? "+res" : "");
                    if (phase == 1 || bad)
                        printf("%-5s %-20s %-9s %5d %9.2f %9.2f %7.3f %s\n", kDt[dt], shape, kAct[act], rps, tA, tB,
                               tA > 0 ? tB / tA : 0.0, bad ? "DIFFER" : "identical");
                    cudaFree(dx); cudaFree(dw); cudaFree(db); cudaFree(dyA); cudaFree(dyB);
                    if (dr) cudaFree(dr);
                }
            }
        }
    }
    printf("checked %lld elements, %lld differ\n", checked, differ);
    return differ == 0 ? 0 : 1;
}
