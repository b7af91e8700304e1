#!/usr/bin/env bash
# Builds the core, ops and examples jars of another commit (default: main) into .bundle/base-jars/ (git-ignored), for
# the host-cost A/B on the device (host_ab/run.sh): carry ".bundle/base-jars" beside the bundle. The kernels must be
# the same in both commits (the bundle's cuda-native jar serves both sides); the script refuses otherwise.
# Usage (repository root, here): bash cuda-native/dev/host_ab/base_jars.sh [commit]
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$(pwd)
base=${1:-main}
if ! git diff --quiet "$base" HEAD -- cuda-native/src; then
  echo "base_jars: $base and HEAD differ in cuda-native/src; the A/B shares one kernel jar, so it would not be fair" >&2
  exit 2
fi
wt=$(mktemp -d /tmp/gapfill-base.XXXXXX)
git worktree add -q --detach "$wt" "$base"
trap 'git worktree remove --force "$wt"' EXIT
( cd "$wt" && ./mvnw -B -q -o -DskipTests package -pl examples -am )
rm -rf "$root/.bundle/base-jars"; mkdir -p "$root/.bundle/base-jars"
for m in core ops examples; do cp "$wt/$m"/target/gapfill-"$m"-0.1.0-SNAPSHOT.jar "$root/.bundle/base-jars/"; done
git rev-parse "$base" > "$root/.bundle/base-jars/COMMIT"
ls -la "$root/.bundle/base-jars"
