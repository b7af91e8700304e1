// Does compute-sanitizer's initcheck see the stores of cuBLAS's GEMMs on this GPU?
//
// The gqa vendor composition (GqaDecodePlan.runVendor) writes its score buffer with cublasGemmStridedBatchedEx and
// then reads it with cuDNN's softmax; initcheck reported those reads as uninitialised. Each case below writes a
// freshly allocated buffer one way, then reads every element with a plain kernel and checks the values on the host,
// so a report in read_all can only mean the tool did not record the writer's stores.
//
//   nvcc -std=c++17 -O2 -arch=sm_90 -o initcheck_cublas initcheck_cublas.cu -lcublas
//   for c in plain gqa_scores f16 int8 gqa_scores_memset; do
//     compute-sanitizer --tool initcheck --print-limit 2 ./initcheck_cublas $c; done
//
// Cases: plain (a kernel of ours writes: the control, expect 0 errors), gqa_scores (the score GEMM of the gqa vendor
// path: bf16 K and q, fp32 out, m = 2048, n = 4, k = 128, batch 8), f16 (a 256³ F16 GEMM with F16 output, as bmm's
// and groupedGemm's vendor paths run), int8 (int8 TN GEMM with I32 output at M = 16, N = K = 4096, int8Mm's shape),
// gqa_scores_memset (as gqa_scores, with the buffer zeroed first: the mend in GqaDecodePlan, expect 0 errors).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); std::exit(2); } } while (0)
#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { \
    std::fprintf(stderr, "%s: cublas status %d\n", #x, (int)s_); std::exit(2); } } while (0)

// Reads every 4-byte word and adds them up as integers (order-independent, so the host can check it).
__global__ void read_all(const unsigned* p, size_t words, unsigned long long* sum) {
    unsigned long long acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x) {
        acc += p[i];
    }
    atomicAdd(sum, acc);
}

__global__ void write_all(unsigned* p, size_t words) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x) {
        p[i] = (unsigned)(i * 2654435761u);
    }
}

template <typename T> static T* upload(const std::vector<T>& h) {
    T* d = nullptr;
    CK(cudaMalloc(&d, h.size() * sizeof(T)));
    CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

int main(int argc, char** argv) {
    const char* c = argc > 1 ? argv[1] : "gqa_scores";
    cublasHandle_t h;
    CB(cublasCreate(&h));
    void* out = nullptr;
    size_t bytes = 0;
    std::srand(7);
    auto rnd = [] { return (float)(std::rand() % 2001 - 1000) / 1000.0f; };
    if (!std::strcmp(c, "plain")) {
        bytes = 1u << 20;
        CK(cudaMalloc(&out, bytes));
        write_all<<<64, 256>>>((unsigned*)out, bytes / 4);
    } else if (!std::strncmp(c, "gqa_scores", 10)) {
        const int len = 2048, g = 4, d = 128, batch = 8;
        std::vector<__nv_bfloat16> k((size_t)batch * len * d), q((size_t)batch * g * d);
        for (auto& x : k) x = __float2bfloat16(rnd());
        for (auto& x : q) x = __float2bfloat16(rnd());
        __nv_bfloat16* dk = upload(k);
        __nv_bfloat16* dq = upload(q);
        bytes = (size_t)batch * g * len * 4;
        CK(cudaMalloc(&out, bytes));
        if (!std::strcmp(c, "gqa_scores_memset")) CK(cudaMemset(out, 0, bytes));
        float alpha = 0.088f, beta = 0.f;
        CB(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, len, g, d, &alpha, dk, CUDA_R_16BF, d, (long long)len * d,
                                      dq, CUDA_R_16BF, d, (long long)g * d, &beta, out, CUDA_R_32F, len, (long long)g * len,
                                      batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else if (!std::strcmp(c, "f16")) {
        const int n = 256;
        std::vector<__half> a((size_t)n * n), b((size_t)n * n);
        for (auto& x : a) x = __float2half(rnd());
        for (auto& x : b) x = __float2half(rnd());
        __half* da = upload(a);
        __half* db = upload(b);
        bytes = (size_t)n * n * 2;
        CK(cudaMalloc(&out, bytes));
        float alpha = 1.f, beta = 0.f;
        CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, da, CUDA_R_16F, n, db, CUDA_R_16F, n, &beta, out,
                        CUDA_R_16F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else if (!std::strcmp(c, "int8")) {
        const int m = 16, n = 4096, k = 4096;
        std::vector<signed char> a((size_t)m * k), w((size_t)n * k);
        for (auto& x : a) x = (signed char)(std::rand() % 255 - 127);
        for (auto& x : w) x = (signed char)(std::rand() % 255 - 127);
        signed char* da = upload(a);
        signed char* dw = upload(w);
        bytes = (size_t)m * n * 4;
        CK(cudaMalloc(&out, bytes));
        int alpha = 1, beta = 0;
        // column-major C (n × m) = Wᵀ(op T of the K-contiguous [n, k]) · A: acc[m, n] row-major.
        CB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, dw, CUDA_R_8I, k, da, CUDA_R_8I, k, &beta, out,
                        CUDA_R_32I, n, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
    } else {
        std::fprintf(stderr, "unknown case %s\n", c);
        return 2;
    }
    unsigned long long* dsum = nullptr;
    CK(cudaMalloc(&dsum, sizeof(unsigned long long)));
    CK(cudaMemset(dsum, 0, sizeof(unsigned long long)));
    read_all<<<64, 256>>>((const unsigned*)out, bytes / 4, dsum);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned> host(bytes / 4);
    CK(cudaMemcpy(host.data(), out, bytes, cudaMemcpyDeviceToHost));
    unsigned long long want = 0, got = 0;
    size_t nonzero = 0;
    for (unsigned x : host) { want += x; nonzero += x != 0; }
    CK(cudaMemcpy(&got, dsum, sizeof got, cudaMemcpyDeviceToHost));
    std::printf("case %s: %zu bytes, %zu of %zu words non-zero, device sum %s host sum\n", c, bytes, nonzero, host.size(),
                got == want ? "==" : "!=");
    cublasDestroy(h);
    return got == want && nonzero > host.size() / 2 ? 0 : 1;
}
