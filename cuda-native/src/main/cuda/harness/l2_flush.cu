// Benchmark harness: evicts the L2 cache by READING a buffer of several times its size. A memset would
// leave the L2 full of dirty lines, and the timed op's first reads would then pay for their write-back
// (seen on the H100: ~7 us of fixed cost on a 5.6 us weight-read floor). Reading leaves clean lines.
// Floor: bytes / read bandwidth. Limits: n16 (16-byte words) < 2^31.
#include "gapfill_types.cuh"

extern "C" __global__ void l2_flush_read(const uint4* __restrict__ buf, long long n16, unsigned* __restrict__ sink) {
    unsigned acc = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n16; i += (long long)gridDim.x * blockDim.x) {
        const uint4 v = __ldcg(buf + i);  // cache in L2 only
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;  // practically never taken; keeps the loads alive
}
