#!/usr/bin/env bash
# Twenty-seventh session: bmm_wg.cu (wgmma per matrix, sm_90a, kind "wg") against bmm_team / bmm_team8 / the flat loader
# and cuBLAS. Builds the harness, checks every wg and flat configuration on every layout (BMM_FLAT_CORR), then times
# the rows. From the repo root on the device: OUT=$OUT bash cuda-native/dev/bmm/run_wg.sh
set -o pipefail
OUT=${OUT:-.}; here=$(cd "$(dirname "$0")" && pwd); src=$here/../../src/main/cuda
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I"$here" -I"$here/../common" -I"$src/common" -I"$src/bmm" "$here/bench_bmm.cu" -lcublas \
  -o /tmp/bench_bmm >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
BMM_FLAT_CORR=1 timeout 200 /tmp/bench_bmm corr >"$OUT/wg-corr.txt" 2>&1; echo "corr rc=$?"; grep -c FAIL "$OUT/wg-corr.txt"; grep FAIL "$OUT/wg-corr.txt" | head -5; tail -1 "$OUT/wg-corr.txt"
BMM_SHAPES="${BMM_SHAPES:-100x100x100,100x100x100@8192,100x100x100@512,96x96x96,96x96x96@8192,128x128x128,128x128x128@8192,64x64x64,64x64x64@8192,48x48x48,60x60x60,76x76x76,92x92x92,124x124x124,68x68x68,36x44x52,100x100x36}" \
  BMM_SKIP=stream,frag,small timeout 300 /tmp/bench_bmm sweep >"$OUT/wg-sweep.txt" 2>&1; echo "sweep rc=$?"
python3 - "$OUT/wg-sweep.txt" <<'EOF'
import re, sys
for line in open(sys.argv[1]):
    if not re.match(r'^(f16|bf16) +\d+ +\d+ +\d+ +\d+ ', line): continue
    h = line.split('|')[0].split(); fl = float(line.split('|')[1].split()[0])
    cf = re.findall(r'\[([^\]]+?) ([0-9.]+) (ok|[^\]]*)\]', line)
    def best(pre):
        v = [(float(t), n) for n, t, o in cf if n.startswith(pre) and o == 'ok']
        return min(v) if v else (float('nan'), '-')
    cb = best('cublas'); tm = best('team '); t8 = best('team8 '); tf = best('team8f'); wg = best('wg ')
    bad = [n for n, t, o in cf if o != 'ok']
    print(f"{h[0]:4} {h[1]:>5} {h[2]}x{h[3]}x{h[4]:<4} fl {fl:6.1f} cublas {cb[0]:7.2f} team {tm[0]:7.2f} team8 {t8[0]:7.2f} flat {tf[0]:7.2f} wg {wg[0]:7.2f} fl/wg {fl/wg[0]*100:4.0f}%" + (f" FAIL {bad}" if bad else ""))
EOF
