#!/usr/bin/env bash
# Takes the 1-waiter cross-process handoff apart on one clock: perf records every system call,
# wake-up and context switch of the machine, and a uprobe on locksmith-bench's enter_critical and
# leave_critical (where the waiter's acquisition and the holder's release are stamped); then
# handoff.py follows each handoff from the holder's leave to the waiter's enter, raw's and the
# library's (subscribe) rows of one invocation apart. Needs perf and root (uprobes).
#
#   benchmarks/segments/handoff.sh BENCH LABEL [more locksmith-bench options]
#
# BENCH must be named locksmith-bench (handoff.py finds its processes by name). Writes LABEL.bench
# (the benchmark's table), LABEL.raw.txt and LABEL.sub.txt (perf script's lines) in the current
# directory, and prints each segment's median. --think 20ms gives more handoffs per second than
# the default 100 ms; perf adds about 2-5 µs per system call, so compare rows, not totals.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=$1 label=$2
shift 2
perf probe -q -d 'probe_locksmith:*' 2>/dev/null || true
perf probe -q -x "$bench" \
  -a 'probe_locksmith:enter=_ZN9locksmith5bench14enter_criticalERNS0_11process_ctxERKNS0_6workerEllb' \
  -a 'probe_locksmith:leave=_ZN9locksmith5bench14leave_criticalERNS0_11process_ctxERKNS0_6workerE'
uptime
perf record -q -a -o "$label.data" -e raw_syscalls:sys_enter --exclude-perf \
  -e raw_syscalls:sys_exit --exclude-perf -e sched:sched_switch -e sched:sched_wakeup \
  -e probe_locksmith:leave -e probe_locksmith:enter -- \
  "$bench" --scenario handoff --workers 2 --processes 2 --strategy subscribe --duration 5s \
  --think 20ms "$@" >"$label.bench" 2>&1
perf script -i "$label.data" -F comm,pid,tid,cpu,time,event,trace 2>/dev/null >"$label.txt"
rm -f "$label.data"
perf probe -q -d 'probe_locksmith:*'
sed -n 3,4p "$label.bench"
# The raw row runs first: its two worker processes are the first two that stamp.
mapfile -t pids < <(grep probe_locksmith "$label.txt" | awk '{print $2}' | cut -d/ -f1 | sort -un)
python3 "$here/handoff.py" split "$label" "${pids[@]}"
rm -f "$label.txt"
echo "== raw"
python3 "$here/handoff.py" segments "$label.raw.txt"
echo "== subscribe"
python3 "$here/handoff.py" segments "$label.sub.txt"
