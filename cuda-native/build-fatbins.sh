#!/usr/bin/env bash
# Compiles every cuda-native/src/main/cuda/<op>/<kernel>.cu into <out>/<op>/<kernel>.fatbin.
# SASS for sm_80 (runs on every Ampere/Ada part) and sm_90a (Hopper), plus compute_80 PTX so
# newer GPUs can JIT it, compressed (--compress-mode=size: about half the bytes; the driver, which Gapfill needs at
# 580 or newer anyway, decompresses at load). Warnings are errors, and any register spill fails the build, except up to the bytes a
# .cu file allows itself in a line "// ptxas spill allowance: <bytes> per kernel: <why, with the measurement>"
# (spill stores and spill loads each at most that many bytes per kernel and architecture).
# Beside each fatbin, <kernel>.params lists every entry's parameter sizes in bytes, one entry a line ("name 8 8 4"),
# read from the compute_80 PTX nvcc keeps while it builds the fatbin (no second compile): KernelFunction refuses a launch
# whose arguments differ from them in count or size.
# Usage: build-fatbins.sh <src-root> <out-root> <log-dir>
set -euo pipefail
src=${1:?source root}; out=${2:?output root}; logs=${3:?log dir}
NVCC=${NVCC:-nvcc}
if ! command -v "$NVCC" >/dev/null 2>&1; then
  for c in /usr/local/cuda/bin/nvcc /usr/local/cuda-13.0/bin/nvcc; do [ -x "$c" ] && NVCC=$c && break; done
fi
if ! command -v "$NVCC" >/dev/null 2>&1; then
  echo "ERROR: nvcc not found. Gapfill's cuda-native module compiles its kernels with the CUDA Toolkit (12.8 or newer," >&2
  echo "       13.0 tested). Install it (https://developer.nvidia.com/cuda-downloads, or apt install cuda-toolkit-13-0)" >&2
  echo "       and put nvcc on PATH, or set NVCC=/path/to/nvcc." >&2
  exit 1
fi
ARCHS=${GAPFILL_CUDA_ARCHS:-"-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_80,code=compute_80"}
mkdir -p "$out" "$logs"
common_stamp=$(find "$src/common" -type f -printf '%T@\n' 2>/dev/null | sort -n | tail -1)
common_stamp=${common_stamp:-0}
# What else makes a fatbin: this script (its flags), the architectures and nvcc. A fatbin built under other ones is
# stale even where it is newer than its .cu (a flag change once left "fatbins up to date" with the old code in the jar)
build_stamp=$( { cat "$0"; echo "$ARCHS"; "$NVCC" --version; } | sha256sum | cut -c1-16)
if [ "$(cat "$out/BUILD_STAMP" 2>/dev/null)" != "$build_stamp" ]; then
  find "$out" -name '*.fatbin' -delete 2>/dev/null || true
fi
jobs=()
for cu in "$src"/*/*.cu; do
  op=$(basename "$(dirname "$cu")"); [ "$op" = common ] && continue
  name=$(basename "$cu" .cu)
  dst="$out/$op/$name.fatbin"
  if [ -f "$dst" ] && [ -f "$out/$op/$name.params" ]; then
    d=$(stat -c %Y "$dst"); s=$(stat -c %Y "$cu")
    if [ "$d" -ge "$s" ] && [ "$d" -ge "${common_stamp%.*}" ]; then continue; fi
  fi
  jobs+=("$cu")
done
write_index() {  # the list of bundled modules, read by KernelModule.bundled() and `gapfill info`
  (cd "$out" && find . -name '*.fatbin' | sed 's#^\./##; s#\.fatbin$##' | sort) > "$out/INDEX"
}
[ ${#jobs[@]} -eq 0 ] && { write_index; echo "$build_stamp" > "$out/BUILD_STAMP"; echo "fatbins up to date"; exit 0; }
compile() {
  cu=$1; op=$(basename "$(dirname "$cu")"); name=$(basename "$cu" .cu)
  mkdir -p "$OUT/$op"; log="$LOGS/$op.$name.log"
  keep=$(mktemp -d); trap 'rm -rf "$keep"' EXIT
  if ! $NVCC -fatbin -std=c++17 -O3 --Werror all-warnings -Xptxas -v -lineinfo --compress-mode=size \
        -I "$SRC/common" $ARCHS --keep --keep-dir "$keep" -o "$OUT/$op/$name.fatbin" "$cu" >"$log" 2>&1; then
    cat "$log" >&2; echo "ERROR: nvcc failed on $cu" >&2; exit 1
  fi
  # every ".entry name(" and its ".param .<type> ..." lines: a type's bits / 8 bytes, times an array's length ("[16]");
  # an entry ends at the ")" (on its own line or on its last parameter's); a new entry or the end of the file inside one,
  # or a parameter without a type, fails the build. Each architecture's PTX is read, and they must list the same entries.
  params() {
    awk 'function out() { print n sz; inent = 0 }
         /\.entry[ \t]+[A-Za-z_$]/ { if (inent) { print "?"; exit 1 }
           match($0, /\.entry[ \t]+[A-Za-z_$][A-Za-z0-9_$]*/); n = substr($0, RSTART, RLENGTH)
           sub(/\.entry[ \t]+/, "", n); inent = 1; sz = ""; if ($0 ~ /\)/) out(); next }
         inent && /\.param/ { if (!match($0, /\.[usbf](8|16|32|64)[ \t]/)) { print "?"; exit 1 }
           b = substr($0, RSTART + 2, RLENGTH - 3) / 8
           if (match($0, /\[[0-9]+\]/)) b *= substr($0, RSTART + 1, RLENGTH - 2)
           sz = sz " " b; if ($0 ~ /\)/) out(); next }
         inent && /\)/ { out() }
         END { if (inent) print "?" }' "$1" | sort
  }
  first=""
  for ptx in "$keep"/*.ptx; do
    [ -f "$ptx" ] || continue
    params "$ptx" > "$OUT/$op/$name.params.tmp.$$" || { echo "?" >> "$OUT/$op/$name.params.tmp.$$"; }
    if grep -q '?' "$OUT/$op/$name.params.tmp.$$" || [ ! -s "$OUT/$op/$name.params.tmp.$$" ]; then
      rm -f "$OUT/$op/$name.fatbin" "$OUT/$op/$name.params.tmp.$$"
      echo "ERROR: could not read the kernel parameters of $cu from $(basename "$ptx")" >&2; exit 1
    fi
    if [ -z "$first" ]; then
      first=$ptx; mv -f "$OUT/$op/$name.params.tmp.$$" "$OUT/$op/$name.params.tmp"
    elif ! cmp -s "$OUT/$op/$name.params.tmp.$$" "$OUT/$op/$name.params.tmp"; then
      rm -f "$OUT/$op/$name.fatbin" "$OUT/$op/$name.params.tmp" "$OUT/$op/$name.params.tmp.$$"
      echo "ERROR: $cu's entries or their parameters differ between $(basename "$first") and $(basename "$ptx")" >&2; exit 1
    else
      rm -f "$OUT/$op/$name.params.tmp.$$"
    fi
  done
  if [ -z "$first" ]; then
    rm -f "$OUT/$op/$name.fatbin"; echo "ERROR: nvcc kept no PTX for $cu (the parameter list needs one)" >&2; exit 1
  fi
  mv -f "$OUT/$op/$name.params.tmp" "$OUT/$op/$name.params"
  allow=$(sed -nE 's#^// ptxas spill allowance: ([0-9]+) bytes? per kernel:.*#\1#p' "$cu" | head -1)
  allow=${allow:-0}
  if awk -v a="$allow" '/bytes spill stores/ { for (i = 1; i < NF; i++) if ($(i + 1) == "bytes" && $(i + 2) == "spill" && $i + 0 > a) bad = 1 }
      END { exit bad ? 0 : 1 }' "$log"; then
    grep -B3 -E '[1-9][0-9]* bytes spill' "$log" >&2
    rm -f "$OUT/$op/$name.fatbin"; echo "ERROR: register spills over the file's allowance ($allow bytes) in $cu (see above)" >&2; exit 1
  fi
  echo "nvcc: $op/$name.fatbin"
}
export -f compile; export NVCC ARCHS OUT="$out" LOGS="$logs" SRC="$src"
printf '%s\n' "${jobs[@]}" | xargs -P "$(nproc)" -I{} bash -c 'compile "$@"' _ {}
write_index
echo "$build_stamp" > "$out/BUILD_STAMP"  # only once every fatbin built (a failure above exits first)
