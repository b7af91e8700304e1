#!/usr/bin/env python3
"""Applies a unified diff of one file (e.g. gqa_decode/fixedcost/decode_fc.patch) to its exact base: apply_patch.py <base> <patch> <out>.
Every context and removed line must match the base, else it fails (the base changed: regenerate the patch)."""
import re
import sys

base_path, patch_path, out_path = sys.argv[1:4]
base = open(base_path).read().split("\n")
lines = open(patch_path).read().split("\n")
out, pos, i = [], 0, 0
while i < len(lines):
    m = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", lines[i])
    i += 1
    if not m:
        continue
    start = int(m.group(1)) - 1 if m.group(2) != "0" else int(m.group(1))
    out += base[pos:start]
    pos = start
    while i < len(lines) and not lines[i].startswith("@@"):
        tag, text = lines[i][:1], lines[i][1:]
        if tag in (" ", "-"):
            if pos >= len(base) or base[pos] != text:
                sys.exit(f"{patch_path}: line {i + 1} does not match {base_path}:{pos + 1}")
            if tag == " ":
                out.append(text)
            pos += 1
        elif tag == "+":
            out.append(text)
        elif tag == "\\":
            pass
        i += 1
out += base[pos:]
open(out_path, "w").write("\n".join(out))
