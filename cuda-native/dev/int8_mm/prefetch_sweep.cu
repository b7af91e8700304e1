// Does an L2 prefetch ahead of the register loads take the skinny int8 kernel closer to a plain read?
//
// Why: at M <= 8 the shipped kernel (src/main/cuda/int8_mm/skinny_mma.cu) runs 3-4 us slower than a plain read of the
// same weight bytes after the L2 flush on the mid-size shapes (docs/ops/int8_mm.md, c58a86e sweep: M = 1, K = 4096,
// N = 14336 I32 25.9 us, plain read 22.9, 80 % of the floor 24.3). Each thread keeps RT·U·2 16-byte loads in flight in
// registers (16 KiB per CTA of the m8 tile); the plain-read probe (cuda-native/dev/grouped_gemm/gemv, part A) needs
// about 64 KiB per SM in flight for 84 % of the copy rate. skinny_body<..., PF> adds, per warp and iteration, one
// prefetch.global.L2 per lane for the lines PF iterations ahead (and the first PF iterations at the start), so the
// DRAM requests run ahead of the registers without more registers or shared memory.
//
// For each shape: the split plan of skinny_plan.cuh (the older rule, not today's Java one) and splits 1, 2, 4, 8
// (distinct), each with PF = 0 (the shipped code), 1, 2, 4, 8; every output compared bit for bit with the shipped
// plan's (I32 sums are exact, outputs poisoned first); L2 flushed by a read of 4x its size before every launch, CUDA
// events, candidates interleaved, medians of 15. The plain read of the same K·N bytes after the same flush is timed
// in the same rounds.
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I../../src/main/cuda/common -I../timing \
//        -o /tmp/i8_pf prefetch_sweep.cu && /tmp/i8_pf
#include "../../src/main/cuda/int8_mm/skinny_mma.cu"
#include "stream_read.cuh"
#include "skinny_plan.cuh"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#define PFK(NAME, MT, RT, U, PF)                                                                                           \
    extern "C" __global__ void __launch_bounds__(THREADS) NAME(const int8_t* a, const int8_t* w, int* out, int* workspace,   \
                                                               int M, int N, int K, int ks) {                              \
        skinny_body<int, MT, RT, U, PF>(a, w, out, Dequant{nullptr, 0, nullptr, 0, nullptr}, workspace, M, N, K, ks);    \
    }
PFK(pf_m8_0, 1, 1, 4, 0) PFK(pf_m8_1, 1, 1, 4, 1) PFK(pf_m8_2, 1, 1, 4, 2) PFK(pf_m8_4, 1, 1, 4, 4) PFK(pf_m8_8, 1, 1, 4, 8)
PFK(pf_m16_0, 2, 2, 2, 0) PFK(pf_m16_1, 2, 2, 2, 1) PFK(pf_m16_2, 2, 2, 2, 2) PFK(pf_m16_4, 2, 2, 2, 4) PFK(pf_m16_8, 2, 2, 2, 8)
typedef void (*Kernel)(const int8_t*, const int8_t*, int*, int*, int, int, int, int);
static const int PFS[] = {0, 1, 2, 4, 8};
static Kernel kernel_for(int tile, int pfi) {
    static const Kernel m8[] = {pf_m8_0, pf_m8_1, pf_m8_2, pf_m8_4, pf_m8_8};
    static const Kernel m16[] = {pf_m16_0, pf_m16_1, pf_m16_2, pf_m16_4, pf_m16_8};
    return tile == 8 ? m8[pfi] : m16[pfi];
}

int main() {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    const size_t flushBytes = 4 * (size_t)prop.l2CacheSize;
    const Probe pr = probe_setup(16, flushBytes);
    cudaStream_t st = pr.st;
    for (int tile : {8, 16})
        for (int i = 0; i < 5; ++i)
            CK(cudaFuncSetAttribute((const void*)kernel_for(tile, i), cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    std::printf("GPU %s, %d SMs, L2 %d B\n", prop.name, sms, prop.l2CacheSize);
    const int shapes[][2] = {{4096, 14336}, {14336, 4096}, {8192, 8192}, {8192, 28672}, {4096, 4096}, {2048, 5632}};
    const int ms[] = {1, 8, 16};
    const Buffers bufs = sweep_buffers(sms, st);
    int8_t *a = bufs.a, *w = bufs.w; int *out = bufs.out, *ref = bufs.ref, *ws = bufs.ws;
    const size_t maxWs = bufs.maxWs;
    int bad = 0, checks = 0;
    std::printf("times in us (medians of 15); read = plain read of K*N bytes after the flush; floor = (K*N + M*K + 4*M*N) / 3.0 TB/s\n");
    std::printf("%-4s %6s %6s %5s %6s | %-36s | %s\n", "M", "K", "N", "floor", "read", "heuristic splits: PF0 PF1 PF2 PF4 PF8",
                "best (splits, PF) us, and its floor fraction | other splits: s(PF0 best-PF us)");
    for (auto& sh : shapes)
        for (int m : ms) {
            const int K = sh[0], N = sh[1];
            const double floorUs = ((double)K * N + (double)m * K + (double)m * N * 4) / 3.0e6;
            const Plan hp = plan(m, N, K, sms, 0);
            std::vector<Plan> plans{hp};
            for (int s : {1, 2, 4, 8}) {
                const Plan p = plan(m, N, K, sms, s);
                bool dup = p.smem > 200 * 1024 || p.ws > maxWs;
                for (auto& q : plans) dup = dup || q.splits == p.splits;
                if (!dup) plans.push_back(p);
            }
            struct Cand { int plan, pfi; };
            std::vector<Cand> cands;
            for (int pi = 0; pi < (int)plans.size(); ++pi)
                for (int f = 0; f < 5; ++f) cands.push_back({pi, f});
            auto launch = [&](const Cand& c, int* o) {
                const Plan& p = plans[c.plan];
                kernel_for(p.tile, c.pfi)<<<dim3(p.tilesN, p.splits), 128, p.smem, st>>>(a, w, o, ws, m, N, K, p.ks);
            };
            std::vector<int> hostRef((size_t)m * N), hostOut((size_t)m * N);
            // fresh counters for this shape: the partials of an earlier shape with fewer channel tiles lie where this
            // shape's counters are (a plan's own workspace is zeroed once and then re-armed by every launch, as in Int8Mm)
            CK(cudaMemset(ws, 0, maxWs));
            CK(cudaMemset(ref, 0xff, (size_t)m * N * 4));
            launch(cands[0], ref);
            CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
            CK(cudaMemcpy(hostRef.data(), ref, hostRef.size() * 4, cudaMemcpyDeviceToHost));
            bool allZero = true;
            for (int v : hostRef) allZero = allZero && v == 0;
            if (allZero) { ++bad; std::printf("REFERENCE ALL ZERO M=%d K=%d N=%d\n", m, K, N); }
            for (size_t c = 0; c < cands.size(); ++c)
                for (int rep = 0; rep < 2; ++rep) {  // twice: the second launch proves the split counters were re-armed
                    CK(cudaMemset(out, 0xff, (size_t)m * N * 4));
                    launch(cands[c], out);
                    CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
                    CK(cudaMemcpy(hostOut.data(), out, hostOut.size() * 4, cudaMemcpyDeviceToHost));
                    ++checks;
                    if (std::memcmp(hostOut.data(), hostRef.data(), hostOut.size() * 4) != 0) {
                        ++bad;
                        std::printf("MISMATCH M=%d K=%d N=%d splits=%d PF=%d\n", m, K, N, plans[cands[c].plan].splits, PFS[cands[c].pfi]);
                    }
                }
            std::vector<std::vector<float>> t(cands.size() + 1);
            for (int r = 0; r < 17; ++r)
                for (size_t c = 0; c <= cands.size(); ++c) {
                    stream_read<0><<<4 * sms, 512, 0, st>>>((const uint4*)pr.flush, (long long)(flushBytes / 16), pr.sink);
                    CK(cudaEventRecord(pr.e0, st));
                    if (c < cands.size()) launch(cands[c], out);
                    else stream_read<1><<<4 * sms, 512, 0, st>>>((const uint4*)w, (long long)K * N / 16, pr.sink);
                    CK(cudaEventRecord(pr.e1, st));
                    CK(cudaEventSynchronize(pr.e1));
                    float ms_; CK(cudaEventElapsedTime(&ms_, pr.e0, pr.e1));
                    if (r >= 2) t[c].push_back(ms_ * 1000.f);
                }
            std::vector<float> med(t.size());
            for (size_t c = 0; c < t.size(); ++c) { std::sort(t[c].begin(), t[c].end()); med[c] = t[c][t[c].size() / 2]; }
            size_t best = 0;
            for (size_t c = 0; c < cands.size(); ++c) if (med[c] < med[best]) best = c;
            std::printf("M=%-2d %6d %6d %5.1f %6.2f | s%-2d", m, K, N, floorUs, med[cands.size()], hp.splits);
            for (int f = 0; f < 5; ++f) std::printf(" %6.2f", med[f]);
            std::printf(" | best s%d PF%d %6.2f (%.2f of floor, PF0 heuristic %.2f) |", plans[cands[best].plan].splits,
                        PFS[cands[best].pfi], med[best], floorUs / med[best], floorUs / med[0]);
            for (int pi = 1; pi < (int)plans.size(); ++pi) {
                int bf = 0;
                for (int f = 1; f < 5; ++f) if (med[pi * 5 + f] < med[pi * 5 + bf]) bf = f;
                std::printf(" s%d(%.2f PF%d %.2f)", plans[pi].splits, med[pi * 5], PFS[bf], med[pi * 5 + bf]);
            }
            std::printf("\n");
            std::fflush(stdout);
        }
    std::printf("checks: %d launches compared bit for bit with the shipped plan's output, %d failed\n", checks, bad);
    return bad ? 1 : 0;
}
