// What the skinny int8 A/B programs share (stage_ab.cu, cluster_ab.cu, wgmma_ab.cu, bulk_ab.cu): cuBLASLt int8 TN as the
// vendor peer (I32 out), the host check of sampled sums against int64 dot products, the exact check of every element
// (host_ref, fetch, compare), and the rotating-order timer (L2 flushed before every launch).
#pragma once
#include "stream_read.cuh"  // CK, first: skinny_plan.cuh uses it
#include "skinny_plan.cuh"

#include <cublasLt.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { \
    std::fprintf(stderr, "%s: status %d\n", #x, (int)s_); std::exit(2); } } while (0)

// C^T [N, M] = W [N, K] · A^T with COMPUTE_32I: column-major views of the row-major buffers (TN), the algorithm cuBLASLt's
// heuristic gives first. ok = false where it gives none.
struct LtInt8 {
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulHeuristicResult_t hr{};
    void* ws;
    size_t wsBytes;
    bool ok = false;
    LtInt8(cublasLtHandle_t h, void* workspace, size_t workspaceBytes, int m, int n, int k) : lt(h), ws(workspace), wsBytes(workspaceBytes) {
        CB(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32I, CUDA_R_32I));
        cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
        CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
        CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
        CB(cublasLtMatrixLayoutCreate(&la, CUDA_R_8I, k, n, k));
        CB(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8I, k, m, k));
        CB(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32I, n, m, n));
        cublasLtMatmulPreference_t pref;
        CB(cublasLtMatmulPreferenceCreate(&pref));
        CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof wsBytes));
        int found = 0;
        ok = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &hr, &found) == CUBLAS_STATUS_SUCCESS && found > 0;
        cublasLtMatmulPreferenceDestroy(pref);
    }
    void run(const int8_t* a, const int8_t* w, int* c, cudaStream_t st) const {
        const int alpha = 1, beta = 0;
        CB(cublasLtMatmul(lt, op, &alpha, w, la, a, lb, &beta, c, lc, c, lc, &hr.algo, ws, wsBytes, st));
    }
    ~LtInt8() {
        cublasLtMatrixLayoutDestroy(la);
        cublasLtMatrixLayoutDestroy(lb);
        cublasLtMatrixLayoutDestroy(lc);
        cublasLtMatmulDescDestroy(op);
    }
};

// The I32 output checks of one shape: ref is the first launch's output; every later launch (poisoned first) must equal
// it bit for bit. bad counts the mismatches (each printed).
struct OutputCheck {
    cudaStream_t st;
    int m, n, k;
    std::vector<int> ref, got;
    int bad = 0;
    OutputCheck(cudaStream_t stream, int m_, int n_, int k_) : st(stream), m(m_), n(n_), k(k_), ref((size_t)m_ * n_), got((size_t)m_ * n_) {}
    size_t bytes() const { return (size_t)m * n * 4; }
    void fetch(int* dev, std::vector<int>& dst) {
        CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
        CK(cudaMemcpy(dst.data(), dev, bytes(), cudaMemcpyDeviceToHost));
    }
    template <typename Launch> void first(int* dev, Launch launch) {  // the reference launch
        CK(cudaMemset(dev, 0xff, bytes())); launch(dev); fetch(dev, ref);
    }
    template <typename Launch> void same(const char* what, int splits, int* dev, Launch launch) {
        CK(cudaMemset(dev, 0xff, bytes())); launch(dev); fetch(dev, got);
        if (std::memcmp(got.data(), ref.data(), bytes()) != 0) {
            ++bad;
            std::printf("MISMATCH %s M=%d K=%d N=%d splits=%d\n", what, m, k, n, splits);
        }
    }
};

// 64 sampled elements of ref [m, n] against int64 dot products of the host copy of A and rows of W read back; the count
// of mismatches (each printed).
inline int check_sampled_sums(const std::vector<int8_t>& hA, const int8_t* w, const std::vector<int>& ref, int m, int n, int k) {
    int bad = 0;
    std::vector<int8_t> wrow(k);
    for (int s = 0; s < 64; ++s) {
        const int mi = (s * 7) % m, ni = (int)(((long long)s * 2654435761u) % n);
        CK(cudaMemcpy(wrow.data(), w + (size_t)ni * k, k, cudaMemcpyDeviceToHost));
        long long sum = 0;
        for (int kk = 0; kk < k; ++kk) sum += (long long)hA[(size_t)mi * k + kk] * wrow[kk];
        if (sum != ref[(size_t)mi * n + ni]) {
            ++bad;
            std::printf("MISMATCH host dot M=%d K=%d N=%d [%d,%d]: %lld vs %d\n", m, k, n, mi, ni, sum, ref[(size_t)mi * n + ni]);
        }
    }
    return bad;
}

// Medians (µs) of reps launches of every path, in an order rotating by one each round (2 untimed rounds first), the L2
// flushed by pr's read before every launch.
inline std::vector<float> time_rotating(const std::vector<std::function<void()>>& paths, const Probe& pr, size_t flushBytes, int sms,
                                        int reps) {
    std::vector<cudaEvent_t> ev(2 * paths.size());
    for (auto& e : ev) CK(cudaEventCreate(&e));
    std::vector<std::vector<float>> t(paths.size());
    for (int r = -2; r < reps; ++r) {
        for (size_t j = 0; j < paths.size(); ++j) {
            const size_t i = (j + (size_t)(r + 2)) % paths.size();
            stream_read<0><<<4 * sms, 512, 0, pr.st>>>((const uint4*)pr.flush, (long long)(flushBytes / 16), pr.sink);
            CK(cudaEventRecord(ev[2 * i], pr.st)); paths[i](); CK(cudaEventRecord(ev[2 * i + 1], pr.st));
        }
        CK(cudaStreamSynchronize(pr.st)); CK(cudaGetLastError());
        if (r >= 0)
            for (size_t i = 0; i < paths.size(); ++i) {
                float ms; CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1])); t[i].push_back(ms * 1000.f);
            }
    }
    for (auto& e : ev) CK(cudaEventDestroy(e));
    std::vector<float> med(paths.size());
    for (size_t i = 0; i < paths.size(); ++i) { std::sort(t[i].begin(), t[i].end()); med[i] = t[i][t[i].size() / 2]; }
    return med;
}

// int64 host sums of the first mMax token rows against W [n, k] (host copy), all host threads.
inline void host_ref(const std::vector<int8_t>& hA, const std::vector<int8_t>& hW, int mMax, int n, int k, std::vector<long long>& ref) {
    ref.assign((size_t)mMax * n, 0);
    const int nth = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
    std::vector<std::thread> th;
    for (int tI = 0; tI < nth; ++tI)
        th.emplace_back([&, tI] {
            for (int nn = tI; nn < n; nn += nth) {
                const int8_t* wr = hW.data() + (size_t)nn * k;
                for (int mm = 0; mm < mMax; ++mm) {
                    const int8_t* ar = hA.data() + (size_t)mm * k;
                    long long s = 0;
                    for (int k0 = 0; k0 < k; k0 += 4096) {  // int32 inner sums (|.| <= 2^26), int64 outer
                        const int k1 = std::min(k, k0 + 4096);
                        int acc = 0;
                        for (int kk = k0; kk < k1; ++kk) acc += (int)ar[kk] * (int)wr[kk];
                        s += acc;
                    }
                    ref[(size_t)mm * n + nn] = s;
                }
            }
        });
    for (auto& x : th) x.join();
}
inline std::vector<int> fetch(const int* dev, size_t count, cudaStream_t st) {
    CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
    std::vector<int> h(count);
    CK(cudaMemcpy(h.data(), dev, count * 4, cudaMemcpyDeviceToHost));
    return h;
}
// Mismatches of got [m, n] against the int64 sums (ref rows of n) and, when lt != nullptr, against cuBLASLt's output.
inline long compare(const char* what, const std::vector<int>& got, const std::vector<long long>& ref, const std::vector<int>* lt, int m,
                    int n, int k) {
    long badRef = 0, badLt = 0;
    for (int mm = 0; mm < m; ++mm)
        for (int nn = 0; nn < n; ++nn) {
            const size_t i = (size_t)mm * n + nn;
            if ((long long)got[i] != ref[i]) {
                if (badRef < 3) std::printf("  %s M=%d K=%d N=%d [%d,%d]: %d, int64 sum %lld\n", what, m, k, n, mm, nn, got[i], ref[i]);
                ++badRef;
            }
            if (lt && got[i] != (*lt)[i]) ++badLt;
        }
    if (badRef || badLt)
        std::printf("FAIL %s M=%d K=%d N=%d: %ld mismatches vs int64 host sums, %ld vs cuBLASLt (of %lld)\n", what, m, k, n, badRef, badLt,
                    (long long)m * n);
    return badRef + badLt;
}
