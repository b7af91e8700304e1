#!/usr/bin/env bash
# The library jars on the module path, as a JPMS (or jlink) user puts them: each must name its module
# (Automatic-Module-Name), and core must find the kernels of gapfill-cuda-native there. A jar without a name got one
# derived from its file name ("gapfill.cuda.native", refused: "native" is a reserved word), and core, reading its
# resources through its own class, found no kernel on the module path. Run after `mvnw install` (reads the target jars).
set -euo pipefail
cd "$(dirname "$0")/.."
jar_of() { ls "$PWD/$1"/target/gapfill-"$1"-*.jar | grep -vE -- '-(tests|sources|javadoc)\.jar$' | head -1; }
declare -A want=([core]=dev.gapfill.core [cuda-native]=dev.gapfill.cuda [ops]=dev.gapfill.ops [verify]=dev.gapfill.verify)
mp=""
for m in core cuda-native ops verify; do
  j=$(jar_of "$m")
  got=$(jar --describe-module --file "$j" 2>&1 | grep -E '@.* automatic$' | head -1 | sed 's/@.*//')
  [ "$got" = "${want[$m]}" ] || { echo "module-path: $j describes as '$got', not ${want[$m]}"; exit 1; }
  mp="$mp${mp:+:}$j"
done
# the third-party modules and their linux-x86_64 native jars (JavaCPP loads its own JNI library; no GPU is used)
cpfile=$(mktemp)
./mvnw -B -q -pl core dependency:build-classpath -Dmdep.outputFile="$cpfile" -Dmdep.includeScope=compile > "$cpfile.log" 2>&1 \
  || { cat "$cpfile.log"; echo "module-path: could not list core's dependencies"; exit 1; }
deps=$(tr ':' '\n' < "$cpfile" | grep -E '/(slf4j-api|javacpp|cuda)-[0-9][^/]*\.jar$' | paste -sd: -)
rm -f "$cpfile" "$cpfile.log"
[ -n "$deps" ] || { echo "module-path: no slf4j-api, javacpp or cuda jar among core's dependencies"; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/smoke"
cat > "$work/src/module-info.java" <<'J'
module smoke { requires dev.gapfill.ops; }
J
cat > "$work/src/smoke/Main.java" <<'J'
package smoke;
public final class Main {
    public static void main(String[] a) {
        java.util.List<String> k = dev.gapfill.core.KernelModule.bundled();
        boolean all = !k.isEmpty() && k.stream().allMatch(dev.gapfill.core.KernelModule::isBundled);
        System.out.println(k.size() + " kernel modules, every fatbin found: " + all);
        if (k.size() != Integer.parseInt(a[0]) || !all) {
            throw new AssertionError("expected " + a[0] + " kernel modules on the module path");
        }
        // ops' caches reach core through ServiceLoader (META-INF/services of an automatic module)
        java.util.Map<String, Integer> caches = dev.gapfill.core.Resources.cacheSizes(null);
        System.out.println("op caches: " + caches.keySet());
        if (caches.size() != Integer.parseInt(a[1])) {
            throw new AssertionError("expected " + a[1] + " op caches registered on the module path, found " + caches.keySet());
        }
        // an op call on the CPU reference (no GPU is needed, none is asked for)
        try (dev.gapfill.core.Tensor x = dev.gapfill.core.Tensor.of(dev.gapfill.core.Device.CPU, dev.gapfill.core.DType.F32, new float[] {1, 2, 3, 4}, 4);
             dev.gapfill.core.Tensor y = dev.gapfill.core.Tensor.of(dev.gapfill.core.Device.CPU, dev.gapfill.core.DType.F32, new float[] {1, 1, 1, 1}, 4)) {
            try (dev.gapfill.core.Tensor z = dev.gapfill.ops.Elementwise.scaleAdd(x, y, 2f, 1f)) {
                float[] r = z.toFloatArray();
                if (r[3] != 9f) {
                    throw new AssertionError("scaleAdd on the CPU gave " + java.util.Arrays.toString(r));
                }
            }
        }
    }
}
J
javac -d "$work/out" --module-path "$mp:$deps" "$work/src/module-info.java" "$work/src/smoke/Main.java"
entry() { (cd "$work" && rm -rf x && mkdir x && cd x && jar xf "$1" "$2" && cat "$2"); }  # the JDK's jar, no unzip needed
n=$(entry "$(jar_of cuda-native)" dev/gapfill/cuda/INDEX | grep -c .)
caches=$(entry "$(jar_of ops)" 'META-INF/services/dev.gapfill.core.Resources$Cache' | grep -c .)
java --module-path "$mp:$deps:$work/out" --add-modules ALL-MODULE-PATH -m smoke/smoke.Main "$n" "$caches"
echo "module-path: core, cuda, ops and verify named; $n kernel modules and $caches op caches found, an op ran on the CPU"
