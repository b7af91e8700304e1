# Lane-level emulation of frag_ab.cu's fab_kernel (NN), CPU only: each lane's loads, movmatrix.trans (lane (g, t) holds
# row g, columns 2t, 2t+1 before and after), the mma.m16n8k16 row.col fragment layouts of the PTX ISA, and the stores;
# integer data, so C must equal A @ B exactly. Run: python3 cuda-native/dev/bmm/frag_ab_emu.py  (needs numpy).
import numpy as np, itertools
def run(m,n,k,S,WM,WN,KP):
    rng=np.random.default_rng(m*1000+n*10+k)
    A=rng.integers(-4,5,(m,k)); B=rng.integers(-4,5,(k,n)); C=np.full((m,n),-999)
    KS=S//16; MT=S//16//WM; NW=S//WN; E=NW//4; NJ=E//2
    def ldA(r,c): return A[r,c] if r<m and c<k else 0
    def ldB(r,c): return B[r,c] if r<k and c<n else 0
    for sub in range(WM*WN):
        m0=(sub//WN)*16*MT; n0=(sub%WN)*NW
        if m0>=m or n0>=n: continue
        # per lane registers, each reg = tuple of 2 values
        ra={}; rb={}
        for lane in range(32):
            g,t=lane>>2,lane&3
            for s in range(KS):
                for mt in range(MT):
                    r=m0+mt*16+g
                    if not KP:
                        f=[(ldA(r,16*s+2*t),ldA(r,16*s+2*t+1)),(ldA(r+8,16*s+2*t),ldA(r+8,16*s+2*t+1)),
                           (ldA(r,16*s+8+2*t),ldA(r,16*s+9+2*t)),(ldA(r+8,16*s+8+2*t),ldA(r+8,16*s+9+2*t))]
                    else:
                        c0=[ldA(r,16*s+4*t+e) for e in range(4)]; c1=[ldA(r+8,16*s+4*t+e) for e in range(4)]
                        f=[(c0[0],c0[1]),(c1[0],c1[1]),(c0[2],c0[3]),(c1[2],c1[3])]
                    ra[lane,s,mt]=f
                for h in range(2):
                    kr=16*s+4*(g>>1)+2*h+(g&1) if KP else 16*s+8*h+g
                    ch=[ldB(kr,n0+E*t+e) for e in range(E)]
                    for j in range(NJ): rb[lane,s,h,j]=(ch[2*j],ch[2*j+1])
        def trans(regs):  # regs: dict lane->pair ; X[g][2t+e]
            X=np.zeros((8,8),dtype=int)
            for lane in range(32):
                g,t=lane>>2,lane&3; X[g,2*t],X[g,2*t+1]=regs[lane]
            Y=X.T
            return {lane:(Y[lane>>2,2*(lane&3)],Y[lane>>2,2*(lane&3)+1]) for lane in range(32)}
        acc={}
        for s in range(KS):
            if s*16>=k: break
            bf={}
            for j in range(NJ):
                for h in range(2):
                    tr=trans({l:rb[l,s,h,j] for l in range(32)})
                    for l in range(32): bf[l,j,h]=tr[l]
            for mt in range(MT):
                if m0+mt*16>=m: break
                for j in range(NJ):
                    # build Amma 16x16, Bmma 16x8
                    Am=np.zeros((16,16),dtype=int); Bm=np.zeros((16,8),dtype=int)
                    for l in range(32):
                        g,t=l>>2,l&3; f=ra[l,s,mt]
                        Am[g,2*t:2*t+2]=f[0]; Am[g+8,2*t:2*t+2]=f[1]; Am[g,2*t+8:2*t+10]=f[2]; Am[g+8,2*t+8:2*t+10]=f[3]
                        Bm[2*t:2*t+2,g]=bf[l,j,0]; Bm[2*t+8:2*t+10,g]=bf[l,j,1]
                    D=Am@Bm
                    for l in range(32):
                        g,t=l>>2,l&3
                        a=acc.setdefault((l,mt,j),np.zeros(4,dtype=int))
                        a+= [D[g,2*t],D[g,2*t+1],D[g+8,2*t],D[g+8,2*t+1]]
        for l in range(32):
            g,t=l>>2,l&3
            for mt in range(MT):
                if m0+mt*16>=m: break
                r=m0+mt*16+g
                v0=[0]*E; v1=[0]*E
                for j in range(NJ):
                    a=acc.get((l,mt,j),np.zeros(4,dtype=int))
                    v0[2*j],v0[2*j+1],v1[2*j],v1[2*j+1]=a
                for rr,v in ((r,v0),(r+8,v1)):
                    for e in range(E):
                        c=n0+E*t+e
                        if rr<m and c<n: C[rr,c]=v[e]
    return np.array_equal(C,A@B)
cfgs=[(16,1,1),(32,2,2),(32,2,1),(32,1,1)]
bad=0; cnt=0
for (m,n,k) in [(8,8,8),(16,16,16),(12,10,14),(1,1,1),(2,2,2),(9,15,7),(16,8,16),(32,32,32),(17,32,9),(20,18,30),(31,31,31),(5,32,3),(32,2,32),(24,32,16),(32,32,8)]:
    for (S,WM,WN) in cfgs:
        if max(m,n,k)>S: continue
        for KP in (False,True):
            cnt+=1
            if not run(m,n,k,S,WM,WN,KP): bad+=1; print("BAD",m,n,k,S,WM,WN,KP)
print(cnt,"configs,",bad,"bad")
