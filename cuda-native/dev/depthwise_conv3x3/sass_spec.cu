// Specialisations for sass_count.sh and ab/run_fastact.sh sass: the F16 stride-1 kernels with the activation, the
// vector path and "no residual" as compile-time constants, so the SASS of a row loop is (nearly) the path that
// activation runs. One of SPEC_NHWC (nhwc.cu), SPEC_NCHW (nchw.cu, VW 8 and 2) or SPEC_RING (the variant); nhwc.cu and
// nchw.cu come from the include path: the shipped ones, or a staged A/B copy (-I <stage>/a, b or c). The kernels have
// their own launch bounds (256, 1 for the shipped ones), so a register cap of a staged variant does not apply here.
#if defined(SPEC_NHWC)
#include "nhwc.cu"
template <int A> __global__ void __launch_bounds__(256, 1) spec_nhwc(const __half* x, const __half* w, const __half* b,
                                                                    __half* y, int N, int H, int W, int C, int rps, int cb) {
    dw_nhwc<__half, 1, 4, 2>(x, w, b, nullptr, y, N, H, W, C, H, W, rps, cb, A, 1);
}
#define SPEC(A) template __global__ void spec_nhwc<A>(const __half*, const __half*, const __half*, __half*, int, int, int, int, int, int);
#elif defined(SPEC_NCHW)
#include "nchw.cu"
template <int A, int VW> __global__ void __launch_bounds__(256, 1) spec_nchw(const __half* x, const __half* w, const __half* b,
                                                                            __half* y, int planes, int C, int H, int W, int rps) {
    dw_nchw<__half, 1, VW>(x, w, b, nullptr, y, planes, C, H, W, H, W, rps, A);
}
#define SPEC(A)                                                                                                                   \
    template __global__ void spec_nchw<A, 8>(const __half*, const __half*, const __half*, __half*, int, int, int, int, int); \
    template __global__ void spec_nchw<A, 2>(const __half*, const __half*, const __half*, __half*, int, int, int, int, int);
#else
#include "variant_nhwc_ring.cu"
template <int A> __global__ void __launch_bounds__(256, 2) spec_ring(const __half* x, const __half* w, const __half* b, __half* y,
                                                                    int H, int W, int C, int cgs, int tws, int colTiles, int chunks,
                                                                    int strips, int rps) {
    dw_ring<__half, 4, 2, 4>(x, w, b, nullptr, y, H, W, C, cgs, tws, colTiles, chunks, strips, rps, A, 1);
}
#define SPEC(A) template __global__ void spec_ring<A>(const __half*, const __half*, const __half*, __half*, int, int, int, int, int, int, int, int, int);
#endif
SPEC(0)  // NONE
SPEC(3)  // SILU
SPEC(4)  // GELU_ERF
SPEC(5)  // GELU_TANH
