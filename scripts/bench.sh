#!/usr/bin/env bash
# The main job: builds locksmith and runs the spin-vs-subscribe comparison against redis-server
# processes that the benchmark starts itself; prints the table and writes the handoff plot.
# With no arguments it then runs issue 9's other shapes: a handoff to 15 waiters in 15 other
# processes, to 1 waiter and to 15 waiters in the holder's own process; 16 coroutines of one
# process contending with hold 0 (spin against subscribe); the fair lock's handoff and contention;
# RedLock over 5 nodes with 0, 1 and 2 of them frozen (ratios to the healthy run); the unfenced
# lock (--no-fence) uncontended, on 64 names and on 5 nodes, also beside a floor whose release
# checks its token (--checked-floor); and 10,000
# leases renewed by one thread. Each row shows its ratios to the
# baseline of the same run and, where issue 9 sets one, whether its target is met (column
# `target`; quorum: p50/h and cpu/h; renewal: targets_met with --json). Arguments go to
# locksmith-bench instead (for example --json, or --scenario handoff), and only that run is made.
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
echo "A handoff to 15 waiters, each in its own process:"
"$bench" --scenario handoff --workers 16 --processes 16 --strategy subscribe
echo
echo "In one process (the local queue hands the name over), to 1 waiter and to 15:"
"$bench" --scenario handoff --workers 2 --processes 1 --strategy subscribe
"$bench" --scenario handoff --workers 16 --processes 1 --strategy subscribe
"$bench" --scenario contended --workers 16 --processes 1 --hold 0ms
echo
echo "The fair lock (lock_options::fair: a release hands the lock to the first in Redis's queue):"
"$bench" --scenario handoff,contended --fair
echo
echo "RedLock over 5 nodes, with 0, 1 and 2 of them frozen (SIGSTOP) while measuring:"
"$bench" --scenario quorum --nodes 5 --frozen 0,1,2
echo
echo "The unfenced lock (lock_options::fence = false: a plain SET NX) beside the raw floor, and"
echo "RedLock over 5 nodes with it:"
"$bench" --scenario uncontended,independent --strategy subscribe --no-fence
echo "The same, beside a floor whose release checks its token (a script of GET, compare and DEL):"
"$bench" --scenario uncontended,independent --strategy subscribe --no-fence --checked-floor
"$bench" --scenario quorum --nodes 5 --frozen 0 --no-fence
echo
echo "10,000 leases held and renewed by the watchdog of one client on one thread:"
"$bench" --scenario renewal --leases 10000 --duration 10s
