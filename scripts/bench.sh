#!/usr/bin/env bash
# The main job: builds locksmith and runs the spin-vs-subscribe comparison against redis-server
# processes that the benchmark starts itself; prints the table and writes the handoff plot.
# With no arguments it then runs issue 9's two in-process shapes: a handoff among 16 coroutines
# of one process, and 16 coroutines of one process contending with hold 0 (spin against
# subscribe), and the fair lock's handoff and contention. Each row shows its ratios to the baseline of the same run and, where issue 9 sets
# one, whether its target is met (column `target`). Arguments go to locksmith-bench instead (for
# example --json, or --scenario handoff), and only that run is made.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${LOCKSMITH_BUILD_DIR:-$root/build}
"$root/scripts/build.sh" --target locksmith_bench
plot=${LOCKSMITH_PLOT:-$build_dir/handoff.png}
bench=$build_dir/locksmith-bench
if [ $# -gt 0 ]; then
  exec "$bench" --plot "$plot" "$@"
fi
"$bench" --plot "$plot"
echo
echo "In one process (the local queue hands the name over):"
"$bench" --scenario handoff --workers 16 --processes 1 --strategy subscribe
"$bench" --scenario contended --workers 16 --processes 1 --hold 0ms
echo
echo "The fair lock (lock_options::fair: a release hands the lock to the first in Redis's queue):"
"$bench" --scenario handoff,contended --fair
