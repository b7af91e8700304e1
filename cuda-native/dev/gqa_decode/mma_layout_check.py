# CPU check of split_kv_mma.cu's index bookkeeping (run: python3 mma_layout_check.py; needs numpy). It rebuilds each
# mma operand from the per-thread fragments exactly as the kernel forms them and checks S = Q·Kᵀ and O = P·V.
# Simulates split_kv_mma.cu's fragment bookkeeping for one 16-key step with numpy, using the PTX m16n8k16 layouts:
# A (row): reg0={(g,2c),(g,2c+1)} reg1={(g+8,2c),(g+8,2c+1)} reg2={(g,2c+8),(g,2c+9)} reg3={(g+8,2c+8),(g+8,2c+9)}
# B (col): b0={(k=2c,n=g),(2c+1,g)} b1={(2c+8,g),(2c+9,g)};  C: c0,c1=(g,2c),(g,2c+1) c2,c3=(g+8,2c),(g+8,2c+1)
import numpy as np
rng = np.random.default_rng(0)
for D in (64, 128):
    KK, NT, VC = D // 32, D // 8, D // 64
    Q = rng.standard_normal((16, D)); K = rng.standard_normal((16, D)); V = rng.standard_normal((16, D))
    # per-thread registers as lists of (value, value) halves
    def Afrag(lane, ks):   # thread's Q A-fragment for k-step ks, as the kernel builds it
        g, c = lane // 4, lane % 4; kk, hh = ks // 2, ks % 2
        chunk = lambda row: Q[row, (kk * 4 + c) * 8:(kk * 4 + c) * 8 + 8]
        r0, r1 = chunk(g), chunk(g + 8)
        w = lambda r, i: (r[2 * i], r[2 * i + 1])
        return [w(r0, 2 * hh), w(r1, 2 * hh), w(r0, 2 * hh + 1), w(r1, 2 * hh + 1)]
    def Bfrag_K(lane, t, ks):
        g, c = lane // 4, lane % 4; kk, hh = ks // 2, ks % 2
        row = K[8 * t + g, (kk * 4 + c) * 8:(kk * 4 + c) * 8 + 8]
        w = lambda i: (row[2 * i], row[2 * i + 1])
        return [w(2 * hh), w(2 * hh + 1)]
    def mma(Afr, Bfr):     # reconstruct matrices from fragments (checking every slot is written once), multiply
        A = np.full((16, 16), np.nan); B = np.full((16, 8), np.nan)
        for lane in range(32):
            g, c = lane // 4, lane % 4
            a = Afr(lane); b = Bfr(lane)
            for (r, k0), (x, y) in zip([(g, 2*c), (g+8, 2*c), (g, 2*c+8), (g+8, 2*c+8)], a):
                assert np.isnan(A[r, k0]) and np.isnan(A[r, k0+1]); A[r, k0], A[r, k0+1] = x, y
            for k0, (x, y) in zip([2*c, 2*c+8], b):
                assert np.isnan(B[k0, g]) and np.isnan(B[k0+1, g]); B[k0, g], B[k0+1, g] = x, y
        assert not np.isnan(A).any() and not np.isnan(B).any()
        C = A @ B
        # hand back per-thread c0..c3
        return {lane: [C[lane//4, 2*(lane%4)], C[lane//4, 2*(lane%4)+1], C[lane//4+8, 2*(lane%4)], C[lane//4+8, 2*(lane%4)+1]] for lane in range(32)}
    # S tiles
    S = {lane: [[0.0]*4, [0.0]*4] for lane in range(32)}
    for t in range(2):
        for ks in range(D // 16):
            r = mma(lambda l: Afrag(l, ks), lambda l: Bfrag_K(l, t, ks))
            for lane in range(32):
                for e in range(4): S[lane][t][e] += r[lane][e]
    Sref = Q @ K.T   # [16 heads, 16 keys]
    for lane in range(32):
        g, c = lane // 4, lane % 4
        for t in range(2):
            for e in range(4):
                row = g + (8 if e >= 2 else 0); key = 8 * t + 2 * c + (e & 1)
                assert abs(S[lane][t][e] - Sref[row, key]) < 1e-9, (D, lane, t, e)
    # P = S (use the scores themselves as "probabilities" to check the P.V mapping)
    P = Sref
    def Afrag_P(lane):
        s = S[lane]
        return [(s[0][0], s[0][1]), (s[0][2], s[0][3]), (s[1][0], s[1][1]), (s[1][2], s[1][3])]
    def Bfrag_V(lane, j):
        g, c = lane // 4, lane % 4
        rows = [V[k, g * (D // 8):(g + 1) * (D // 8)] for k in (2*c, 2*c+1, 2*c+8, 2*c+9)]  # VC chunks of 8 dims
        x, w = j // 8, (j % 8) // 2
        half = lambda r: rows[r][x * 8 + 2 * w + (j & 1)]
        return [(half(0), half(1)), (half(2), half(3))]
    O = np.zeros((16, D))
    for j in range(NT):
        r = mma(Afrag_P, lambda l: Bfrag_V(l, j))
        for lane in range(32):
            g, c = lane // 4, lane % 4
            O[g, (2*c) * (D // 8) + j] += r[lane][0]; O[g, (2*c+1) * (D // 8) + j] += r[lane][1]
            O[g+8, (2*c) * (D // 8) + j] += r[lane][2]; O[g+8, (2*c+1) * (D // 8) + j] += r[lane][3]
    assert np.allclose(O, P @ V), D
    print("D=%d: S = Q.K^T and O = P.V reproduced by the fragment mapping" % D)
