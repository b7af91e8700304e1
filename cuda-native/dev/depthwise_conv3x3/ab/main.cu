// A/B timing of two builds of the depthwise epilogue (stage.sh): the shipped kernels compiled against
// header A (symbols a_*) and header B, launched with the shipped geometry (DepthwiseConv3x3Heuristics:
// NCHW widest access, strips of ≤ 8 rows; NHWC shipped CPT × WC, strips of ≤ 16, channel chunks),
// interleaved A B A B with the L2 flushed by a 256 MiB read before every launch, CUDA events, median
// of 25. Outputs compared element by element: bit-identical fraction and max distance in output ulps
// (each build is ≤ 1 ulp from the reference by its own tests, so A and B may differ by up to 2).
#include "ab_common.h"
#include <algorithm>

static void launch(bool a, int dt, bool nhwc, int n, int c, int h, int w, int act, const void* x, const void* wt,
                   const void* b, void* y, cudaStream_t st) {
    launch_shipped(a ? a_nchw_launch : nchw_launch, a ? a_nhwc_launch : nhwc_launch, dt, nhwc, n, c, h, w, act, x, wt, b, y, st);
}

static double ulps(uint16_t p, uint16_t q, int dt) {
    float fp, fq;
    if (dt == F16) { fp = __half2float(*(__half*)&p); fq = __half2float(*(__half*)&q); }
    else { fp = __bfloat162float(*(__nv_bfloat16*)&p); fq = __bfloat162float(*(__nv_bfloat16*)&q); }
    if (fp == fq) return 0;
    // ordered integer distance of the 16-bit patterns (same sign: plain difference)
    auto ord = [](uint16_t u) { return (u & 0x8000) ? -(int)(u & 0x7fff) : (int)u; };
    return std::abs(ord(p) - ord(q));
}

int main() {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0)); numSMs = prop.multiProcessorCount;
    printf("GPU %s, %d SMs\n", prop.name, numSMs);
    Timer timer;
    cudaStream_t st = timer.st;
    std::mt19937 g(7);
    printf("%-6s %-5s %-15s %-9s %9s %9s %7s %9s %7s\n", "dtype", "lay", "NxCxHxW", "act", "A us", "B us", "A/B", "identical", "maxulp");
    for (auto& sh : kShapes) {
        int n = sh[0], c = sh[1], h = sh[2], w = sh[3];
        size_t el = (size_t)n * c * h * w;
        for (int dt : {F16, BF16}) {
            const Inputs in = draw_inputs(g, dt, el, c);
            const std::vector<uint16_t>&hx = in.x, &hw = in.w, &hb = in.b;
            void *x, *wt, *b, *ya, *yb;
            CK(cudaMalloc(&x, el * 2)); CK(cudaMalloc(&ya, el * 2)); CK(cudaMalloc(&yb, el * 2));
            CK(cudaMalloc(&wt, c * 18)); CK(cudaMalloc(&b, c * 2));
            CK(cudaMemcpy(x, hx.data(), el * 2, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(wt, hw.data(), c * 18, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(b, hb.data(), c * 2, cudaMemcpyHostToDevice));
            for (bool nhwc : {false, true}) {
                for (int act : kActs) {
                    CK(cudaMemset(ya, 0xff, el * 2)); CK(cudaMemset(yb, 0xff, el * 2));  // NaN poison
                    launch(true, dt, nhwc, n, c, h, w, act, x, wt, b, ya, st);
                    launch(false, dt, nhwc, n, c, h, w, act, x, wt, b, yb, st);
                    CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
                    std::vector<uint16_t> ra(el), rb(el);
                    CK(cudaMemcpy(ra.data(), ya, el * 2, cudaMemcpyDeviceToHost));
                    CK(cudaMemcpy(rb.data(), yb, el * 2, cudaMemcpyDeviceToHost));
                    size_t same = 0; double mx = 0;
                    for (size_t i = 0; i < el; ++i) { if (ra[i] == rb[i]) same++; else mx = std::max(mx, ulps(ra[i], rb[i], dt)); }
                    std::vector<float> ta, tb;
                    for (int rep = 0; rep < 27; ++rep) {
                        for (int v = 0; v < 2; ++v) {
                            bool a = (v == 0) ^ (rep & 1);
                            const float us = timer.time_us([&] { launch(a, dt, nhwc, n, c, h, w, act, x, wt, b, a ? ya : yb, st); });
                            if (rep >= 2) (a ? ta : tb).push_back(us);
                        }
                    }
                    std::sort(ta.begin(), ta.end()); std::sort(tb.begin(), tb.end());
                    float ma = ta[ta.size() / 2], mb = tb[tb.size() / 2];
                    char shs[32]; snprintf(shs, sizeof shs, "%dx%dx%dx%d", n, c, h, w);
                    printf("%-6s %-5s %-15s %-9s %9.1f %9.1f %6.2fx %8.4f%% %7.0f\n", dt == F16 ? "f16" : "bf16", nhwc ? "NHWC" : "NCHW",
                           shs, kActName[act], ma, mb, ma / mb, 100.0 * same / el, mx);
                    fflush(stdout);
                }
            }
            cudaFree(x); cudaFree(ya); cudaFree(yb); cudaFree(wt); cudaFree(b);
        }
    }
    return 0;
}
