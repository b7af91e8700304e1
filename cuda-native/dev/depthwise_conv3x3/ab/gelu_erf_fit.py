#!/usr/bin/env python3
"""Feasibility of an F32 GELU_ERF without fp64 (not shipped; README.md "Next: F32 GELU_ERF without fp64").
E(x) = ½·erfc(x/√2) = e^(−x²/2) · t · G(u),  t = 1/(1 + p·x),  u = 2t − 1,  x = |v| ∈ [0, 14.5]
(beyond 14.5, v·E is below half the smallest subnormal). G is fitted here as a degree-12 polynomial in u (weighted
least squares on Chebyshev form, relative error), then evaluated the way a kernel would: Horner in fp32 down to c3,
the last three steps in double (standing in for double-float arithmetic) with u's low part. Prints the fit's and the
evaluation's worst relative error over x. Only numpy and math; fp32 fma emulated by one rounding of the double result."""
import math
import numpy as np

P = float(np.float32(0.3))  # p as the float the kernel would use
N = 12


def F(x):  # E(x)·e^(x²/2), the smooth factor
    return 0.5 * math.erfc(x / math.sqrt(2)) * math.exp(x * x / 2)


X = np.linspace(0, 14.5, 40001)
T = 1 / (1 + P * X)
G = np.array([F(x) for x in X]) / T
c = np.polynomial.chebyshev.chebfit(2 * T - 1, G, N, w=1 / G)
pw = np.polynomial.chebyshev.cheb2poly(c)
print("G(u) power coefficients:", " ".join("%.9e" % v for v in pw))
f32 = np.float32
fit_err = ev_err = 0.0
for x in np.linspace(0, 14.5, 200001)[::3]:
    t = 1 / (1 + P * x)
    u = 2 * t - 1
    g_true = F(x) / t
    fit_err = max(fit_err, abs(sum(pw[i] * u ** i for i in range(N + 1)) / g_true - 1))
    uh = f32(u)
    h = f32(pw[N])
    for i in range(N - 1, 2, -1):
        h = f32(float(h) * float(uh) + float(f32(pw[i])))
    g = pw[0] + u * (pw[1] + u * (pw[2] + float(uh) * float(h)))
    ev_err = max(ev_err, abs(g / g_true - 1))
print("fit: max relative error %.2e (2^%.1f); evaluated as above: %.2e (2^%.1f)"
      % (fit_err, math.log2(fit_err), ev_err, math.log2(ev_err)))

# constants for f32_smooth_act.cuh's gelu_erf_f32: c0..c2 as float pairs (hi, lo), c3..c12 as floats, in C++ hex-float form
print("// G(u) coefficients (ab/gelu_erf_fit.py): c0..c2 as hi + lo pairs, c3..c12 as floats")
for i in range(3):
    hi = float(np.float32(pw[i])); lo = float(np.float32(pw[i] - hi))
    print("const float C%dH = %s, C%dL = %s;" % (i, float.hex(hi) + "f", i, float.hex(lo) + "f"))
print("const float CT[10] = {" + ", ".join(float.hex(float(np.float32(pw[i]))) + "f" for i in range(3, N + 1)) + "};  // c3..c12")
print("const float P = %sf;" % float.hex(P))
