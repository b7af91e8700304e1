// Shared by the skinny int8 dev sweeps (split_sweep.cu; prefetch_sweep.cu in git at b0ba2fb): the input fill and the split plan they
// call "heuristic" with a forced split count. That plan is the rule split_sweep.cu was written against (2·SMs CTAs,
// at most 32 / 72 KiB of A per CTA), not today's Int8MmHeuristics.skinnyPlan (the wave cost model with a merge cost);
// the sweeps time several forced counts beside it. java_plan (end of file) mirrors today's rule (stage_ab.cu, cluster_ab.cu).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

__global__ void fill_i8(int8_t* p, long long n, unsigned seed) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed;
        x ^= x >> 15; x *= 2246822519u; x ^= x >> 13;
        p[i] = (int8_t)(x & 0xff);
    }
}

struct Plan { int tile, bn, step, tilesN, splits, ks; size_t smem, ws; };

// Int8MmHeuristics.skinnyPlan with a forced split count (0: the heuristic's).
static Plan plan(int m, int n, int k, int sms, int forced) {
    Plan p{};
    p.tile = m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : 64;
    p.bn = p.tile <= 16 ? 64 : 128;     // m16 has m8's tile since the thirty-fifth session (skinny_mma.cu)
    p.step = p.tile <= 16 ? 256 : 128;
    p.tilesN = (n + p.bn - 1) / p.bn;
    long splits;
    if (forced > 0) {
        splits = forced;
    } else {
        const long target = 2L * sms;
        splits = std::max(1L, (target + p.tilesN - 1) / p.tilesN);
        splits = std::min(splits, (long)(k + p.step - 1) / p.step);
        const long budget = m <= 8 ? 32 * 1024 : 72 * 1024;
        const long ksMax = std::max((long)p.step, (budget / m - 64) / p.step * p.step);
        splits = std::max(splits, (k + ksMax - 1) / ksMax);
    }
    const long ks = ((k + splits - 1) / splits + p.step - 1) / p.step * p.step;
    p.ks = (int)ks;
    p.splits = (int)((k + ks - 1) / ks);
    p.smem = (size_t)m * (ks + 64);
    p.ws = p.splits > 1 ? (size_t)(p.tilesN + 63) / 64 * 64 * 4 + (size_t)p.tilesN * p.splits * 4 * (p.bn / 64) * (p.tile / 8) * 32 * 16 : 0;
    return p;
}

// The sweeps' device setup: SM count, a flush of 4x the L2 (read before every timed launch) and the probe's stream and
// events (stream_read.cuh).
struct SweepDevice { cudaDeviceProp prop; int sms; size_t flushBytes; Probe pr; };
inline SweepDevice sweep_device() {
    SweepDevice d;
    CK(cudaGetDeviceProperties(&d.prop, 0));
    d.sms = d.prop.multiProcessorCount;
    d.flushBytes = 4 * (size_t)d.prop.l2CacheSize;
    d.pr = probe_setup(16, d.flushBytes);
    return d;
}

// The sweeps' buffers: A [64, 14336] and W [28672, 8192] int8 filled from a hash (never all zero), outputs and
// reference of 64 x 28672 int32, and a 64 MiB split-K workspace (its counters are the caller's to clear).
struct Buffers { int8_t *a, *w; int *out, *ref, *ws; size_t maxWs; };
inline Buffers sweep_buffers(int sms, cudaStream_t st) {
    Buffers b;
    const size_t maxW = (size_t)8192 * 28672;
    b.maxWs = (size_t)64 << 20;
    CK(cudaMalloc(&b.a, 64 * 14336)); CK(cudaMalloc(&b.w, maxW));
    CK(cudaMalloc(&b.out, (size_t)64 * 28672 * 4)); CK(cudaMalloc(&b.ref, (size_t)64 * 28672 * 4));
    CK(cudaMalloc(&b.ws, b.maxWs));
    fill_i8<<<4 * sms, 256, 0, st>>>(b.a, 64 * 14336, 7u);
    fill_i8<<<4 * sms, 256, 0, st>>>(b.w, (long long)maxW, 11u);
    CK(cudaStreamSynchronize(st));
    return b;
}

// Int8MmHeuristics.skinnyPlan (cost = waves × (ks + 256) + merge(tile) × (splits − 1), smem budget 32 / 72 KiB).
template <typename KernelFor>
static Plan java_plan(int m, int n, int k, int sms, KernelFor kernel_for) {
    Plan p{};
    p.tile = m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : 64;
    p.bn = p.tile <= 16 ? 64 : 128;     // m16 has m8's tile since the thirty-fifth session (skinny_mma.cu)
    p.step = p.tile <= 16 ? 256 : 128;
    p.tilesN = (n + p.bn - 1) / p.bn;
    const long budget = m <= 8 ? 32 * 1024 : 72 * 1024;
    const long ksMax = std::max((long)p.step, (budget / m - 64) / p.step * p.step);
    const long kSteps = (k + p.step - 1) / p.step;
    const long sMin = std::min(kSteps, (k + ksMax - 1) / ksMax);
    const long sMax = std::min(kSteps, sMin + 32);
    long best = -1, bestSplits = sMin, bestKs = 0, last = -1;
    const long merge = p.tile <= 16 ? 128 : 72;
    for (long s = sMin; s <= sMax; ++s) {
        const long ksS = ((k + s - 1) / s + p.step - 1) / p.step * p.step;
        const long sp = (k + ksS - 1) / ksS;
        if (sp == last) continue;
        last = sp;
        int bps = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, (const void*)kernel_for(p.tile), 128, (size_t)m * (ksS + 64)));
        const long slots = (long)std::max(1, bps) * sms;
        const long waves = ((long)p.tilesN * sp + slots - 1) / slots;
        const long cost = waves * (ksS + 256) + merge * (sp - 1);
        if (best < 0 || cost < best) { best = cost; bestSplits = sp; bestKs = ksS; }
    }
    p.splits = (int)bestSplits;
    p.ks = (int)bestKs;
    p.smem = (size_t)m * (p.ks + 64);
    p.ws = p.splits > 1 ? (size_t)(p.tilesN + 63) / 64 * 64 * 4 + (size_t)p.tilesN * p.splits * 4 * (p.bn / 64) * (p.tile / 8) * 32 * 16 : 0;
    return p;
}
