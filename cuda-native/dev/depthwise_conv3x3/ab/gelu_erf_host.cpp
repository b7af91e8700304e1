// Host check of the gelu_erf_df.cuh prototype against the fp64 form (0.5·v·erfc(−v/√2), rounded once), every
// step-th fp32 bit pattern: g++ -O2 -ffp-contract=off -std=c++17 -I . -I ../../../src/main/cuda/common gelu_erf_host.cpp
#define GAPFILL_F32ACT_HOST
#include "gelu_erf_df.cuh"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
using namespace gapfill::f32act;
static float ref(float vf) { double v = vf; return (float)((0.5 * v) * std::erfc(-v * 0.70710678118654752440)); }
static long long ulpdiff(float a, float b) {
    if (std::isnan(a) && std::isnan(b)) return 0;
    int32_t ia, ib; memcpy(&ia, &a, 4); memcpy(&ib, &b, 4);
    long long la = ia < 0 ? (long long)INT32_MIN - ia : ia, lb = ib < 0 ? (long long)INT32_MIN - ib : ib;
    return la > lb ? la - lb : lb - la;
}
int main(int argc, char** argv) {
    const unsigned step = argc > 1 ? (unsigned)atoi(argv[1]) : 1009;
    long long n = 0, d0 = 0, d1 = 0, dbig = 0, maxd = 0; float worst = 0;
    for (uint64_t b = 0; b < (1ull << 32); b += step) {
        uint32_t u = (uint32_t)b; float v; memcpy(&v, &u, 4);
        if (!std::isfinite(v)) continue;
        const long long d = ulpdiff(gelu_erf_f32(v), ref(v));
        ++n; if (d == 0) ++d0; else if (d == 1) ++d1; else ++dbig;
        if (d > maxd) { maxd = d; worst = v; }
    }
    printf("gelu_erf: %lld inputs, exact %lld, 1 ulp %lld, >1 ulp %lld, max %lld ulp at v=%.9g\n", n, d0, d1, dbig, maxd, worst);
    return dbig != 0;
}
