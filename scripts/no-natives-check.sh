#!/usr/bin/env bash
# Every op on the CPU reference backend where JavaCPP's native jars are absent, as on a host other than Linux x86-64
# (macOS, Windows, aarch64), where the docs promise the CPU backend: `gapfill verify` with the linux-x86_64 jars left off
# the class path. Static native constants in the op classes (cuBLAS alpha/beta) had made Bmm, Int8Mm and GroupedGemm
# fail there with ExceptionInInitializerError before reaching the reference. Run after `mvnw install`.
set -euo pipefail
cd "$(dirname "$0")/.."
cpfile=$(mktemp)
./mvnw -B -q -pl examples dependency:build-classpath -Dmdep.outputFile="$cpfile" -Dmdep.includeScope=runtime > "$cpfile.log" 2>&1 \
  || { cat "$cpfile.log"; echo "no-natives: could not list the examples' dependencies"; exit 1; }
deps=$(tr ':' '\n' < "$cpfile" | grep -v -- '-linux-x86_64' | grep -v onnxruntime | paste -sd: -)
rm -f "$cpfile" "$cpfile.log"
java -cp "examples/target/classes:$deps" dev.gapfill.examples.GapfillCli verify --cases 2 2>&1 | grep -v 'WARN dev.gapfill.core.Gpu'
echo "no-natives: every op ran on the CPU reference without JavaCPP's native jars"
