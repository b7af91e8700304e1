// Host helpers shared by fastact_check.cpp and main_fastact.cu: the reference's smooth activations in fp64
// (DepthwiseConv3x3Reference.activate, with libm's erfc) and one correct rounding of a double to F16 or BF16.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdlib>

// act: 3 SILU, 4 GELU_ERF, 5 GELU_TANH (anything else: the identity), from the fp32 pre-activation.
inline double exact_act(float vf, int act) {
    const double d = vf;
    if (act == 3) return d / (1.0 + std::exp(-d));
    if (act == 4) return 0.5 * d * std::erfc(-d * 0.70710678118654752440);
    if (act == 5) {
        const double t = 0.79788456080286535588 * std::fma(0.044715 * d, d * d, d);
        return d / (1.0 + std::exp(-2.0 * t));
    }
    return d;
}

// d rounded once to nearest even: F16 (bf16 = false: 11-bit significand, normal from 2^-14, subnormal
// spacing 2^-24, ≥ 65520 → inf) or BF16 (8-bit significand, normal from 2^-126, spacing 2^-133 below).
// Scaling by powers of two is exact in double and nearbyint rounds once (ties to even).
inline uint16_t round16(double d, bool bf16) {
    const int p = bf16 ? 8 : 11, emin = bf16 ? -126 : -14, emax = bf16 ? 127 : 15, ebits = bf16 ? 8 : 5;
    const uint16_t sign = std::signbit(d) ? 0x8000 : 0, inf = (uint16_t)(((1 << ebits) - 1) << (p - 1));
    if (std::isnan(d)) return (uint16_t)(inf | (1 << (p - 2)));
    const double a = std::fabs(d);
    if (a < std::ldexp(1.0, emin)) return (uint16_t)(sign | (uint16_t)std::nearbyint(std::ldexp(a, p - 1 - emin)));
    int e = std::ilogb(a);
    double m = std::nearbyint(std::ldexp(a, p - 1 - e));  // [2^(p-1), 2^p]
    if (m == std::ldexp(1.0, p)) { m /= 2; ++e; }
    if (e > emax) return (uint16_t)(sign | inf);
    return (uint16_t)(sign | ((e - emin + 1) << (p - 1)) | ((uint32_t)m - (1u << (p - 1))));
}

// Distance of two encodings on the ordered line (−0 and +0 are one point), as Verifier.ulpDistance.
inline long ulp16(uint16_t a, uint16_t b) {
    auto ord = [](uint16_t u) { return (u & 0x8000) ? -(long)(u & 0x7fff) : (long)u; };
    return std::labs(ord(a) - ord(b));
}
inline bool isnan16(uint16_t u, bool bf16) { return bf16 ? (u & 0x7fff) > 0x7f80 : (u & 0x7fff) > 0x7c00; }
