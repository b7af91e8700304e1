# The GELU_ERF fit of src/main/cuda/common/fast_smooth_act.cuh (was ab/dwconv_fastact.cuh) (README "Cheaper smooth activations"): with s = |v|, x = s/√2,
# t = 1/(1 + q·s), the exact half-erfc is ½·erfc(x) = t·2^(2h), h = −s²·log2(e)/4 + p(t),
# p(t) = ½·log2(½·erfc(x)·e^(x²)·(1 + q·s)), smooth on t ∈ [0, 1] (t → 0: p → ½·log2(q/√(2π))).
# P is the degree-7 minimax polynomial of p (linear program on 1500 Chebyshev nodes), its coefficients rounded to
# fp32 one at a time from the top, the lower ones refitted after each; q (an fp32 value) minimises the error.
# Prints q, the coefficients, the max |P − p| on 20 001 points and the two constants of the README's bound.
# Needs numpy, scipy, mpmath (about a minute):  python3 fastact_fit.py
import mpmath as mp
import numpy as np
from scipy.optimize import linprog

mp.mp.dps = 40
f32 = lambda x: float(np.float32(x))

def p_exact(t, q):
    if t == 0:
        return float(mp.log(q / mp.sqrt(2 * mp.pi), 2) / 2)
    s = (1 / mp.mpf(t) - 1) / q
    x = s / mp.sqrt(2)
    return float(mp.log(mp.erfc(x) * mp.exp(x * x) * (1 + q * s) / 2, 2) / 2)

def fit(q, n=7, N=1500, fixed=()):
    ts = 0.5 * (1 - np.cos(np.linspace(0, np.pi, N)))
    y = np.array([p_exact(t, q) for t in ts]) - sum(c * ts ** k for k, c in fixed)
    free = [k for k in range(n + 1) if k not in dict(fixed)]
    V = np.stack([ts ** k for k in free], 1)
    A = np.vstack([np.hstack([V, -np.ones((N, 1))]), np.hstack([-V, -np.ones((N, 1))])])
    r = linprog(np.r_[np.zeros(len(free)), 1], A_ub=A, b_ub=np.r_[y, -y], bounds=[(None, None)] * len(free) + [(0, None)],
                method='highs')
    return dict(zip(free, r.x[:-1])), r.x[-1]

q = f32(0.36875914634423684)  # argmin over q of fit(q)[1] (bounded scalar search on [0.34, 0.39])
fixed = []
for k in range(7, -1, -1):
    fixed.append((k, f32(fit(q, fixed=tuple(fixed))[0][k])))
c = dict(fixed)
P = lambda t: sum(c[k] * t ** k for k in range(8))
ts = np.linspace(0, 1, 20001)
print('q = %r' % q)
for k in range(8):
    print('c%d = %r' % (k, c[k]))
print('max |P - p| = %.3e' % max(abs(P(t) - p_exact(t, q)) for t in ts))
dP = lambda t: sum(k * c[k] * t ** (k - 1) for k in range(1, 8))
print('max |1 + 2 ln2 t P\'(t)| = %.3f' % max(abs(1 + 2 * np.log(2) * t * dP(t)) for t in ts))
horner = []
for t in ts[::10]:
    r = [0.0] * 8
    r[7] = c[7]
    for k in range(6, -1, -1):
        r[k] = r[k + 1] * t + c[k]
    horner.append(sum(abs(r[k]) * t ** k for k in range(7)))
print('Horner rounding bound: %.2f u (u = 2^-24)' % max(horner))
