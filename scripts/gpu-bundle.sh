#!/usr/bin/env bash
# Builds the offline GPU bundle: a self-contained folder with a jlink'd Java 17 runtime, every jar,
# the test classes, the JUnit console launcher and run.sh, for GPU hosts with no Java, Maven or network.
# Usage: scripts/gpu-bundle.sh [bundle-dir]   (default .bundle/gapfill-gpu; also writes <bundle-dir>.tar.xz)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=${1:-.bundle/gapfill-gpu}
mvn_flags=${MVN_FLAGS:--o}
./mvnw -B -q $mvn_flags install -DskipTests
rm -rf "$out"; mkdir -p "$out/lib" "$out/tests"
# Runtime and test dependencies of the examples module (the top of the build), without JUnit's own
# engine jars: the console-standalone launcher brings the platform and the Jupiter engine.
./mvnw -B -q $mvn_flags -pl examples org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies -DincludeScope=test -DoutputDirectory="$root/$out/lib" \
  -Dmdep.useRepositoryLayout=false
./mvnw -B -q $mvn_flags org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy -Dartifact=org.junit.platform:junit-platform-console-standalone:1.11.3 \
  -DoutputDirectory="$root/$out/lib"
rm -f "$out"/lib/junit-jupiter-*.jar "$out"/lib/junit-platform-commons-*.jar "$out"/lib/junit-platform-engine-*.jar \
      "$out"/lib/opentest4j-*.jar "$out"/lib/apiguardian-*.jar \
      "$out"/lib/pdfbox-*.jar "$out"/lib/fontbox-*.jar "$out"/lib/graphics2d-*.jar "$out"/lib/commons-logging-*.jar  # XChart's PDF export: charts render off the GPU host
for m in core cuda-native ops verify examples; do
  cp "$m"/target/gapfill-*-0.1.0-SNAPSHOT.jar "$out/lib/" 2>/dev/null || true
done
# ONNX Runtime (the DJL engine of lesson 07) ships natives for every platform; the GPU host is linux-x86_64
for j in "$out"/lib/onnxruntime-[0-9]*.jar; do
  [ -f "$j" ] && zip -q -d "$j" 'ai/onnxruntime/native/osx-*' 'ai/onnxruntime/native/win-*' 'ai/onnxruntime/native/linux-aarch64/*' >/dev/null
done
# the CLI uses core's test data helpers (random inputs, poison); other test jars travel as directories
find "$out/lib" -name 'gapfill-*-tests.jar' ! -name 'gapfill-core-*-tests.jar' -delete
# Every jar rewritten with stored (uncompressed) entries, same names and order: xz then compresses the classes and the
# native libraries inside (ONNX Runtime's 28 MB .so, the fatbins, JavaCPP's JNI library) instead of meeting deflate's
# output. At dddb0f1 the archive went from 46.4 MB to 36.3 MB; the tracked tree (20 MB, docs/benchmark-runs growing)
# plus the 46 MB archive no longer fit the 64 MiB a device call carries.
python3 - "$out"/lib/*.jar <<'PY'
import os, sys, zipfile
for path in sys.argv[1:]:
    tmp = path + ".stored"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            entry = zipfile.ZipInfo(info.filename, info.date_time)
            entry.external_attr = info.external_attr
            dst.writestr(entry, src.read(info))
    os.replace(tmp, path)
PY
rm -rf "$out/tests"; mkdir -p "$out/tests"
for m in core ops verify examples; do   # test classes as directories: the console launcher scans directories reliably
  [ -d "$m/target/test-classes" ] && cp -r "$m/target/test-classes" "$out/tests/$m"
done
# --compress=0: the archive's gzip then compresses the runtime's modules file better than jlink's own zip does
# (19 MB against 23 MB in a .tgz), which keeps the working tree plus the carried archive under the device's 64 MiB
jlink --add-modules java.base,java.logging,java.management,java.xml,jdk.unsupported,java.naming \
  --strip-debug --no-header-files --no-man-pages --compress=0 --output "$out/jre"
commit=$(git rev-parse HEAD)
# untracked files count too (not ignored ones): a new .cu or .java file not yet added is compiled into the bundle
dirty=false; [ -n "$(git status --porcelain)" ] && dirty=true
printf 'commit=%s\ndirty=%s\nbuilt=%s\n' "$commit" "$dirty" "$(date -u +%FT%TZ)" > "$out/BUNDLE_INFO"
cp scripts/bundle-run.sh "$out/run.sh"; chmod +x "$out/run.sh"
# xz: 46 MB against gzip's 52 MB at 23dd688 (36 MB since the jars are stored, above); with the tracked tree (~16 MB) a
# gzip archive no longer fit the device's 64 MiB. Hosts without the xz binary unpack it with Python's lzma
# (scripts/device-run.sh).
rm -f "$out.tgz"
tar cf - -C "$(dirname "$out")" "$(basename "$out")" | xz -6 -T2 > "$out.tar.xz.tmp" && mv "$out.tar.xz.tmp" "$out.tar.xz"
echo "bundle: $out ($(du -sh "$out" | cut -f1)), archive $out.tar.xz ($(du -sh "$out.tar.xz" | cut -f1)), commit ${commit:0:12} dirty=$dirty"
