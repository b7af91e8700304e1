# Opcode histogram of every loop (a backward branch's range) of one function in `cuobjdump -sass` output.
#   python3 sass_loops.py file.sass function_name
import collections, re, sys

ins, on = [], False
for line in open(sys.argv[1]):
    m = re.search(r'Function : (\S+)', line)
    if m:
        on = m.group(1) == sys.argv[2]
        continue
    m = re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;', line) if on else None
    if m:
        ins.append((int(m.group(1), 16), m.group(2)))
print(sys.argv[2], 'instructions', len(ins))
for addr, text in ins:
    t = re.search(r'BRA\s+(?:`?\(?)0x([0-9a-f]+)', text)
    if t and int(t.group(1), 16) < addr:
        lo = int(t.group(1), 16)
        body = [re.sub(r'^@!?U?P\w+\s+', '', s).split()[0] for a, s in ins if lo <= a <= addr]
        print('loop 0x%x-0x%x: %d instructions' % (lo, addr, len(body)))
        print('   ' + ', '.join('%s %d' % kv for kv in collections.Counter(body).most_common()))
