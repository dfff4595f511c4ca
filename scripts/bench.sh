#!/usr/bin/env bash
# The main job: builds locksmith and runs the spin-vs-subscribe comparison against redis-server
# processes that the benchmark starts itself; prints the table and writes the handoff plot.
# Extra arguments go to locksmith-bench (e.g. --json, --scenario handoff).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${LOCKSMITH_BUILD_DIR:-$root/build}
"$root/scripts/build.sh" --target locksmith_bench
plot=${LOCKSMITH_PLOT:-$build_dir/handoff.png}
"$build_dir/locksmith-bench" --plot "$plot" "$@"
