// The plain streaming read shared by the timing probes: 16-byte __ldcg loads in a grid-stride loop, XOR-folded into
// a sink that is practically never written (keeps the loads). Tag only makes distinct symbols, so that one
// instantiation can carry a function attribute (e.g. a carveout preference) that another does not.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); std::exit(2); } } while (0)

template <int Tag = 0>
__global__ void stream_read(const uint4* __restrict__ p, long long n16, unsigned* __restrict__ sink) {
    unsigned acc = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n16; i += (long long)gridDim.x * blockDim.x) {
        const uint4 v = __ldcg(p + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;
}

// What every probe allocates: the timed buffer (filled with 1s), the flush buffer (2s), the sink, a stream, two events.
struct Probe {
    void* buf;
    void* flush;
    unsigned* sink;
    cudaStream_t st;
    cudaEvent_t e0, e1;
};
inline Probe probe_setup(size_t bufBytes, size_t flushBytes) {
    Probe p;
    CK(cudaMalloc(&p.buf, bufBytes)); CK(cudaMalloc(&p.flush, flushBytes)); CK(cudaMalloc(&p.sink, 4));
    CK(cudaMemset(p.buf, 1, bufBytes)); CK(cudaMemset(p.flush, 2, flushBytes));
    CK(cudaStreamCreate(&p.st));
    CK(cudaEventCreate(&p.e0)); CK(cudaEventCreate(&p.e1));
    return p;
}
