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

// One route's six outputs (ids, offsets, gather, rowOf; w, weights) for T·k entries over E experts.
struct RouteBufs {
    int* i[4];
    float* f[2];
    RouteBufs(int entries, int experts) {
        CK(cudaMalloc(&i[0], entries * 4)); CK(cudaMalloc(&i[1], (experts + 1) * 4));
        CK(cudaMalloc(&i[2], entries * 4)); CK(cudaMalloc(&i[3], entries * 4));
        CK(cudaMalloc(&f[0], entries * 4)); CK(cudaMalloc(&f[1], entries * 4));
    }
    ~RouteBufs() {
        for (int* q : i) cudaFree(q);
        for (float* q : f) cudaFree(q);
    }
};

struct PairResult { float a, b; bool same; };

// Two ways to route the same BF16 logits (random normal) timed interleaved, each after a flush, medians of kReps after
// 3 warm-ups; then their six outputs compared byte for byte.
template <typename Flush, typename A, typename B>
PairResult time_pair(Probe& pr, Flush flush, cudaEvent_t* ev, const Config& c, std::mt19937& rng, A pathA, B pathB) {
    const int entries = c.t * c.k;
    std::normal_distribution<float> nd(0.f, 1.f);
    std::vector<__nv_bfloat16> h((size_t)c.t * c.e);
    for (auto& x : h) x = __float2bfloat16(nd(rng));
    __nv_bfloat16* logits;
    CK(cudaMalloc(&logits, h.size() * 2));
    CK(cudaMemcpy(logits, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
    RouteBufs ba(entries, c.e), bb(entries, c.e);
    std::vector<float> ta, tb;
    for (int r = 0; r < kReps + 3; ++r) {
        float a, b;
        flush(); CK(cudaEventRecord(ev[0], pr.st)); pathA(logits, ba); CK(cudaEventRecord(ev[1], pr.st));
        flush(); CK(cudaEventRecord(ev[2], pr.st)); pathB(logits, bb); CK(cudaEventRecord(ev[3], pr.st));
        CK(cudaStreamSynchronize(pr.st));
        CK(cudaEventElapsedTime(&a, ev[0], ev[1])); CK(cudaEventElapsedTime(&b, ev[2], ev[3]));
        if (r >= 3) { ta.push_back(a * 1e3f); tb.push_back(b * 1e3f); }
    }
    CK(cudaGetLastError());
    bool same = true;
    const size_t sizes[6] = {(size_t)entries, (size_t)c.e + 1, (size_t)entries, (size_t)entries, (size_t)entries, (size_t)entries};
    for (int o = 0; o < 6; ++o) {
        std::vector<unsigned> x(sizes[o]), y(sizes[o]);
        CK(cudaMemcpy(x.data(), o < 4 ? (const void*)ba.i[o] : (const void*)ba.f[o - 4], sizes[o] * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(y.data(), o < 4 ? (const void*)bb.i[o] : (const void*)bb.f[o - 4], sizes[o] * 4, cudaMemcpyDeviceToHost));
        same = same && x == y;
    }
    CK(cudaFree(logits));
    return {median(ta), median(tb), same};
}

int slots_for(int experts) {
    int slots = 1;
    while (32 * slots < experts) slots *= 2;
    return slots;
}

// Small T: the one-launch route (route_block: one block selects and sorts) against the two launches it replaces (sized
// top-k, then the one-block sort); every output of the two compared byte for byte (MoeRouteGpuTest checks both
// against the reference). Set MoeRoute.ONE_LAUNCH_MAX_TOKENS; rows past 16 tokens run the one-launch kernel where
// the host does not (17-32 tokens two per warp in lockstep since branch gpu-pending-route-pairs, more in turn), to show
// where it stops paying.
template <typename Flush>
int one_vs_two(Probe& pr, Flush flush, cudaEvent_t* ev) {
    const int ts[] = {1, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256};
    const Config ek[] = {{0, 64, 8}, {0, 128, 8}, {0, 160, 6}, {0, 8, 2}, {0, 512, 8}};
    std::printf("\n%6s %4s %3s %6s | %8s %8s %7s | %s\n", "T", "E", "k", "smem", "two", "one", "two/one", "outputs");
    std::mt19937 rng(11);
    int bad = 0;
    for (const Config& c0 : ek) {
        for (int t : ts) {
            const Config c{t, c0.e, c0.k};
            const int entries = c.t * c.k, slots = slots_for(c.e);
            const int smemOne = (16 * c.e + c.e + 1 + 2 * entries) * 4, sortSmem = (16 * c.e + c.e + 1) * 4;
            if (smemOne > 48 * 1024) continue;
            auto two = [&](const __nv_bfloat16* logits, RouteBufs& b) {
                topk_sized(slots, pr.st, logits, c, b.i[0], b.f[0]);
                moe_scatter<<<1, 512, sortSmem, pr.st>>>(b.i[0], b.f[0], entries, c.k, c.e, b.i[1], b.i[2], b.f[1], b.i[3]);
            };
            auto one = [&](const __nv_bfloat16* logits, RouteBufs& b) {
#define ONE_ARGS <<<1, 512, smemOne, pr.st>>>(logits, c.t, c.e, c.k, 0, 1, b.i[0], b.f[0], b.i[1], b.i[2], b.f[1], b.i[3])
                switch (slots) {
                    case 1: moe_route_block_bf16_s1 ONE_ARGS; break;
                    case 2: moe_route_block_bf16_s2 ONE_ARGS; break;
                    case 4: moe_route_block_bf16_s4 ONE_ARGS; break;
                    case 8: moe_route_block_bf16_s8 ONE_ARGS; break;
                    default: moe_route_block_bf16_s16 ONE_ARGS; break;
                }
#undef ONE_ARGS
            };
            const PairResult r = time_pair(pr, flush, ev, c, rng, two, one);
            bad += r.same ? 0 : 1;
            std::printf("%6d %4d %3d %6d | %8.1f %8.1f %7.2f | %s\n", c.t, c.e, c.k, smemOne, r.a, r.b, r.a / r.b,
                        r.same ? "identical" : "DIFFERENT");
        }
    }
    std::printf("one = moe_route_block (one launch), two = sized top-k + moe_scatter; us, medians of %d, interleaved, "
                "L2 flushed before each; %d row(s) with different outputs\n", kReps, bad);
    return bad == 0 ? 0 : 1;
}

// Below MoeRoute.CHUNKED_FROM (8192 entries) one block sorts every entry; its time grows with T·k (17.7 us for 4096
// entries at 402b926). Here, with the same top-k before both: the one-block sort against the chunked one (counts,
// bases, scatter over chunks of max(1024, ceil(n / 1024)) entries) from 1024 to 8184 entries, outputs compared byte
// for byte. For the switch point; the host does not run the chunked sort below 8192 entries.
template <typename Flush>
int block_vs_chunks(Probe& pr, Flush flush, cudaEvent_t* ev) {
    const Config cs[] = {{128, 64, 8}, {256, 64, 8}, {384, 64, 8}, {512, 64, 8}, {768, 64, 8}, {1023, 64, 8},
                         {512, 160, 6}, {1024, 160, 6}, {1024, 8, 2}, {2048, 8, 2}, {4095, 8, 2}, {256, 512, 8}, {512, 512, 8}};
    std::printf("\n%6s %4s %3s %7s %6s | %8s %8s %7s | %s\n", "T", "E", "k", "entries", "chunks", "block", "chunks",
                "blk/chk", "outputs");
    std::mt19937 rng(13);
    int bad = 0;
    for (const Config& c : cs) {
        const int entries = c.t * c.k, slots = slots_for(c.e);
        const int chunk = std::max(1024, (entries + 1023) / 1024), chunks = entries / chunk;
        const int sortSmem = (16 * c.e + c.e + 1) * 4, parts = std::max(1, 1024 / c.e);
        const int basesSmem = (parts * c.e + c.e + 1) * 4;
        auto block = [&](const __nv_bfloat16* logits, RouteBufs& b) {
            topk_sized(slots, pr.st, logits, c, b.i[0], b.f[0]);
            moe_scatter<<<1, 512, sortSmem, pr.st>>>(b.i[0], b.f[0], entries, c.k, c.e, b.i[1], b.i[2], b.f[1], b.i[3]);
        };
        auto chunked = [&](const __nv_bfloat16* logits, RouteBufs& b) {
            topk_sized(slots, pr.st, logits, c, b.i[0], b.f[0]);
            moe_chunk_counts<<<chunks, 256, c.e * 4, pr.st>>>(b.i[0], entries, chunk, chunks, c.e, b.i[3]);
            moe_chunk_bases<<<1, 1024, basesSmem, pr.st>>>(entries, chunk, chunks, c.e, b.i[1], b.i[3]);
            moe_chunk_scatter<<<chunks, 512, sortSmem, pr.st>>>(b.i[0], b.f[0], entries, chunk, chunks, c.k, c.e, b.i[2], b.f[1], b.i[3]);
        };
        const PairResult r = time_pair(pr, flush, ev, c, rng, block, chunked);
        bad += r.same ? 0 : 1;
        std::printf("%6d %4d %3d %7d %6d | %8.1f %8.1f %7.2f | %s\n", c.t, c.e, c.k, entries, chunks, r.a, r.b, r.a / r.b,
                    r.same ? "identical" : "DIFFERENT");
    }
    std::printf("block = sized top-k + moe_scatter, chunks = sized top-k + counts + bases + moe_chunk_scatter; us, medians of "
                "%d, interleaved, L2 flushed before each; %d row(s) with different outputs\n", kReps, bad);
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
    const int a = one_vs_two(pr, flush, ev);
    return block_vs_chunks(pr, flush, ev) | a;
}
