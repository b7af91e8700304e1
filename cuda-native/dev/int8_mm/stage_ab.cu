// A/B of the skinny int8 kernel's A staging (twenty-sixth session): the tree's skinny_mma.cu against another revision
// of it (skinny_mma_alt.cu, generated from git by run_stage_ab.sh with its symbols prefixed alt_; by default 2b69676,
// which staged A's slice with cp.async, every chunk in flight at once, instead of the tree's load -> store loop through
// registers), with cuBLASLt int8 TN (COMPUTE_32I, I32 out) timed beside them.
// Result (H100, h100-2b69676-stage-ab.txt, run with the roles reversed: the tree was 2b69676 and the alternative
// 1a6b21f): cp.async staging took 1.027x the time in geometric mean over 42 shapes (0.98-1.10x), bit-identical
// outputs. The register copy stays; the staging was not what limits M >= 16.
//
// Plans: Int8MmHeuristics.skinnyPlan as the Java code has it now (the wave cost model, mirrored in skinny_plan.cuh's java_plan,
// resident CTAs from the occupancy API), and for the tree's kernel every distinct split count 1..32 that fits, so a
// changed best count shows.
// Checks before timing, per shape: outputs poisoned; tree@plan and alt@plan bit-identical; cuBLASLt's sums equal to
// tree@plan's; every forced split count of the tree's kernel equal to tree@plan; 64 sampled elements against int64 dot
// products on the host. Any mismatch fails the run (exit 1).
// Since the thirty-fifth session the tree's m16 has m8's tile (64 channels, 256 k) and java_plan plans it so: an alt
// revision from before it runs its 128-channel m16 on those plans, so compare M = 9..16 only with an alt of that tile.
// Timing: L2 flushed by a read of 4x its size before every launch, paths interleaved in rotating order, CUDA events,
// medians of REPS (default 25).
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I../../src/main/cuda/common -I../timing \
//        stage_ab.cu skinny_mma_alt.cu -lcublasLt -o /tmp/i8_stage_ab
#include "../../src/main/cuda/int8_mm/skinny_mma.cu"
#include "ab_common.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "skinny_kernels.cuh"
extern "C" {
__global__ void alt_int8_mm_skinny_m8_i32(const int8_t*, const int8_t*, int*, const float*, int, const float*, int, const float*,
                                           int*, int, int, int, int);
__global__ void alt_int8_mm_skinny_m16_i32(const int8_t*, const int8_t*, int*, const float*, int, const float*, int, const float*,
                                            int*, int, int, int, int);
__global__ void alt_int8_mm_skinny_m32_i32(const int8_t*, const int8_t*, int*, const float*, int, const float*, int, const float*,
                                            int*, int, int, int, int);
__global__ void alt_int8_mm_skinny_m64_i32(const int8_t*, const int8_t*, int*, const float*, int, const float*, int, const float*,
                                            int*, int, int, int, int);
}
static Kernel alt_kernel(int tile) {
    return tile == 8 ? alt_int8_mm_skinny_m8_i32 : tile == 16 ? alt_int8_mm_skinny_m16_i32
                     : tile == 32 ? alt_int8_mm_skinny_m32_i32 : alt_int8_mm_skinny_m64_i32;
}


int main() {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    const char* repsEnv = std::getenv("REPS");
    const int REPS = repsEnv ? std::atoi(repsEnv) : 25;
    const size_t flushBytes = 4 * (size_t)prop.l2CacheSize;
    const Probe pr = probe_setup(16, flushBytes);
    cudaStream_t st = pr.st;
    for (int tile : {8, 16, 32, 64}) {
        CK(cudaFuncSetAttribute((const void*)kernel_for(tile), cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
        CK(cudaFuncSetAttribute((const void*)alt_kernel(tile), cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    }
    cublasLtHandle_t lt; CB(cublasLtCreate(&lt));
    void* ltWs; const size_t ltWsBytes = 32u << 20; CK(cudaMalloc(&ltWs, ltWsBytes));
    std::printf("GPU %s, %d SMs, REPS %d\n", prop.name, sms, REPS);
    const int shapes[][2] = {{4096, 4096}, {4096, 14336}, {14336, 4096}, {8192, 8192}, {8192, 28672}, {2048, 5632}};
    const int ms[] = {1, 2, 4, 8, 16, 32, 64};
    const Buffers bufs = sweep_buffers(sms, st);
    int8_t *a = bufs.a, *w = bufs.w; int *out = bufs.out, *ref = bufs.ref, *ws = bufs.ws;
    int* ltOut; CK(cudaMalloc(&ltOut, (size_t)64 * 28672 * 4));
    std::vector<int8_t> hA(64 * 14336);
    CK(cudaMemcpy(hA.data(), a, hA.size(), cudaMemcpyDeviceToHost));
    int bad = 0;
    std::printf("%-4s %6s %6s %6s | %-6s %8s %8s %8s | %7s %7s | %s\n", "M", "K", "N", "floor", "splits", "alt", "tree", "lt",
                "tree/alt", "lt/tree", "tree kernel at forced splits: splits us (best *)");
    for (auto& sh : shapes)
        for (int m : ms) {
            const int K = sh[0], N = sh[1];
            const double floorUs = ((double)K * N + (double)m * K + (double)m * N * 4) / 3.0e6;
            const Plan jp = java_plan(m, N, K, sms, kernel_for);
            std::vector<Plan> forced;
            int last = -1;
            for (int s = 1; s <= 32; ++s) {
                Plan p = plan(m, N, K, sms, s);
                if (p.splits == last || p.smem > 200 * 1024 || p.ws > bufs.maxWs) continue;
                last = p.splits;
                if (p.splits != jp.splits) forced.push_back(p);
            }
            auto launchTree = [&](const Plan& p, int* o) {
                kernel_for(p.tile)<<<dim3(p.tilesN, p.splits), 128, p.smem, st>>>(a, w, o, nullptr, 0, nullptr, 0, nullptr, ws, m,
                                                                                  N, K, p.ks);
            };
            auto launchAlt = [&](const Plan& p, int* o) {
                alt_kernel(p.tile)<<<dim3(p.tilesN, p.splits), 128, p.smem, st>>>(a, w, o, nullptr, 0, nullptr, 0, nullptr, ws, m,
                                                                                   N, K, p.ks);
            };
            const LtInt8 ltg(lt, ltWs, ltWsBytes, m, N, K);
            const bool ltOk = ltg.ok;
            auto launchLt = [&](int* o) { ltg.run(a, w, o, st); };

            // checks
            CK(cudaMemset(ws, 0, bufs.maxWs));
            OutputCheck chk(st, m, N, K);
            chk.first(ref, [&](int* o) { launchTree(jp, o); });
            chk.same("alt@plan", jp.splits, out, [&](int* o) { launchAlt(jp, o); });
            chk.same("tree@plan again", jp.splits, out, [&](int* o) { launchTree(jp, o); });
            if (ltOk) chk.same("cuBLASLt", 0, ltOut, launchLt);
            for (const Plan& p : forced) chk.same("tree@forced", p.splits, out, [&](int* o) { launchTree(p, o); });
            bad += chk.bad + check_sampled_sums(hA, w, chk.ref, m, N, K);

            // timing: alt@plan, tree@plan, lt, tree@forced..., rotating order
            std::vector<std::function<void()>> paths = {[&] { launchAlt(jp, out); }, [&] { launchTree(jp, out); }};
            if (ltOk) paths.push_back([&] { launchLt(ltOut); });
            const size_t nFixed = paths.size();
            for (const Plan& p : forced) paths.push_back([&, p] { launchTree(p, out); });
            const std::vector<float> med = time_rotating(paths, pr, flushBytes, sms, REPS);
            const float altUs = med[0], treeUs = med[1], ltUs = ltOk ? med[2] : 0.f;
            size_t best = 1;
            for (size_t i = nFixed; i < paths.size(); ++i) if (med[i] < med[best]) best = i;
            std::printf("M=%-2d %6d %6d %6.1f | %6d %8.2f %8.2f %8.2f | %7.3f %7.3f |", m, K, N, floorUs, jp.splits, altUs, treeUs, ltUs,
                        treeUs / altUs, ltOk ? ltUs / treeUs : 0.f);
            for (size_t i = nFixed; i < paths.size(); ++i)
                std::printf(" %d%s%.2f", forced[i - nFixed].splits, i == best ? "*" : " ", med[i]);
            std::printf(" | best %d %.2f\n", best == 1 ? jp.splits : forced[best - nFixed].splits, med[best]);
            std::fflush(stdout);
        }
    std::printf("checks: %s\n", bad ? "FAILED" : "tree = alt = cuBLASLt bit for bit at the plan, every forced split count = the plan, "
                                                 "64 sampled sums = int64 host dot products, every shape");
    return bad ? 1 : 0;
}
