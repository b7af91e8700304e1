// A/B of the skinny int8 kernel's split-K merge inside a thread-block cluster (twenty-sixth session): skinny_mma.cu with
// cluster_merge.patch applied (run_cluster_ab.sh writes it to /tmp and passes it as SKINNY_SRC; the tree keeps the
// global merge, since this A/B measured the cluster launches slower: h100-d5022dd-cluster-ab.txt) launched as before (the splits' fragments through the workspace, the last block of a channel tile
// adds them after an acq_rel ticket) and the same kernel launched with cluster dims (1, splits, 1) (sm_90: the
// fragments through distributed shared memory, the first split adds them; the kernel sees the cluster by
// %cluster_nctarank), with cuBLASLt int8 TN (I32) beside them.
// Paths per shape: global@plan (Int8MmHeuristics.skinnyPlan, skinny_plan.cuh's java_plan), cluster@plan where the plan
// has 2-8 splits, and cluster@S for every other distinct split count S in 2..8 that fits; M in {1, 2, 4, 8, 16} x the
// sweep's six (K, N). Checks first, per shape: outputs poisoned; every path's I32 output bit-identical to global@plan;
// 64 sampled sums against int64 host dot products. Timing: L2 flushed by a read of 4x its size before every launch,
// rotating order, CUDA events, medians of REPS (default 25). Exit 1 if a check fails.
//   python3 ../common/apply_patch.py ../../src/main/cuda/int8_mm/skinny_mma.cu cluster_merge.patch /tmp/skinny_cl.cu
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I../../src/main/cuda/common -I../timing \
//        -DSKINNY_SRC='"/tmp/skinny_cl.cu"' cluster_ab.cu -lcublasLt -o /tmp/i8_cluster_ab
#ifndef SKINNY_SRC
#define SKINNY_SRC "../../src/main/cuda/int8_mm/skinny_mma.cu"
#endif
#include SKINNY_SRC
#include "ab_common.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "skinny_kernels.cuh"

int main() {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    const int REPS = std::getenv("REPS") ? std::atoi(std::getenv("REPS")) : 25;
    if (prop.major != 9) { std::printf("needs compute capability 9.x (clusters)\n"); return 2; }
    const size_t flushBytes = 4 * (size_t)prop.l2CacheSize;
    const Probe pr = probe_setup(16, flushBytes);
    cudaStream_t st = pr.st;
    for (int tile : {8, 16, 32, 64})
        CK(cudaFuncSetAttribute((const void*)kernel_for(tile), cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    cublasLtHandle_t lt; CB(cublasLtCreate(&lt));
    void* ltWs; const size_t ltWsBytes = 32u << 20; CK(cudaMalloc(&ltWs, ltWsBytes));
    std::printf("GPU %s, %d SMs, REPS %d\n", prop.name, sms, REPS);
    const int shapes[][2] = {{4096, 4096}, {4096, 14336}, {14336, 4096}, {8192, 8192}, {8192, 28672}, {2048, 5632}};
    const int ms[] = {1, 2, 4, 8, 16};
    const Buffers bufs = sweep_buffers(sms, st);
    int8_t *a = bufs.a, *w = bufs.w; int *out = bufs.out, *ref = bufs.ref, *ws = bufs.ws;
    int* ltOut; CK(cudaMalloc(&ltOut, (size_t)64 * 28672 * 4));
    std::vector<int8_t> hA(64 * 14336);
    CK(cudaMemcpy(hA.data(), a, hA.size(), cudaMemcpyDeviceToHost));
    int bad = 0;
    std::vector<double> logPlan, logBest;
    std::printf("%-4s %6s %6s %6s | %-6s %8s %8s %8s | %8s %8s | %s\n", "M", "K", "N", "floor", "splits", "global", "cluster", "lt",
                "cl/glob", "best/gl", "cluster at forced splits: splits us (best *)");
    for (auto& sh : shapes)
        for (int m : ms) {
            const int K = sh[0], N = sh[1];
            const double floorUs = ((double)K * N + (double)m * K + (double)m * N * 4) / 3.0e6;
            const Plan jp = java_plan(m, N, K, sms, kernel_for);
            const int partBytes = 4 * (jp.bn / 64) * (jp.tile / 8) * 32 * 16;  // WARPS·RT·MT·32 lanes·int4
            std::vector<Plan> cl;  // cluster launches: the plan's count first (if 2..8), then the others
            if (jp.splits >= 2 && jp.splits <= 8) cl.push_back(jp);
            int last = -1;
            for (int s = 2; s <= 8; ++s) {
                Plan p = plan(m, N, K, sms, s);
                if (p.splits == last || p.splits < 2 || p.splits > 8 || p.smem > 200 * 1024 || p.ws > bufs.maxWs) continue;
                last = p.splits;
                if (p.splits != jp.splits) cl.push_back(p);
            }
            auto launchGlobal = [&](const Plan& p, int* o) {
                kernel_for(p.tile)<<<dim3(p.tilesN, p.splits), 128, p.smem, st>>>(a, w, o, nullptr, 0, nullptr, 0, nullptr, ws, m, N,
                                                                                  K, p.ks);
            };
            auto launchCluster = [&](const Plan& p, int* o) {
                cudaLaunchConfig_t cfg = {};
                cfg.gridDim = dim3(p.tilesN, p.splits);
                cfg.blockDim = dim3(128);
                cfg.dynamicSmemBytes = std::max<size_t>(p.smem, (size_t)partBytes);
                cfg.stream = st;
                cudaLaunchAttribute at[1];
                at[0].id = cudaLaunchAttributeClusterDimension;
                at[0].val.clusterDim.x = 1;
                at[0].val.clusterDim.y = p.splits;
                at[0].val.clusterDim.z = 1;
                cfg.attrs = at;
                cfg.numAttrs = 1;
                const int8_t* ca = a; const int8_t* cw = w; const float* nf = nullptr; int zero = 0;
                CK(cudaLaunchKernelEx(&cfg, kernel_for(p.tile), ca, cw, o, nf, zero, nf, zero, nf, ws, m, N, K, p.ks));
            };
            const LtInt8 ltg(lt, ltWs, ltWsBytes, m, N, K);
            const bool ltOk = ltg.ok;
            auto launchLt = [&](int* o) { ltg.run(a, w, o, st); };
            // checks
            CK(cudaMemset(ws, 0, bufs.maxWs));
            OutputCheck chk(st, m, N, K);
            chk.first(ref, [&](int* o) { launchGlobal(jp, o); });
            for (const Plan& p : cl) chk.same("cluster", p.splits, out, [&](int* o) { launchCluster(p, o); });
            if (ltOk) chk.same("cuBLASLt", 0, ltOut, launchLt);
            chk.same("global again", jp.splits, out, [&](int* o) { launchGlobal(jp, o); });
            bad += chk.bad + check_sampled_sums(hA, w, chk.ref, m, N, K);
            // timing: global@plan, lt, cluster launches
            std::vector<std::function<void()>> paths = {[&] { launchGlobal(jp, out); }};
            if (ltOk) paths.push_back([&] { launchLt(ltOut); });
            const size_t nFixed = paths.size();
            for (const Plan& p : cl) paths.push_back([&, p] { launchCluster(p, out); });
            const std::vector<float> med = time_rotating(paths, pr, flushBytes, sms, REPS);
            const float glob = med[0], ltUs = ltOk ? med[1] : 0.f;
            const bool planCl = !cl.empty() && cl[0].splits == jp.splits;
            const float clPlan = planCl ? med[nFixed] : 0.f;
            size_t best = 0;
            for (size_t i = nFixed; i < paths.size(); ++i) if (med[i] < med[best]) best = i;
            std::printf("M=%-2d %6d %6d %6.1f | %6d %8.2f %8.2f %8.2f | %8.3f %8.3f |", m, K, N, floorUs, jp.splits, glob, clPlan, ltUs,
                        planCl ? clPlan / glob : 0.f, med[best] / glob);
            for (size_t i = nFixed; i < paths.size(); ++i)
                std::printf(" %d%s%.2f", cl[i - nFixed].splits, i == best ? "*" : " ", med[i]);
            std::printf("\n");
            std::fflush(stdout);
            if (planCl) logPlan.push_back(std::log(clPlan / glob));
            logBest.push_back(std::log(med[best] / glob));
        }
    auto gm = [](const std::vector<double>& v) { double s = 0; for (double x : v) s += x; return v.empty() ? 0.0 : std::exp(s / v.size()); };
    std::printf("\nsummary: cluster at the plan's splits / global, geomean over %zu shapes: %.3f; best of global and the cluster"
                " launches / global over %zu shapes: %.3f\n", logPlan.size(), gm(logPlan), logBest.size(), gm(logBest));
    std::printf("checks: %s\n", bad ? "FAILED" : "every cluster launch = cuBLASLt = the global merge bit for bit, 64 sampled sums = int64 "
                                                 "host dot products, every shape");
    return bad ? 1 : 0;
}
