// Where moeRoute's time goes (and, below, one launch against two at small T): each launch of the shipped route.cu timed on its own, L2 flushed before each
// repetition, medians (docs/ops/moe_route.md: 74.6 us at T=16384 E=64 k=8 on an H100 at ccdd3d0, against 1.6 us of
// traffic). Launch geometry as MoeRoute.java plans it: top-k 8 warps per block; below T*k = 8192 one scatter block,
// from there counts (256 threads), bases (one block of 1024) and scatter (16 warps) over chunks of
// max(1024, ceil(T*k / 1024)) entries. An empty kernel gives the launch floor. Timing only: correctness is
// MoeRouteGpuTest's. Build and run (device, repo root): bash cuda-native/dev/moe_route/run_stage_times.sh
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "route.cu"
#include "stream_read.cuh"

__global__ void empty_kernel() {}

namespace {

constexpr int kReps = 41;

float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Config { int t, e, k; };

// The sized top-k entry (MoeRoute.topkSlots), 8 warps per block, BF16 logits, softmax, renormalised.
void topk_sized(int slots, cudaStream_t st, const __nv_bfloat16* logits, const Config& c, int* ids, float* w) {
    const int g = (c.t + 7) / 8;
    switch (slots) {
        case 1: moe_topk_bf16_s1<<<g, 256, 0, st>>>(logits, c.t, c.e, c.k, 0, 1, ids, w); break;
        case 2: moe_topk_bf16_s2<<<g, 256, 0, st>>>(logits, c.t, c.e, c.k, 0, 1, ids, w); break;
        case 4: moe_topk_bf16_s4<<<g, 256, 0, st>>>(logits, c.t, c.e, c.k, 0, 1, ids, w); break;
        case 8: moe_topk_bf16_s8<<<g, 256, 0, st>>>(logits, c.t, c.e, c.k, 0, 1, ids, w); break;
        default: moe_topk_bf16_s16<<<g, 256, 0, st>>>(logits, c.t, c.e, c.k, 0, 1, ids, w); break;
    }
}

}  // namespace

// Small T: the one-launch route (route_block: one block selects and sorts) against the two launches it replaces (sized
// top-k, then the one-block sort), interleaved, each after a flush; every output of the two compared byte for byte
// (MoeRouteGpuTest checks both against the reference). Sets MoeRoute.ONE_LAUNCH_MAX_TOKENS; rows past 64 tokens run
// the one-launch kernel where the host would not, to see where it stops paying.
template <typename Flush>
int one_vs_two(Probe& pr, Flush flush, cudaEvent_t* ev) {
    const int ts[] = {1, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256};
    const Config ek[] = {{0, 64, 8}, {0, 128, 8}, {0, 160, 6}, {0, 8, 2}, {0, 512, 8}};
    std::printf("\n%6s %4s %3s %6s | %8s %8s %7s | %s\n", "T", "E", "k", "smem", "two", "one", "two/one", "outputs");
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0.f, 1.f);
    int bad = 0;
    for (const Config& c0 : ek) {
        for (int t : ts) {
            const Config c{t, c0.e, c0.k};
            const int entries = c.t * c.k;
            const int smemOne = (16 * c.e + c.e + 1 + 2 * entries) * 4;
            if (smemOne > 48 * 1024) continue;
            std::vector<__nv_bfloat16> h((size_t)c.t * c.e);
            for (auto& x : h) x = __float2bfloat16(nd(rng));
            __nv_bfloat16* logits;
            int* buf[2][4];  // ids, offsets, gather, rowOf
            float* fbuf[2][2];  // w, weights
            CK(cudaMalloc(&logits, h.size() * 2));
            CK(cudaMemcpy(logits, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
            for (int p = 0; p < 2; ++p) {
                CK(cudaMalloc(&buf[p][0], entries * 4)); CK(cudaMalloc(&buf[p][1], (c.e + 1) * 4));
                CK(cudaMalloc(&buf[p][2], entries * 4)); CK(cudaMalloc(&buf[p][3], entries * 4));
                CK(cudaMalloc(&fbuf[p][0], entries * 4)); CK(cudaMalloc(&fbuf[p][1], entries * 4));
                CK(cudaMemset(buf[p][1], 0xAB, (c.e + 1) * 4));
            }
            int slots = 1;
            while (32 * slots < c.e) slots *= 2;
            const int sortSmem = (16 * c.e + c.e + 1) * 4;
            auto two = [&] {
                int* ids = buf[0][0]; float* w = fbuf[0][0];
                topk_sized(slots, pr.st, logits, c, ids, w);
                moe_scatter<<<1, 512, sortSmem, pr.st>>>(ids, w, entries, c.k, c.e, buf[0][1], buf[0][2], fbuf[0][1], buf[0][3]);
            };
            auto one = [&] {
                int* ids = buf[1][0]; float* w = fbuf[1][0];
#define ONE_ARGS <<<1, 512, smemOne, pr.st>>>(logits, c.t, c.e, c.k, 0, 1, ids, w, buf[1][1], buf[1][2], fbuf[1][1], buf[1][3])
                switch (slots) {
                    case 1: moe_route_block_bf16_s1 ONE_ARGS; break;
                    case 2: moe_route_block_bf16_s2 ONE_ARGS; break;
                    case 4: moe_route_block_bf16_s4 ONE_ARGS; break;
                    case 8: moe_route_block_bf16_s8 ONE_ARGS; break;
                    default: moe_route_block_bf16_s16 ONE_ARGS; break;
                }
#undef ONE_ARGS
            };
            std::vector<float> tTwo, tOne;
            for (int r = 0; r < kReps + 3; ++r) {
                float a, b;
                flush(); CK(cudaEventRecord(ev[0], pr.st)); two(); CK(cudaEventRecord(ev[1], pr.st));
                flush(); CK(cudaEventRecord(ev[2], pr.st)); one(); CK(cudaEventRecord(ev[3], pr.st));
                CK(cudaStreamSynchronize(pr.st));
                CK(cudaEventElapsedTime(&a, ev[0], ev[1])); CK(cudaEventElapsedTime(&b, ev[2], ev[3]));
                if (r >= 3) { tTwo.push_back(a * 1e3f); tOne.push_back(b * 1e3f); }
            }
            CK(cudaGetLastError());
            bool same = true;
            const size_t sizes[6] = {(size_t)entries, (size_t)c.e + 1, (size_t)entries, (size_t)entries, (size_t)entries, (size_t)entries};
            for (int o = 0; o < 6; ++o) {
                std::vector<unsigned> x(sizes[o]), y(sizes[o]);
                const void* px = o < 4 ? (const void*)buf[0][o] : (const void*)fbuf[0][o - 4];
                const void* py = o < 4 ? (const void*)buf[1][o] : (const void*)fbuf[1][o - 4];
                CK(cudaMemcpy(x.data(), px, sizes[o] * 4, cudaMemcpyDeviceToHost));
                CK(cudaMemcpy(y.data(), py, sizes[o] * 4, cudaMemcpyDeviceToHost));
                same = same && x == y;
            }
            bad += same ? 0 : 1;
            const float m2 = median(tTwo), m1 = median(tOne);
            std::printf("%6d %4d %3d %6d | %8.1f %8.1f %7.2f | %s\n", c.t, c.e, c.k, smemOne, m2, m1, m2 / m1,
                        same ? "identical" : "DIFFERENT");
            CK(cudaFree(logits));
            for (int p = 0; p < 2; ++p) {
                for (int* q : buf[p]) CK(cudaFree(q));
                for (float* q : fbuf[p]) CK(cudaFree(q));
            }
        }
    }
    std::printf("one = moe_route_block (one launch), two = sized top-k + moe_scatter; us, medians of %d, interleaved, "
                "L2 flushed before each; %d row(s) with different outputs\n", kReps, bad);
    return bad == 0 ? 0 : 1;
}

int main() {
    const Config configs[] = {{64, 64, 8}, {512, 64, 8}, {1024, 64, 8}, {4096, 64, 8}, {16384, 64, 8},
                              {16384, 128, 8}, {16384, 160, 6}, {16384, 8, 2}, {65536, 64, 8}};
    const size_t flushBytes = 256ull << 20;
    Probe pr = probe_setup(16, flushBytes);
    const long long flush16 = (long long)(flushBytes / 16);
    auto flush = [&] { stream_read<><<<1056, 256, 0, pr.st>>>((const uint4*)pr.flush, flush16, pr.sink); };
    cudaEvent_t ev[6];
    for (auto& x : ev) CK(cudaEventCreate(&x));
    std::printf("%6s %4s %3s %7s %6s | %8s %8s %8s %8s %8s | %8s %8s | %8s\n", "T", "E", "k", "entries", "chunks", "topk", "counts",
                "bases", "scatter", "sum", "all", "empty", "topk16");
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0.f, 1.f);
    for (const Config& c : configs) {
        const int entries = c.t * c.k;
        const bool chunked = entries >= 8192;
        const int chunk = std::max(1024, (entries + 1023) / 1024);
        const int chunks = chunked ? entries / chunk : 1;
        std::vector<__nv_bfloat16> h((size_t)c.t * c.e);
        for (auto& x : h) x = __float2bfloat16(nd(rng));
        __nv_bfloat16* logits;
        int *ids, *offsets, *gather, *rowOf;
        float *w, *weights;
        CK(cudaMalloc(&logits, h.size() * 2));
        CK(cudaMemcpy(logits, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
        CK(cudaMalloc(&ids, entries * 4)); CK(cudaMalloc(&w, entries * 4)); CK(cudaMalloc(&offsets, (c.e + 1) * 4));
        CK(cudaMalloc(&gather, entries * 4)); CK(cudaMalloc(&weights, entries * 4)); CK(cudaMalloc(&rowOf, entries * 4));
        const int sortSmem = (16 * c.e + c.e + 1) * 4;
        const int parts = std::max(1, 1024 / c.e);
        const int basesSmem = (parts * c.e + c.e + 1) * 4;
        int slots = 1;
        while (32 * slots < c.e) slots *= 2;
        auto topkSized = [&] { topk_sized(slots, pr.st, logits, c, ids, w); };
        // the 16-slot entry is what every E ran before the sized ones
        auto topk16 = [&] { moe_topk_bf16_s16<<<(c.t + 7) / 8, 256, 0, pr.st>>>(logits, c.t, c.e, c.k, 0, 1, ids, w); };
        auto topk = topkSized;
        auto counts = [&] { moe_chunk_counts<<<chunks, 256, c.e * 4, pr.st>>>(ids, entries, chunk, chunks, c.e, rowOf); };
        auto bases = [&] { moe_chunk_bases<<<1, 1024, basesSmem, pr.st>>>(entries, chunk, chunks, c.e, offsets, rowOf); };
        auto scatter = [&] {
            if (chunked) moe_chunk_scatter<<<chunks, 512, sortSmem, pr.st>>>(ids, w, entries, chunk, chunks, c.k, c.e, gather, weights, rowOf);
            else moe_scatter<<<1, 512, sortSmem, pr.st>>>(ids, w, entries, c.k, c.e, offsets, gather, weights, rowOf);
        };
        auto all = [&] { topk(); if (chunked) { counts(); bases(); } scatter(); };
        std::vector<float> tTopk, tTopk16, tCounts, tBases, tScatter, tAll, tEmpty;
        for (int r = 0; r < kReps + 3; ++r) {
            // the whole route, then each launch alone after a flush (each stage reads what the route just wrote)
            flush(); CK(cudaEventRecord(ev[0], pr.st)); all(); CK(cudaEventRecord(ev[1], pr.st));
            flush(); CK(cudaEventRecord(ev[2], pr.st)); topk(); CK(cudaEventRecord(ev[3], pr.st));
            flush(); CK(cudaEventRecord(ev[4], pr.st)); empty_kernel<<<1, 32, 0, pr.st>>>(); CK(cudaEventRecord(ev[5], pr.st));
            CK(cudaStreamSynchronize(pr.st));
            float a, b, e0;
            CK(cudaEventElapsedTime(&a, ev[0], ev[1])); CK(cudaEventElapsedTime(&b, ev[2], ev[3])); CK(cudaEventElapsedTime(&e0, ev[4], ev[5]));
            float cc = 0, bb = 0, ss;
            if (chunked) {
                flush(); CK(cudaEventRecord(ev[0], pr.st)); counts(); CK(cudaEventRecord(ev[1], pr.st));
                flush(); CK(cudaEventRecord(ev[2], pr.st)); bases(); CK(cudaEventRecord(ev[3], pr.st));
                CK(cudaStreamSynchronize(pr.st));
                CK(cudaEventElapsedTime(&cc, ev[0], ev[1])); CK(cudaEventElapsedTime(&bb, ev[2], ev[3]));
            }
            float t16;
            flush(); CK(cudaEventRecord(ev[0], pr.st)); topk16(); CK(cudaEventRecord(ev[1], pr.st));
            flush(); CK(cudaEventRecord(ev[4], pr.st)); scatter(); CK(cudaEventRecord(ev[5], pr.st));
            CK(cudaStreamSynchronize(pr.st));
            CK(cudaEventElapsedTime(&ss, ev[4], ev[5])); CK(cudaEventElapsedTime(&t16, ev[0], ev[1]));
            if (r < 3) continue;  // warm-up
            tAll.push_back(a * 1e3f); tTopk.push_back(b * 1e3f); tEmpty.push_back(e0 * 1e3f);
            tCounts.push_back(cc * 1e3f); tBases.push_back(bb * 1e3f); tScatter.push_back(ss * 1e3f); tTopk16.push_back(t16 * 1e3f);
        }
        CK(cudaGetLastError());
        const float sum = median(tTopk) + median(tCounts) + median(tBases) + median(tScatter);
        std::printf("%6d %4d %3d %7d %6d | %8.1f %8.1f %8.1f %8.1f %8.1f | %8.1f %8.1f | %8.1f\n", c.t, c.e, c.k, entries, chunks,
                    median(tTopk), median(tCounts), median(tBases), median(tScatter), sum, median(tAll), median(tEmpty),
                    median(tTopk16));
        CK(cudaFree(logits)); CK(cudaFree(ids)); CK(cudaFree(w)); CK(cudaFree(offsets)); CK(cudaFree(gather));
        CK(cudaFree(weights)); CK(cudaFree(rowOf));
    }
    std::printf("times in us, medians of %d after an L2 flush each (256 MiB read); 'all' is the whole route in one "
                "timed region, 'sum' the launches timed alone; topk16 the 16-slot top-k every E ran before the sized entries\n", kReps);
    return one_vs_two(pr, flush, ev);
}
