#!/usr/bin/env python3
# Host emulation of the stride-2 ring kernel's index arithmetic (ring_s2.patch: nhwc_ring.cu's dw_ring_s2), written
# before any GPU ran it (twenty-eighth session): the tile and strip walk, the chunk -> (pixel, channel) copy mapping of
# the vector path, the thread -> (channels, output columns) mapping, the p = 0 / 1 / 2 order of the input rows and the
# stores, against a direct stride-2 convolution with zero padding 1, in float64 (the order of the fp32 sums is
# checked on the GPU, not here). Shapes with odd and even H and W, one and several channel chunks, strips of 1 row to
# all rows, 16-byte copies of 8 (F16/BF16) and 4 (F32) channels. Prints "ok". Needs numpy.
import numpy as np, itertools, random
def ring_s2(x, w, b, CPT, WC, cgs, tws, colTiles, chunks, strips, rps, EPC):
    N,H,W,C = x.shape; Ho=(H+1)//2; Wo=(W+1)//2
    y = np.full((N,Ho,Wo,C), np.nan)
    TC=cgs*CPT; KP=2*tws*WC+1; KC=2*WC+1
    for n, s_, chk, ct in itertools.product(range(N), range(strips), range(chunks), range(colTiles)):
        i0=s_*rps
        if i0>=Ho: continue  # kernel: nin = 2*min(rps,Ho-i0)+1 would be <=0 -> loop not run
        nin=2*min(rps,Ho-i0)+1
        pxBase=2*ct*tws*WC-1; cBase=chk*TC
        # build slots per input row via the copy mapping (vec)
        cpp=TC//EPC
        def row_tile(r):
            row=2*i0-1+r; t=np.zeros((KP,TC))
            for i in range(KP*cpp):
                k=i//cpp; ch=cBase+(i%cpp)*EPC; col=pxBase+k
                ok= 0<=col<W and ch<C and 0<=row<H
                for e in range(EPC):
                    if ok and ch+e < C: t[k,(i%cpp)*EPC+e]=x[n,row,col,ch+e]
                    # (kernel copies 16 bytes: channels past C inside the chunk are read from memory; C%EPC==0 avoids)
            return t
        tiles=[row_tile(r) for r in range(nin)]
        for tid in range(cgs*tws):
            cg=tid%cgs; jg=tid//cgs
            c0=cBase+cg*CPT; nch=min(CPT,C-c0); jt=ct*tws*WC+jg*WC
            ncol=max(0,min(WC,Wo-jt)) if nch>0 else 0
            A=np.zeros((WC,CPT)); orow=i0
            for k in range(nin):
                t=tiles[k]; inp=np.array([[t[jg*2*WC+kk, cg*CPT+e] for e in range(CPT)] for kk in range(KC)])
                def acc(p, A, fresh):
                    for kk in range(WC):
                        for e in range(CPT):
                            a=0.0 if fresh else A[kk,e]
                            for q in range(3):
                                ww = w[c0+e,p,q] if e<nch else 0.0
                                a=a+ww*inp[2*kk+q,e]
                            A[kk,e]=a
                if k&1: acc(1,A,False)
                else:
                    if k>=2:
                        acc(2,A,False)
                        for kk in range(ncol):
                            for e in range(nch):
                                y[n,orow,jt+kk,c0+e]=A[kk,e]+b[c0+e]
                        orow+=1
                    if k+1<nin: acc(0,A,True)
    return y
def ref(x,w,b):
    N,H,W,C=x.shape; Ho=(H+1)//2; Wo=(W+1)//2
    xp=np.zeros((N,H+2,W+2,C)); xp[:,1:H+1,1:W+1,:]=x
    y=np.zeros((N,Ho,Wo,C))
    for i in range(Ho):
        for j in range(Wo):
            for p in range(3):
                for q in range(3):
                    y[:,i,j,:]+=w[:,p,q]*xp[:,2*i+p,2*j+q,:]
    return y+b
random.seed(1)
for (N,H,W,C) in [(1,1,1,8),(2,2,3,16),(1,19,23,16),(2,8,8,136),(1,7,30,8),(1,56,9,24)]:
    for EPC in (8,4):
        if C%EPC: continue
        CPT,WC=2,4
        groups=(C+CPT-1)//CPT; cgs=min(groups,64); chunks=(groups+cgs-1)//cgs
        Wo=(W+1)//2; Ho=(H+1)//2
        tws=max(1,min(256//cgs,(Wo+WC-1)//WC)); colTiles=(Wo+tws*WC-1)//(tws*WC)
        for rps in (1,2,3,Ho):
            strips=(Ho+rps-1)//rps
            x=np.random.randn(N,H,W,C); w=np.random.randn(C,3,3); b=np.random.randn(C)
            y=ring_s2(x,w,b,CPT,WC,cgs,tws,colTiles,chunks,strips,rps,EPC)
            r=ref(x,w,b)
            assert not np.isnan(y).any(), (N,H,W,C,EPC,rps,'unwritten')
            assert np.allclose(y,r), (N,H,W,C,EPC,rps, np.abs(y-r).max())
print("ok")
