// Tile sweep for the skinny int8 kernel at 9 ≤ M ≤ 16 (thirty-fifth session): was the m16 tile (MT=2, RT=2, U=2:
// 128 channels and 128 k per CTA iteration) what made M = 16 slower than M = 8?
//
// Why: in every Java sweep the M = 16 rows took 1.05–1.12× the time of the M = 8 rows of the same (K, N) (b315d4b:
// K=8192 N=28672 F16 99.1 µs against 89.7, 0.79 of the weight-read floor against 0.87), although the weights, which
// are the time, are the same bytes. The m8 tile is RT=1, U=4 (64 channels, 256 k per iteration, 94 registers, 5 CTAs
// per SM); m16 was RT=2, U=2 (104 registers, 4 CTAs per SM). Both keep RT·2·U = 8 loads of 16 bytes per thread in
// flight. Candidates, all MT=2 (16 tokens) and the same skinny_body: r2u2 (m16 before), r1u4 (m8's tile with two token
// tiles), r1u4b5 (r1u4 held to 5 CTAs per SM: ≤ 96 registers for every output type; the tree's m16 since), r1u2; and
// at M = 32 the m32 kernel against x32r1u4. (The first two calls also had r1u8 and r2u1, slower than r2u2 nearly
// everywhere; the first call shared one split-K workspace between candidates of different channel tiles, which read
// each other's partials as counters: 454 mismatches, fixed by a workspace per candidate.)
// For each (M, K, N) and candidate: every distinct split count that fits (A slice ≤ 200 KiB, workspace ≤ 64 MiB), the
// I32 output checked bit for bit against r2u2 at the fewest splits that fit (integer sums are exact in any order), the
// F16 output against r2u2's F16 output (the same accumulators give the same bits); then timed, I32 and F16,
// candidates and splits interleaved, L2 flushed by a read before every launch, medians of 15. The m8 kernel at M = 8
// is timed beside them. Each line ends with the split counts Int8MmHeuristics.skinnyPlan's cost model picks for that
// candidate with merge costs 72 and 128 (k units), from the occupancy API's CTAs per SM.
// Result (one H100 80GB HBM3, h100-tile-sweep.txt; every output bit-identical): at the model's picks r1u4b5 with merge
// 128 took 0.967× r2u2's time with merge 72 at M = 16 and 0.937× at M = 12 (geometric means over the six shapes, I32
// and F16; 27.61 against 28.54 µs and 27.40 against 29.25), r1u4 within 0.6 %; per row, M = 16 I32 0.95–1.01×,
// F16 0.91–1.00×, M = 12 I32 0.92–0.98×, F16 0.90–0.96×. The model's picks with merge 128 were within 0.9 % (M = 16)
// and 1.5 % (M = 12) of r1u4b5's fastest count in geometric mean. At M = 32 x32r1u4 (at the merge-72 picks) took
// 0.84–1.00× m32's time on F16 but 0.92–1.09× on I32 (above 1 at every K·N ≥ 56 Mi), and M = 32 stays with cuBLASLt
// anyway, so m32 is unchanged. An H200 call of the same tree (h200-tile-sweep.txt,
// without the b5 and M = 32 candidates) agreed at K·N ≤ 64 Mi and was even at 8192×28672.
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I../../src/main/cuda/common -I../timing \
//        -o /tmp/i8_tile tile_sweep.cu && /tmp/i8_tile      (or SWEEP=tile_sweep run_split_sweep.sh, ~15 s on an H100)
#include "../../src/main/cuda/int8_mm/skinny_mma.cu"
#include "stream_read.cuh"
#include "skinny_plan.cuh"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

// The candidates beside the tree's kernels. Since this sweep the tree's m16 is r1u4 held to 5 CTAs per SM ("r1u4b5");
// the m16 that ran before it (r2u2) is instantiated here.
INT8_MM_SKINNY(x16_r2u2_i32, int, 2, 2, 2, (THREADS))
INT8_MM_SKINNY(x16_r2u2_f16, __half, 2, 2, 2, (THREADS))
INT8_MM_SKINNY(x16_r1u4_i32, int, 2, 1, 4, (THREADS))
INT8_MM_SKINNY(x16_r1u4_f16, __half, 2, 1, 4, (THREADS))
INT8_MM_SKINNY(x16_r1u2_i32, int, 2, 1, 2, (THREADS))
INT8_MM_SKINNY(x16_r1u2_f16, __half, 2, 1, 2, (THREADS))
INT8_MM_SKINNY(x32_r1u4_i32, int, 4, 1, 4, (THREADS))
INT8_MM_SKINNY(x32_r1u4_f16, __half, 4, 1, 4, (THREADS))

typedef void (*KI)(const int8_t*, const int8_t*, int*, const float*, int, const float*, int, const float*, int*, int, int, int,
                   int);
typedef void (*KH)(const int8_t*, const int8_t*, __half*, const float*, int, const float*, int, const float*, int*, int, int,
                   int, int);

struct Cand { const char* name; int tile, rt, u; KI ki; KH kh; };
constexpr int NC = 7;

int main() {
    const SweepDevice dev = sweep_device();
    const cudaDeviceProp& prop = dev.prop; const int sms = dev.sms; const size_t flushBytes = dev.flushBytes;
    const Probe pr = dev.pr; cudaStream_t st = pr.st;
    const Cand cands[NC] = {
        {"m8", 8, 1, 4, int8_mm_skinny_m8_i32, int8_mm_skinny_m8_f16},          // shipped, M <= 8
        {"r2u2", 16, 2, 2, x16_r2u2_i32, x16_r2u2_f16},                         // m16 before this sweep
        {"r1u4", 16, 1, 4, x16_r1u4_i32, x16_r1u4_f16},
        {"r1u4b5", 16, 1, 4, int8_mm_skinny_m16_i32, int8_mm_skinny_m16_f16},  // m16 since this sweep
        {"r1u2", 16, 1, 2, x16_r1u2_i32, x16_r1u2_f16},
        {"m32", 32, 2, 2, int8_mm_skinny_m32_i32, int8_mm_skinny_m32_f16},      // shipped m32
        {"x32r1u4", 32, 1, 4, x32_r1u4_i32, x32_r1u4_f16},
    };
    for (const Cand& c : cands) {
        CK(cudaFuncSetAttribute((const void*)c.ki, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
        CK(cudaFuncSetAttribute((const void*)c.kh, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
        cudaFuncAttributes fa; CK(cudaFuncGetAttributes(&fa, (const void*)c.kh));
        cudaFuncAttributes fi; CK(cudaFuncGetAttributes(&fi, (const void*)c.ki));
        std::printf("%-7s tile %2d RT=%d U=%d BN=%3d STEP=%3d registers i32 %d f16 %d, local %zu/%zu bytes\n", c.name, c.tile, c.rt, c.u,
                    64 * c.rt, 64 * c.u, fi.numRegs, fa.numRegs, fi.localSizeBytes, fa.localSizeBytes);
    }
    std::printf("GPU %s, %d SMs\n", prop.name, sms);
    const Buffers bufs = sweep_buffers(sms, st);
    int8_t *a = bufs.a, *w = bufs.w; int *out = bufs.out, *ref = bufs.ref;
    const size_t maxWs = bufs.maxWs;
    // One split-K workspace per candidate: the counters sit at its start and the partials after
    // ceil(tilesN / 64) · 64 of them, so candidates of different tilesN sharing one workspace would read each
    // other's partials as counters (the first call of this sweep did: every RT = 1 launch with splits > 1 where
    // N / 128 > 64 mismatched). A plan's workspace is its own in the library.
    int* wsOf[NC];
    wsOf[0] = bufs.ws;
    for (int c = 1; c < NC; ++c) CK(cudaMalloc(&wsOf[c], maxWs));
    float *as, *wsc; __half *outh, *refh;
    CK(cudaMalloc(&as, 64 * 4)); CK(cudaMalloc(&wsc, 28672 * 4));
    CK(cudaMalloc(&outh, (size_t)64 * 28672 * 2)); CK(cudaMalloc(&refh, (size_t)64 * 28672 * 2));
    {
        std::vector<float> h(28672);
        for (size_t i = 0; i < h.size(); ++i) h[i] = 1.0f / 4096.0f * (1.0f + (float)((i * 37) % 101) / 101.0f);
        CK(cudaMemcpy(wsc, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(as, h.data(), 64 * 4, cudaMemcpyHostToDevice));
    }
    const int shapes[][2] = {{4096, 4096}, {4096, 14336}, {14336, 4096}, {8192, 8192}, {8192, 28672}, {2048, 5632}};
    const int ms[] = {8, 12, 16, 32};
    int bad = 0;
    struct Run { int cand, splits, tilesN, ks; size_t smem; bool f16; std::vector<float> t; };
    for (auto& sh : shapes)
        for (int m : ms) {
            const int K = sh[0], N = sh[1];
            const double floorUs = ((double)K * N + (double)m * K + (double)m * N * 2) / 3.0e6;
            std::vector<Run> runs;
            const int tile = m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : 64;
            for (int ci = 0; ci < NC; ++ci) {
                if (cands[ci].tile != tile) continue;
                const int bn = 64 * cands[ci].rt, step = 64 * cands[ci].u, tilesN = (N + bn - 1) / bn;
                int last = -1;
                for (int s = 1; s <= 40; ++s) {
                    const int ks = ((K + s - 1) / s + step - 1) / step * step;
                    const int sp = (K + ks - 1) / ks;
                    const size_t smem = (size_t)m * (ks + 64);
                    const size_t wsb = sp > 1 ? (size_t)(tilesN + 63) / 64 * 64 * 4 +
                                                     (size_t)tilesN * sp * 4 * cands[ci].rt * (tile / 8) * 32 * 16
                                              : 0;
                    if (sp == last || smem > 200 * 1024 || wsb > maxWs) continue;
                    last = sp;
                    for (int f = 0; f < 2; ++f) runs.push_back(Run{ci, sp, tilesN, ks, smem, f == 1, {}});
                }
            }
            auto launch = [&](const Run& r, bool poisonedOut) {
                const Cand& c = cands[r.cand];
                int* ws = wsOf[r.cand];
                dim3 grid(r.tilesN, r.splits);
                if (r.f16)
                    c.kh<<<grid, 128, r.smem, st>>>(a, w, poisonedOut ? outh : refh, as, 1, wsc, 1, nullptr, ws, m, N, K, r.ks);
                else
                    c.ki<<<grid, 128, r.smem, st>>>(a, w, poisonedOut ? out : ref, nullptr, 0, nullptr, 0, nullptr, ws, m, N, K,
                                                    r.ks);
            };
            // References: the first run of each output type (the shipped kernel at the fewest splits that fit).
            for (int c = 0; c < NC; ++c) CK(cudaMemset(wsOf[c], 0, maxWs));
            CK(cudaMemset(ref, 0xff, (size_t)m * N * 4)); CK(cudaMemset(refh, 0xff, (size_t)m * N * 2));
            launch(runs[0], false); launch(runs[1], false);
            CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
            std::vector<int> hRef((size_t)m * N), hOut((size_t)m * N);
            std::vector<unsigned short> hRefH((size_t)m * N), hOutH((size_t)m * N);
            CK(cudaMemcpy(hRef.data(), ref, hRef.size() * 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(hRefH.data(), refh, hRefH.size() * 2, cudaMemcpyDeviceToHost));
            long nz = 0;
            for (int v : hRef) nz += v != 0;
            if (nz < (long)hRef.size() / 2) { ++bad; std::printf("REFERENCE MOSTLY ZERO M=%d K=%d N=%d\n", m, K, N); }
            for (const Run& r : runs) {
                CK(cudaMemset(out, 0xff, (size_t)m * N * 4)); CK(cudaMemset(outh, 0xff, (size_t)m * N * 2));
                launch(r, true);
                CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
                bool same;
                if (r.f16) {
                    CK(cudaMemcpy(hOutH.data(), outh, hOutH.size() * 2, cudaMemcpyDeviceToHost));
                    same = std::memcmp(hOutH.data(), hRefH.data(), hOutH.size() * 2) == 0;
                } else {
                    CK(cudaMemcpy(hOut.data(), out, hOut.size() * 4, cudaMemcpyDeviceToHost));
                    same = std::memcmp(hOut.data(), hRef.data(), hOut.size() * 4) == 0;
                }
                if (!same) {
                    ++bad;
                    std::printf("MISMATCH M=%d K=%d N=%d %s splits=%d %s\n", m, K, N, cands[r.cand].name, r.splits,
                                r.f16 ? "f16" : "i32");
                }
            }
            for (int rep = 0; rep < 17; ++rep)
                for (size_t i = 0; i < runs.size(); ++i) {
                    Run& r = runs[(i + rep) % runs.size()];
                    stream_read<0><<<4 * sms, 512, 0, st>>>((const uint4*)pr.flush, (long long)(flushBytes / 16), pr.sink);
                    CK(cudaEventRecord(pr.e0, st));
                    launch(r, true);
                    CK(cudaEventRecord(pr.e1, st));
                    CK(cudaEventSynchronize(pr.e1));
                    float ms; CK(cudaEventElapsedTime(&ms, pr.e0, pr.e1));
                    if (rep >= 2) r.t.push_back(ms * 1000.f);
                }
            std::printf("M=%-2d K=%5d N=%5d floor %5.1f us\n", m, K, N, floorUs);
            for (int f = 0; f < 2; ++f)
                for (int ci = 0; ci < NC; ++ci) {
                    float best = 1e30f; int bestS = 0; std::string line;
                    for (Run& r : runs) {
                        if (r.cand != ci || r.f16 != (f == 1)) continue;
                        std::sort(r.t.begin(), r.t.end());
                        const float med = r.t[r.t.size() / 2];
                        int occ = 0;
                        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                            &occ, f ? (const void*)cands[ci].kh : (const void*)cands[ci].ki, 128, r.smem));
                        char buf[64];
                        std::snprintf(buf, sizeof buf, " %d(%d/SM)%.2f", r.splits, occ, med);
                        line += buf;
                        if (med < best) { best = med; bestS = r.splits; }
                    }
                    if (line.empty()) continue;
                    // Int8MmHeuristics.skinnyPlan's cost model for this candidate's BN and STEP, merge cost 72 and 128
                    // (k units), over the split counts timed here: waves × (ks + 256) + merge × (splits − 1).
                    int pick[2] = {0, 0};
                    for (int mi = 0; mi < 2; ++mi) {
                        long bestCost = -1;
                        for (Run& r : runs) {
                            if (r.cand != ci || r.f16 != (f == 1)) continue;
                            if (r.smem > (size_t)(m <= 8 ? 32 : 72) * 1024) continue;  // the plan's A-slice budget
                            int occ = 0;
                            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                                &occ, f ? (const void*)cands[ci].kh : (const void*)cands[ci].ki, 128, r.smem));
                            const long slots = (long)std::max(1, occ) * sms;
                            const long waves = ((long)r.tilesN * r.splits + slots - 1) / slots;
                            const long cost = waves * (r.ks + 256) + (mi ? 128 : 72) * (r.splits - 1);
                            if (bestCost < 0 || cost < bestCost) { bestCost = cost; pick[mi] = r.splits; }
                        }
                    }
                    char pb[48];
                    std::snprintf(pb, sizeof pb, " | model picks %d (merge 72), %d (128)", pick[0], pick[1]);
                    line += pb;
                    std::printf("  %-7s %s best %7.2f at %2d splits (%.2f of floor) |%s\n", cands[ci].name, f ? "f16" : "i32",
                                best, bestS, floorUs / best, line.c_str());
                }
            std::fflush(stdout);
        }
    std::printf("checks: %s\n", bad ? "FAILED" : "every candidate's I32 and F16 outputs equal the shipped kernel's, bit for bit");
    return bad ? 1 : 0;
}
