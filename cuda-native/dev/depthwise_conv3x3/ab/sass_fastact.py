# Instructions per output of the main row loop (the largest backward-branch range) of the ../sass_spec.cu
# kernels in `cuobjdump -sass` output, for run_fastact.sh sass. B's out-of-range fallback blocks (between the
# predicated BRA that skips them and the BSYNC after their CALL) are in the loop but never run on finite data: they
# are counted apart, and "run" is the loop without them.
#   python3 sass_fastact.py file.sass label
import collections, re, sys

funcs, cur = collections.OrderedDict(), None
for line in open(sys.argv[1]):
    m = re.search(r'Function : (\S+)', line)
    if m:
        cur = funcs.setdefault(m.group(1), [])
        continue
    m = re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;', line) if cur is not None else None
    if m:
        cur.append((int(m.group(1), 16), m.group(2)))
for f, ins in funcs.items():
    m = re.search(r'spec_(nhwc|nchw)ILi(\d)E(?:Li(\d)E)?', f)
    if not m:
        continue  # the file's own kernels
    kern, act, vw = m.group(1).upper(), int(m.group(2)), m.group(3)
    outs = 8 if kern == 'NHWC' else int(vw)  # outputs per loop iteration: CPT 4 x WC 2, or VW
    best = (0, 0)
    for i, (addr, text) in enumerate(ins):
        t = re.search(r'BRA\s+(?:`?\(?)0x([0-9a-f]+)', text)
        if t and int(t.group(1), 16) < addr:
            lo = next(j for j, (a, _) in enumerate(ins) if a >= int(t.group(1), 16))
            if i - lo + 1 > best[1] - best[0]:
                best = (lo, i + 1)
    body = ins[best[0]:best[1]]
    dead = 0
    for k, (_, text) in enumerate(body):
        if text.startswith('CALL'):
            a = max(j for j in range(k) if re.match(r'@!?P\d BRA', body[j][1]))
            b = min(j for j in range(k, len(body)) if body[j][1].startswith('BSYNC'))
            dead += b - a - 1
    name = ['NONE', 'RELU', 'RELU6', 'SILU', 'GELU_ERF', 'GELU_TANH'][act]
    print('%-3s %-4s %-4s %-9s loop %4d, fallback blocks %3d, run %4d: %5.1f per output' % (
        sys.argv[2], kern, 'v' + vw if vw else '', name, len(body), dead, len(body) - dead, (len(body) - dead) / outs))
