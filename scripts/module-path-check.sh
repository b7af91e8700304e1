#!/usr/bin/env bash
# The library jars on the module path, as a JPMS (or jlink) user puts them: each must name its module
# (Automatic-Module-Name), and core must find the kernels of gapfill-cuda-native there. A jar without a name got one
# derived from its file name ("gapfill.cuda.native", refused: "native" is a reserved word), and core, reading its
# resources through its own class, found no kernel on the module path. Run after `mvnw install` (reads the target jars).
set -euo pipefail
cd "$(dirname "$0")/.."
jar_of() { ls "$1"/target/gapfill-"$1"-*.jar | grep -v -- '-tests.jar$' | head -1; }
declare -A want=([core]=dev.gapfill.core [cuda-native]=dev.gapfill.cuda [ops]=dev.gapfill.ops [verify]=dev.gapfill.verify)
mp=""
for m in core cuda-native ops verify; do
  j=$(jar_of "$m")
  got=$(jar --describe-module --file "$j" 2>&1 | grep -E '@.* automatic$' | head -1 | sed 's/@.*//')
  [ "$got" = "${want[$m]}" ] || { echo "module-path: $j describes as '$got', not ${want[$m]}"; exit 1; }
  mp="$mp${mp:+:}$j"
done
# the third-party modules core needs to link KernelModule (no native library is loaded)
deps=$(./mvnw -B -q -pl core dependency:build-classpath -Dmdep.outputFile=/dev/stdout -Dmdep.includeScope=compile 2>/dev/null \
  | tr ':' '\n' | grep -E '/(slf4j-api|javacpp|cuda)-[0-9][^/]*\.jar$' | grep -v -- '-linux-' | paste -sd: -)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/smoke"
cat > "$work/src/module-info.java" <<'J'
module smoke { requires dev.gapfill.core; }
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
    }
}
J
javac -d "$work/out" --module-path "$mp:$deps" "$work/src/module-info.java" "$work/src/smoke/Main.java"
n=$(unzip -p "$(jar_of cuda-native)" dev/gapfill/cuda/INDEX | grep -c .)
java --module-path "$mp:$deps:$work/out" --add-modules ALL-MODULE-PATH -m smoke/smoke.Main "$n"
echo "module-path: core, cuda, ops and verify named; $n kernel modules found through the module path"
