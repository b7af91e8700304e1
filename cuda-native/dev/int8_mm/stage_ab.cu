// A/B of the skinny int8 kernel's A staging (twenty-sixth session): the tree's skinny_mma.cu against another revision
// of it (skinny_mma_alt.cu, generated from git by run_stage_ab.sh with its symbols prefixed alt_; by default 2b69676,
// which staged A's slice with cp.async, every chunk in flight at once, instead of the tree's load -> store loop through
// registers), with cuBLASLt int8 TN (COMPUTE_32I, I32 out) timed beside them.
// Result (H100, h100-2b69676-stage-ab.txt, run with the roles reversed: the tree was 2b69676 and the alternative
// 1a6b21f): cp.async staging took 1.027x the time in geometric mean over 42 shapes (0.98-1.10x), bit-identical
// outputs. The register copy stays; the staging was not what limits M >= 16.
//
// Plans: Int8MmHeuristics.skinnyPlan as the Java code has it now (the wave cost model, mirrored in java_plan below,
// resident CTAs from the occupancy API), and for the tree's kernel every distinct split count 1..32 that fits, so a
// changed best count shows.
// Checks before timing, per shape: outputs poisoned; tree@plan and alt@plan bit-identical; cuBLASLt's sums equal to
// tree@plan's; every forced split count of the tree's kernel equal to tree@plan; 64 sampled elements against int64 dot
// products on the host. Any mismatch fails the run (exit 1).
// Timing: L2 flushed by a read of 4x its size before every launch, paths interleaved in rotating order, CUDA events,
// medians of REPS (default 25).
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I../../src/main/cuda/common -I../timing \
//        stage_ab.cu skinny_mma_alt.cu -lcublasLt -o /tmp/i8_stage_ab
#include "../../src/main/cuda/int8_mm/skinny_mma.cu"
#include "stream_read.cuh"
#include "skinny_plan.cuh"

#include <cublasLt.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

typedef void (*Kernel)(const int8_t*, const int8_t*, int*, const float*, int, const float*, int, const float*, int*, int, int,
                       int, int);
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
static Kernel tree_kernel(int tile) {
    return tile == 8 ? int8_mm_skinny_m8_i32 : tile == 16 ? int8_mm_skinny_m16_i32 : tile == 32 ? int8_mm_skinny_m32_i32
                                                                                                : int8_mm_skinny_m64_i32;
}
static Kernel alt_kernel(int tile) {
    return tile == 8 ? alt_int8_mm_skinny_m8_i32 : tile == 16 ? alt_int8_mm_skinny_m16_i32
                     : tile == 32 ? alt_int8_mm_skinny_m32_i32 : alt_int8_mm_skinny_m64_i32;
}

// Int8MmHeuristics.skinnyPlan (cost = waves × (ks + 256) + merge(tile) × (splits − 1), smem budget 32 / 72 KiB).
static Plan java_plan(int m, int n, int k, int sms) {
    Plan p{};
    p.tile = m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : 64;
    p.bn = p.tile == 8 ? 64 : 128;
    p.step = p.tile == 8 ? 256 : 128;
    p.tilesN = (n + p.bn - 1) / p.bn;
    const long budget = m <= 8 ? 32 * 1024 : 72 * 1024;
    const long ksMax = std::max((long)p.step, (budget / m - 64) / p.step * p.step);
    const long kSteps = (k + p.step - 1) / p.step;
    const long sMin = std::min(kSteps, (k + ksMax - 1) / ksMax);
    const long sMax = std::min(kSteps, sMin + 32);
    long best = -1, bestSplits = sMin, bestKs = 0, last = -1;
    const long merge = p.tile == 8 ? 128 : 72;
    for (long s = sMin; s <= sMax; ++s) {
        const long ksS = ((k + s - 1) / s + p.step - 1) / p.step * p.step;
        const long sp = (k + ksS - 1) / ksS;
        if (sp == last) continue;
        last = sp;
        int bps = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, tree_kernel(p.tile), 128, (size_t)m * (ksS + 64)));
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

#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { \
    std::fprintf(stderr, "%s: status %d\n", #x, (int)s_); std::exit(2); } } while (0)

int main() {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    const char* repsEnv = std::getenv("REPS");
    const int REPS = repsEnv ? std::atoi(repsEnv) : 25;
    const size_t flushBytes = 4 * (size_t)prop.l2CacheSize;
    const Probe pr = probe_setup(16, flushBytes);
    cudaStream_t st = pr.st;
    for (int tile : {8, 16, 32, 64}) {
        CK(cudaFuncSetAttribute((const void*)tree_kernel(tile), cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
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
    std::vector<cudaEvent_t> ev(2 * 64);
    for (auto& e : ev) CK(cudaEventCreate(&e));
    std::printf("%-4s %6s %6s %6s | %-6s %8s %8s %8s | %7s %7s | %s\n", "M", "K", "N", "floor", "splits", "alt", "tree", "lt",
                "tree/alt", "lt/tree", "tree kernel at forced splits: splits us (best *)");
    for (auto& sh : shapes)
        for (int m : ms) {
            const int K = sh[0], N = sh[1];
            const double floorUs = ((double)K * N + (double)m * K + (double)m * N * 4) / 3.0e6;
            const Plan jp = java_plan(m, N, K, sms);
            std::vector<Plan> forced;
            int last = -1;
            for (int s = 1; s <= 32; ++s) {
                Plan p = plan(m, N, K, sms, s);
                if (p.splits == last || p.smem > 200 * 1024 || p.ws > bufs.maxWs) continue;
                last = p.splits;
                if (p.splits != jp.splits) forced.push_back(p);
            }
            auto launchTree = [&](const Plan& p, int* o) {
                tree_kernel(p.tile)<<<dim3(p.tilesN, p.splits), 128, p.smem, st>>>(a, w, o, nullptr, 0, nullptr, 0, nullptr, ws, m,
                                                                                  N, K, p.ks);
            };
            auto launchAlt = [&](const Plan& p, int* o) {
                alt_kernel(p.tile)<<<dim3(p.tilesN, p.splits), 128, p.smem, st>>>(a, w, o, nullptr, 0, nullptr, 0, nullptr, ws, m,
                                                                                   N, K, p.ks);
            };
            // cuBLASLt: C^T [N, M] = W [N, K] · A^T, all column-major views of the row-major buffers (TN).
            cublasLtMatmulDesc_t op; cublasLtMatrixLayout_t la, lb, lc;
            CB(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32I, CUDA_R_32I));
            cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
            CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
            CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
            CB(cublasLtMatrixLayoutCreate(&la, CUDA_R_8I, K, N, K));
            CB(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8I, K, m, K));
            CB(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32I, N, m, N));
            cublasLtMatmulPreference_t pref; CB(cublasLtMatmulPreferenceCreate(&pref));
            CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ltWsBytes, sizeof ltWsBytes));
            cublasLtMatmulHeuristicResult_t hr{}; int found = 0;
            const bool ltOk = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &hr, &found) == CUBLAS_STATUS_SUCCESS &&
                              found > 0;
            cublasLtMatmulPreferenceDestroy(pref);
            const int alpha = 1, beta = 0;
            auto launchLt = [&](int* o) {
                CB(cublasLtMatmul(lt, op, &alpha, w, la, a, lb, &beta, o, lc, o, lc, &hr.algo, ltWs, ltWsBytes, st));
            };

            // checks
            const size_t ob = (size_t)m * N * 4;
            std::vector<int> hRef((size_t)m * N), hOut((size_t)m * N);
            CK(cudaMemset(ws, 0, bufs.maxWs));
            auto fetch = [&](int* src, std::vector<int>& dst) {
                CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
                CK(cudaMemcpy(dst.data(), src, ob, cudaMemcpyDeviceToHost));
            };
            CK(cudaMemset(ref, 0xff, ob)); launchTree(jp, ref); fetch(ref, hRef);
            auto same = [&](const char* what, int splits) {
                if (std::memcmp(hOut.data(), hRef.data(), ob) != 0) {
                    ++bad;
                    std::printf("MISMATCH %s M=%d K=%d N=%d splits=%d\n", what, m, K, N, splits);
                }
            };
            CK(cudaMemset(out, 0xff, ob)); launchAlt(jp, out); fetch(out, hOut); same("alt@plan", jp.splits);
            CK(cudaMemset(out, 0xff, ob)); launchTree(jp, out); fetch(out, hOut); same("tree@plan again", jp.splits);
            if (ltOk) { CK(cudaMemset(ltOut, 0xff, ob)); launchLt(ltOut); fetch(ltOut, hOut); same("cuBLASLt", 0); }
            for (const Plan& p : forced) { CK(cudaMemset(out, 0xff, ob)); launchTree(p, out); fetch(out, hOut); same("tree@forced", p.splits); }
            {
                std::vector<int8_t> wrow(K);
                for (int s = 0; s < 64; ++s) {
                    const int mi = (s * 7) % m, ni = (int)(((long long)s * 2654435761u) % N);
                    CK(cudaMemcpy(wrow.data(), w + (size_t)ni * K, K, cudaMemcpyDeviceToHost));
                    long long sum = 0;
                    for (int k = 0; k < K; ++k) sum += (long long)hA[(size_t)mi * K + k] * wrow[k];
                    if (sum != hRef[(size_t)mi * N + ni]) {
                        ++bad;
                        std::printf("MISMATCH host dot M=%d K=%d N=%d [%d,%d]: %lld vs %d\n", m, K, N, mi, ni, sum, hRef[(size_t)mi * N + ni]);
                    }
                }
            }

            // timing: alt@plan, tree@plan, lt, tree@forced..., rotating order
            std::vector<std::function<void()>> paths = {[&] { launchAlt(jp, out); }, [&] { launchTree(jp, out); }};
            if (ltOk) paths.push_back([&] { launchLt(ltOut); });
            const size_t nFixed = paths.size();
            for (const Plan& p : forced) paths.push_back([&, p] { launchTree(p, out); });
            std::vector<std::vector<float>> t(paths.size());
            for (int r = -2; r < REPS; ++r) {
                for (size_t j = 0; j < paths.size(); ++j) {
                    const size_t i = (j + (size_t)(r + 2)) % paths.size();
                    stream_read<0><<<4 * sms, 512, 0, st>>>((const uint4*)pr.flush, (long long)(flushBytes / 16), pr.sink);
                    CK(cudaEventRecord(ev[2 * i], st)); paths[i](); CK(cudaEventRecord(ev[2 * i + 1], st));
                }
                CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
                if (r >= 0)
                    for (size_t i = 0; i < paths.size(); ++i) {
                        float ms; CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1])); t[i].push_back(ms * 1000.f);
                    }
            }
            std::vector<float> med(paths.size());
            for (size_t i = 0; i < paths.size(); ++i) { std::sort(t[i].begin(), t[i].end()); med[i] = t[i][t[i].size() / 2]; }
            const float altUs = med[0], treeUs = med[1], ltUs = ltOk ? med[2] : 0.f;
            size_t best = 1;
            for (size_t i = nFixed; i < paths.size(); ++i) if (med[i] < med[best]) best = i;
            std::printf("M=%-2d %6d %6d %6.1f | %6d %8.2f %8.2f %8.2f | %7.3f %7.3f |", m, K, N, floorUs, jp.splits, altUs, treeUs, ltUs,
                        treeUs / altUs, ltOk ? ltUs / treeUs : 0.f);
            for (size_t i = nFixed; i < paths.size(); ++i)
                std::printf(" %d%s%.2f", forced[i - nFixed].splits, i == best ? "*" : " ", med[i]);
            std::printf(" | best %d %.2f\n", best == 1 ? jp.splits : forced[best - nFixed].splits, med[best]);
            std::fflush(stdout);
            cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(lc);
            cublasLtMatmulDescDestroy(op);
        }
    std::printf("checks: %s\n", bad ? "FAILED" : "tree = alt = cuBLASLt bit for bit at the plan, every forced split count = the plan, "
                                                 "64 sampled sums = int64 host dot products, every shape");
    return bad ? 1 : 0;
}
