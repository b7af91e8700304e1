// What the gqa_decode A/B mains share (ab/main.cu, paged/main64.cu) beyond ../../common/dev_harness.h (the error check,
// the L2 flush by a read, the copy rate): the interleaved timing of the variants (AbTimer).
#pragma once
#include "dev_harness.h"

// The variants' timing: before every launch the L2 is flushed by a 256 MiB read (l2_flush_read), CUDA events around the
// launch, 3 untimed then 31 timed repetitions of all variants interleaved, medians in µs. With `rotate` the variants'
// order turns by one every repetition (paged/main64.cu); without, A, B, C, D in turn (ab/main.cu).
struct AbTimer {
    cudaStream_t st;
    int sms;
    size_t flush_bytes = 256u << 20;
    void* flush = nullptr;
    unsigned* sink = nullptr;
    cudaEvent_t ev0, ev1;
    AbTimer(cudaStream_t stream, int sm_count) : st(stream), sms(sm_count) {
        CK(cudaMalloc(&flush, flush_bytes)); CK(cudaMemset(flush, 0x5a, flush_bytes)); CK(cudaMalloc(&sink, 4));
        CK(cudaEventCreate(&ev0)); CK(cudaEventCreate(&ev1));
    }
    template <int NV, class Launch, class X>
    void medians(Launch (&launch)[NV], X (&xs)[NV], bool rotate, double (&med)[NV]) {
        std::vector<float> t[NV];
        for (int r = -3; r < 31; ++r)
            for (int i = 0; i < NV; ++i) {
                const int j = rotate ? (i + r + 3) % NV : i;
                l2_flush_read<<<4 * sms, 512, 0, st>>>((const uint4*)flush, (long long)(flush_bytes / 16), sink);
                CK(cudaEventRecord(ev0, st));
                launch[j](xs[j], st);
                CK(cudaEventRecord(ev1, st));
                CK(cudaEventSynchronize(ev1)); CK(cudaGetLastError());
                float ms; CK(cudaEventElapsedTime(&ms, ev0, ev1));
                if (r >= 0) t[j].push_back(ms * 1000);
            }
        for (int i = 0; i < NV; ++i) { std::sort(t[i].begin(), t[i].end()); med[i] = t[i][15]; }
    }
};
