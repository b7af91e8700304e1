// Split-K sweep of the shipped skinny int8 kernel (src/main/cuda/int8_mm/skinny_mma.cu): for each sweep shape, the
// time at every distinct split count next to the count Int8MmHeuristics.skinnyPlan picks (mirrored below), with
// the resident CTAs per SM from the occupancy API, so the cost of a partial last wave can be seen.
//
// Why: at fcc850b the M = 16 rows run at 0.33-0.64 of the weight-read floor against 0.42-0.91 for M <= 8. At
// M = 16, K = 8192, N = 28672 the plan gives 2 splits of 4096 k: 448 CTAs of 66.5 KiB shared memory, 3 per SM,
// 396 slots, so a second wave of 52 CTAs streams a seventh of the weights with an eighth of the bytes in flight.
//
// Every timed launch's I32 output is compared bit for bit with the 1-split launch (integer sums are exact in any
// order; outputs poisoned first). Inputs: int8 in [-128, 127], never all zero. L2 flushed by a read of 4x its size
// before every launch, CUDA events, medians of 15, split counts interleaved. M = 64 was added after the e0aa70b run
// (h100-e0aa70b-split-sweep.txt), whose rows the split rule was fitted to: the Java sweep at ef62e14 had M = 64 at
// K = N = 4096 15 % slower under the new rule.
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I../../src/main/cuda/common -I../timing \
//        -o /tmp/i8_split split_sweep.cu && /tmp/i8_split
#include "../../src/main/cuda/int8_mm/skinny_mma.cu"
#include "stream_read.cuh"
#include "skinny_plan.cuh"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "skinny_kernels.cuh"

int main() {
    const SweepDevice dev = sweep_device();
    const cudaDeviceProp& prop = dev.prop; const int sms = dev.sms; const size_t flushBytes = dev.flushBytes;
    const Probe pr = dev.pr; cudaStream_t st = pr.st;
    for (int tile : {8, 16, 32, 64})
        CK(cudaFuncSetAttribute((const void*)kernel_for(tile), cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    std::printf("GPU %s, %d SMs\n", prop.name, sms);
    const int shapes[][2] = {{4096, 4096}, {4096, 14336}, {14336, 4096}, {8192, 8192}, {8192, 28672}, {2048, 5632}};
    const int ms[] = {1, 8, 16, 32, 64};  // 64: not in the e0aa70b run (the rule was fitted without it)
    const Buffers bufs = sweep_buffers(sms, st);
    int8_t *a = bufs.a, *w = bufs.w; int *out = bufs.out, *ref = bufs.ref, *ws = bufs.ws;
    const size_t maxWs = bufs.maxWs;
    int bad = 0;
    std::printf("%-4s %6s %6s %5s | %-40s | %s\n", "M", "K", "N", "floor", "heuristic: splits CTAs /SM waves us",
                "forced splits: splits(CTAs, /SM, waves) us, best marked *");
    for (auto& sh : shapes)
        for (int m : ms) {
            const int K = sh[0], N = sh[1];
            const double floorUs = ((double)K * N + (double)m * K + (double)m * N * 4) / 3.0e6;
            const Plan hp = plan(m, N, K, sms, 0);
            std::vector<Plan> cands;
            int last = -1;
            for (int s = 1; s <= 24; ++s) {
                const Plan p = plan(m, N, K, sms, s);
                if (p.splits == last || p.smem > 200 * 1024 || p.ws > maxWs) continue;
                last = p.splits;
                cands.push_back(p);
            }
            // reference: 1 split (or the fewest that fit)
            std::vector<int> hostRef((size_t)m * N), hostOut((size_t)m * N);
            auto launch = [&](const Plan& p, int* o) {
                kernel_for(p.tile)<<<dim3(p.tilesN, p.splits), 128, p.smem, st>>>(a, w, o, nullptr, 0, nullptr, 0, nullptr, ws, m,
                                                                                    N, K, p.ks);
            };
            CK(cudaMemset(ws, 0, maxWs));
            CK(cudaMemset(ref, 0xff, (size_t)m * N * 4));
            launch(cands[0], ref);
            CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
            CK(cudaMemcpy(hostRef.data(), ref, hostRef.size() * 4, cudaMemcpyDeviceToHost));
            std::vector<int> occ(cands.size());
            std::vector<std::vector<float>> t(cands.size());
            for (size_t c = 0; c < cands.size(); ++c) {
                CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ[c], kernel_for(cands[c].tile), 128, cands[c].smem));
                CK(cudaMemset(out, 0xff, (size_t)m * N * 4));
                launch(cands[c], out);
                CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
                CK(cudaMemcpy(hostOut.data(), out, hostOut.size() * 4, cudaMemcpyDeviceToHost));
                if (std::memcmp(hostOut.data(), hostRef.data(), hostOut.size() * 4) != 0) {
                    ++bad;
                    std::printf("MISMATCH M=%d K=%d N=%d splits=%d\n", m, K, N, cands[c].splits);
                }
            }
            for (int r = 0; r < 17; ++r)
                for (size_t c = 0; c < cands.size(); ++c) {
                    stream_read<0><<<4 * sms, 512, 0, st>>>((const uint4*)pr.flush, (long long)(flushBytes / 16), pr.sink);
                    CK(cudaEventRecord(pr.e0, st));
                    launch(cands[c], out);
                    CK(cudaEventRecord(pr.e1, st));
                    CK(cudaEventSynchronize(pr.e1));
                    float ms; CK(cudaEventElapsedTime(&ms, pr.e0, pr.e1));
                    if (r >= 2) t[c].push_back(ms * 1000.f);
                }
            std::vector<float> med(cands.size());
            size_t best = 0, hi = 0;
            for (size_t c = 0; c < cands.size(); ++c) {
                std::sort(t[c].begin(), t[c].end());
                med[c] = t[c][t[c].size() / 2];
                if (med[c] < med[best]) best = c;
                if (cands[c].splits == hp.splits) hi = c;
            }
            auto waves = [&](size_t c) { return (double)cands[c].tilesN * cands[c].splits / std::max(1, occ[c] * sms); };
            std::printf("M=%-2d %6d %6d %5.1f | heuristic %2d %5d %d %4.2f %7.2f (%.2f of floor) |", m, K, N, floorUs, hp.splits,
                        hp.tilesN * hp.splits, occ[hi], waves(hi), med[hi], floorUs / med[hi]);
            for (size_t c = 0; c < cands.size(); ++c)
                std::printf(" %d(%d,%d,%.2f)%s%.2f", cands[c].splits, cands[c].tilesN * cands[c].splits, occ[c], waves(c),
                            c == best ? "*" : " ", med[c]);
            std::printf(" | best/heuristic %.3f\n", med[best] / med[hi]);
            std::fflush(stdout);
        }
    std::printf("checks: %s\n", bad ? "FAILED" : "every split count's I32 output equals the first's, bit for bit");
    return bad ? 1 : 0;
}
