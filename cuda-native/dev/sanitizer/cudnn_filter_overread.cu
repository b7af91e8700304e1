// Does cuDNN's depthwise (grouped, groups = C) convolution read past the end of a small filter?
//
// The H100 initcheck runs at 956a8f9 and 6fc4792 (docs/reliability.md) each left one report: a 2-byte read in a
// cuDNN trial kernel of cudnnFindConvolutionForwardAlgorithmEx, at byte 18 and byte 54 of an allocation that starts
// on a 512-byte boundary: element 9 and element 27 of a bf16 buffer, which is one past the end of a depthwise filter
// with C = 1 (9 taps) or C = 3 (27 taps). This program runs the same search and every algorithm it returns on exactly
// sized, fully initialised x, w and y, printing their address ranges, so a report's address names its operand:
//
//   nvcc -std=c++17 -O2 -arch=sm_90 -o cudnn_filter_overread cudnn_filter_overread.cu -ldl
//   compute-sanitizer --tool initcheck ./cudnn_filter_overread            # reads of never-written bytes
//   compute-sanitizer --tool memcheck --padding 512 ./cudnn_filter_overread  # reads past the end of an allocation
//   ./cudnn_filter_overread padded   # w at the start of a larger, fully written buffer: initcheck should go quiet
//   ./cudnn_filter_overread nows     # no workspace (null, 0 bytes), as Gapfill's search passes when no candidate needs one
//
// H100 run at 666a786 (docs/reliability/cudnn-filter-overread-h100.txt): 0 errors in all three modes for the first
// three shapes below (C = 1, 3, 8 at 7×17). The a930cb5 initcheck run then died (CUDNN_STATUS_INTERNAL_ERROR, error 700)
// in the search for BF16 NCHW N=1 C=64 H=97 W=1 without a workspace, so the shapes of verify's odd-size grid
// (H, W ∈ {1, 17, 97}, C ∈ {1, 3, 13, 64}) and the "nows" mode were added. H100 run at c2335e1 (appended to the same
// file): every algorithm of every shape returned status 0 in plain "nows", initcheck "nows" and initcheck with a
// workspace, 0 sanitizer errors. So the a930cb5 death is not reproduced outside the JVM run either.
//
// cuDNN is loaded with dlopen, so no headers are needed (the depthwise harness does the same).
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); std::exit(2); } } while (0)

typedef void* H;
struct Perf { int algo; int status; float time; size_t memory; int determinism; int mathType; int reserved[3]; };

struct Dnn {
    int (*create)(H*);
    int (*cTensor)(H*); int (*sTensor4d)(H, int, int, int, int, int, int);
    int (*cFilter)(H*); int (*sFilter4d)(H, int, int, int, int, int, int);
    int (*cConv)(H*); int (*sConv2d)(H, int, int, int, int, int, int, int, int); int (*sGroup)(H, int);
    int (*sMath)(H, int);
    int (*findEx)(H, H, const void*, H, const void*, H, H, void*, int, int*, Perf*, void*, size_t);
    int (*fwd)(H, const void*, H, const void*, H, const void*, H, int, void*, size_t, const void*, H, void*);
    bool load() {
        void* lib = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_GLOBAL);
        if (!lib) lib = dlopen("libcudnn.so", RTLD_NOW | RTLD_GLOBAL);
        if (!lib) { std::printf("cuDNN not loadable: %s\n", dlerror()); return false; }
#define S(f, n) *(void**)(&f) = dlsym(lib, n); if (!f) { std::printf("cuDNN: no %s\n", n); return false; }
        S(create, "cudnnCreate"); S(cTensor, "cudnnCreateTensorDescriptor"); S(sTensor4d, "cudnnSetTensor4dDescriptor");
        S(cFilter, "cudnnCreateFilterDescriptor"); S(sFilter4d, "cudnnSetFilter4dDescriptor");
        S(cConv, "cudnnCreateConvolutionDescriptor"); S(sConv2d, "cudnnSetConvolution2dDescriptor");
        S(sGroup, "cudnnSetConvolutionGroupCount"); S(sMath, "cudnnSetConvolutionMathType");
        S(findEx, "cudnnFindConvolutionForwardAlgorithmEx"); S(fwd, "cudnnConvolutionForward");
#undef S
        return true;
    }
};

// cuDNN enum values used below
enum { FLOAT = 0, HALF = 2, BFLOAT16 = 9, NCHW = 0, NHWC = 1, CROSS_CORRELATION = 1, TENSOR_OP_MATH = 1 };

static void* filled(size_t bytes, unsigned seed) {
    std::vector<unsigned char> h(bytes);
    for (size_t i = 0; i < bytes; ++i) h[i] = (unsigned char)(((i * 2654435761u) ^ seed) >> 13) & 0x3f;  // small finite
    void* d = nullptr;
    CK(cudaMalloc(&d, bytes));
    CK(cudaMemcpy(d, h.data(), bytes, cudaMemcpyHostToDevice));
    return d;
}

int main(int argc, char** argv) {
    const bool padded = argc > 1 && !std::strcmp(argv[1], "padded");
    const bool noWorkspace = argc > 1 && !std::strcmp(argv[1], "nows");
    Dnn dnn;
    if (!dnn.load()) return 2;
    H h;
    if (dnn.create(&h)) { std::printf("cudnnCreate failed\n"); return 2; }
    const size_t wsBytes = 64u << 20;
    void* ws = nullptr;
    CK(cudaMalloc(&ws, wsBytes));
    CK(cudaMemset(ws, 0, wsBytes));
    const float one = 1.f, zero = 0.f;
    int failures = 0;
    for (int type : {BFLOAT16, HALF}) {
        for (int fmt : {NHWC, NCHW}) {
            // (C, H, W): the first three are the 666a786 run's; the rest come from verify's odd-size grid
            const int shapes[][3] = {{1, 7, 17}, {3, 7, 17}, {8, 7, 17}, {64, 97, 1}, {64, 1, 97}, {13, 97, 17},
                                     {3, 97, 1}, {1, 17, 97}, {64, 17, 17}};
            for (const auto& sh : shapes) {
                const int c = sh[0], n = 1, hh = sh[1], ww = sh[2];
                const size_t xBytes = (size_t)n * c * hh * ww * 2, wBytes = (size_t)c * 9 * 2;
                void* x = filled(xBytes, 1);
                void* wBuf = filled(padded ? 4096 : wBytes, 2);  // padded: the filter at the start of 4 KiB, all written
                void* y = filled(xBytes, 3);
                H xd, yd, wd, conv;
                dnn.cTensor(&xd); dnn.cTensor(&yd); dnn.cFilter(&wd); dnn.cConv(&conv);
                int e = dnn.sTensor4d(xd, fmt, type, n, c, hh, ww) | dnn.sTensor4d(yd, fmt, type, n, c, hh, ww)
                        | dnn.sFilter4d(wd, type, fmt, c, 1, 3, 3) | dnn.sConv2d(conv, 1, 1, 1, 1, 1, 1, CROSS_CORRELATION, FLOAT)
                        | dnn.sGroup(conv, c) | dnn.sMath(conv, TENSOR_OP_MATH);
                if (e) { std::printf("descriptor setup failed\n"); return 2; }
                std::printf("%s %s C=%d H=%d W=%d: x=[%p, +%zu) w=[%p, +%zu) y=[%p, +%zu)\n", type == BFLOAT16 ? "bf16" : "f16",
                            fmt == NHWC ? "NHWC" : "NCHW", c, hh, ww, x, xBytes, wBuf, wBytes, y, xBytes);
                Perf perf[8];
                int got = 0;
                int st = dnn.findEx(h, xd, x, wd, wBuf, conv, yd, y, 8, &got, perf, noWorkspace ? nullptr : ws,
                                    noWorkspace ? 0 : wsBytes);
                if (st) { std::printf("  findEx status %d\n", st); ++failures; }
                for (int i = 0; i < got; ++i) {
                    if (perf[i].status != 0 || (noWorkspace && perf[i].memory > 0)) continue;
                    dnn.sMath(conv, perf[i].mathType);
                    int f = dnn.fwd(h, &one, xd, x, wd, wBuf, conv, perf[i].algo, noWorkspace ? nullptr : ws,
                                    noWorkspace ? 0 : wsBytes, &zero, yd, y);
                    std::printf("  algo %d math %d: forward status %d\n", perf[i].algo, perf[i].mathType, f);
                    failures += f != 0;
                }
                CK(cudaDeviceSynchronize());
                CK(cudaFree(x)); CK(cudaFree(wBuf)); CK(cudaFree(y));
            }
        }
    }
    std::printf("%s, %d failures\n", padded ? "padded filters" : noWorkspace ? "exact filters, no workspace" : "exact filters",
                failures);
    return failures ? 1 : 0;
}
