// Every fp32 input (all 2^32 bit patterns) through the double-float smooth activations of F32 outputs
// (smooth_act_f32_df below: f32_smooth_act.cuh's forms for SILU, GELU_TANH and GELU_ERF; finish<float>
// uses them for SILU and GELU_ERF, and for GELU_TANH where GAPFILL_F32_GELU_TANH_DF is 1) against the exactly rounded
// fp64 forms (smooth_act_f64, what the Java reference computes), counting how many results are equal, 1 ulp apart and
// further; then the throughput of both forms on one GPU (compute only), and the epilogue's (finish<float>) in this
// compilation.
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I ../../common -I ../../../src/main/cuda/common f32act_check.cu
// (with -gencode=arch=compute_80,code=compute_80 instead: the PTX that A100, Ada and newer parts load)
#include "depthwise_conv3x3.cuh"
#include "dev_harness.h"    // cuda-native/dev/common: CK
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

using namespace gapfill::dwconv;

__device__ __forceinline__ unsigned long long ulp_diff(float a, float b) {
    if (a != a && b != b) return 0;                       // both NaN
    int ia = __float_as_int(a), ib = __float_as_int(b);
    long long la = ia < 0 ? (long long)INT32_MIN - ia : ia;  // monotone integer order, −0 = +0
    long long lb = ib < 0 ? (long long)INT32_MIN - ib : ib;
    long long d = la - lb;
    return (unsigned long long)(d < 0 ? -d : d);
}

// GAPFILL_F32_GELU_TANH_DF as the device code of this build sees it
__global__ void form_kernel(int* f) { *f = GAPFILL_F32_GELU_TANH_DF; }
static const char* form_of_finish() {
    int* d; int h = -1;
    if (cudaMalloc(&d, 4) != cudaSuccess) return "?";
    form_kernel<<<1, 1>>>(d);
    cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost); cudaFree(d);
    return h == 1 ? "double-float" : h == 0 ? "fp64" : "?";  // for GELU_TANH (SILU: double-float in every build)
}

// The double-float form of a smooth activation (SILU, GELU_ERF, GELU_TANH); non-finite v: the fp64 form (as
// finish<float> does).
__device__ __forceinline__ float smooth_act_f32_df(float v, int act) {
    if (fabsf(v) <= 3.40282347e38f) {
        return act == ACT_SILU       ? gapfill::f32act::silu_f32(v)
               : act == ACT_GELU_ERF ? gapfill::f32act::gelu_erf_f32(v)
                                     : gapfill::f32act::gelu_tanh_f32(v);
    }
    return __double2float_rn(smooth_act_f64(v, act));
}

struct Counts { unsigned long long exact, one, more, maxd; unsigned worst; };

__global__ void check_all(int act, unsigned long long start, unsigned long long count, Counts* c) {
    unsigned long long e0 = 0, e1 = 0, e2 = 0, md = 0; unsigned worst = 0;
    for (unsigned long long i = start + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < start + count;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        const float v = __uint_as_float((unsigned)i);
        const float y = smooth_act_f32_df(v, act);
        const float r = __double2float_rn(smooth_act_f64(v, act));
        const unsigned long long d = ulp_diff(y, r);
        if (d == 0) ++e0; else if (d == 1) ++e1; else ++e2;
        if (d > md) { md = d; worst = (unsigned)i; }
    }
    atomicAdd(&c->exact, e0); atomicAdd(&c->one, e1); atomicAdd(&c->more, e2);
    if (md > 0) { unsigned long long old = atomicMax(&c->maxd, md); if (md > old) c->worst = worst; }
}

// Throughput: each thread evaluates n activations of inputs spread over [-12, 12] and keeps a checksum.
template <int FORM>
__global__ void bench(int act, int n, float* sink) {
    float acc = 0.f;
    float v = -12.f + 24.f * (float)(blockIdx.x * blockDim.x + threadIdx.x) / (float)(gridDim.x * blockDim.x);
    for (int i = 0; i < n; ++i) {
        const float y = FORM == 0 ? __double2float_rn(smooth_act_f64(v, act))
                        : FORM == 1 ? smooth_act_f32_df(v, act) : finish<float>(v, act);
        acc += y;
        v = __fadd_rn(v, 1.0e-3f);
    }
    if (acc == 12345.f) sink[0] = acc;
}

int main() {
    cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
    printf("GPU %s, %d SMs, cc %d.%d; this build's finish<float> evaluates GELU_TANH in the %s form\n", p.name, p.multiProcessorCount, p.major, p.minor,
           form_of_finish());
    Counts* c; CK(cudaMalloc(&c, sizeof(Counts)));
    const int acts[] = {ACT_SILU, ACT_GELU_TANH, ACT_GELU_ERF};
    const char* names[] = {"SILU", "GELU_TANH", "GELU_ERF"};
    int bad = 0;
    for (int a = 0; a < 3; ++a) {
        CK(cudaMemset(c, 0, sizeof(Counts)));
        const unsigned long long total = 1ull << 32, piece = 1ull << 28;
        for (unsigned long long s = 0; s < total; s += piece) check_all<<<p.multiProcessorCount * 16, 256>>>(acts[a], s, piece, c);
        CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
        Counts h; CK(cudaMemcpy(&h, c, sizeof h, cudaMemcpyDeviceToHost));
        printf("%-9s all 2^32 inputs: equal %llu, 1 ulp %llu, > 1 ulp %llu (max %llu ulp at bits 0x%08x = %.9g)\n", names[a],
               h.exact, h.one, h.more, h.maxd, h.worst, (double)__builtin_bit_cast(float, h.worst));
        if (h.more != 0 || h.exact + h.one != total) bad = 1;
    }
    float* sink; CK(cudaMalloc(&sink, 4));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    const int blocks = p.multiProcessorCount * 8, threads = 256, n = 4096;
    for (int a = 0; a < 3; ++a) {
        float ms[3][5];
        for (int rep = 0; rep < 5; ++rep)
            for (int f = 0; f < 3; ++f) {
                CK(cudaEventRecord(e0));
                if (f == 0) bench<0><<<blocks, threads>>>(acts[a], n, sink);
                else if (f == 1) bench<1><<<blocks, threads>>>(acts[a], n, sink);
                else bench<2><<<blocks, threads>>>(acts[a], n, sink);
                CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
                CK(cudaEventElapsedTime(&ms[f][rep], e0, e1));
            }
        auto med = [](float* x) { float t[5]; for (int i = 0; i < 5; ++i) t[i] = x[i];
            for (int i = 0; i < 5; ++i) for (int j = i + 1; j < 5; ++j) if (t[j] < t[i]) { float u = t[i]; t[i] = t[j]; t[j] = u; }
            return t[2]; };
        const double evals = (double)blocks * threads * n;
        printf("%-9s throughput: fp64 form %.1f G/s, fp32 double-float form %.1f G/s (%.2fx); finish<float> %.1f G/s\n",
               names[a], evals / med(ms[0]) / 1e6, evals / med(ms[1]) / 1e6, med(ms[0]) / med(ms[1]), evals / med(ms[2]) / 1e6);
    }
    printf(bad ? "FAILED: results more than 1 ulp from the exactly rounded value\n" : "ok: every result within 1 ulp\n");
    return bad;
}
