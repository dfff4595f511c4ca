#!/usr/bin/env bash
# locksmith beside node-redlock on one redis-server that this script starts on a free loopback
# port: the uncontended cycle (one worker, one name), 64 workers of one process on their own
# names, and the handoff between 2 workers of one process on one name (node-redlock polls every
# 10 ms with up to 10 ms of jitter; locksmith waits for the release's message), in alternated
# rounds so that both see the same machine. locksmith-bench's rows include its raw floor
# (`SET NX PX` + `DEL` by hand). Needs node and npm; the peers' packages are
# installed from package-lock.json into <build>/peers (git-ignored), never system-wide.
#
#   benchmarks/peers/run.sh [rounds, default 5] [duration in ms, default 3000]
# Prints one JSON line per run, then a table of each row's medians over the rounds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=${LOCKSMITH_BUILD_DIR:-$root/build}
rounds=${1:-5}
duration_ms=${2:-3000}
for tool in node npm redis-server redis-cli; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is missing" >&2; exit 2; }
done
"$root/scripts/build.sh" --target locksmith_bench >/dev/null

peers=$build_dir/peers
mkdir -p "$peers"
cp "$here/package.json" "$here/package-lock.json" "$here/node-redlock.js" "$here/summary.js" "$peers/"
# Installed once per lock file: the stamp is the lock that the last `npm ci` installed.
if ! cmp -s "$here/package-lock.json" "$peers/installed.lock" 2>/dev/null; then
  (cd "$peers" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  cp "$here/package-lock.json" "$peers/installed.lock"
fi

work=$(mktemp -d)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 20); do
  port=$((20000 + RANDOM % 30000))
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
    --logfile "$work/redis.log" &
  server_pid=$!
  for _ in $(seq 50); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  kill "$server_pid" 2>/dev/null || true
  server_pid=
done
[ -n "$server_pid" ] || { echo "run.sh: no redis-server started" >&2; exit 1; }

out=$work/runs.jsonl
for round in $(seq "$rounds"); do
  "$build_dir/locksmith-bench" --redis "redis://127.0.0.1:$port" --scenario uncontended,independent \
    --strategy subscribe --duration "${duration_ms}ms" --json | tee -a "$out"
  "$build_dir/locksmith-bench" --redis "redis://127.0.0.1:$port" --scenario handoff --workers 2 \
    --processes 1 --strategy subscribe --duration "${duration_ms}ms" --json | tee -a "$out"
  for sc in uncontended independent handoff; do
    node "$peers/node-redlock.js" --port "$port" --scenario "$sc" \
      --duration-ms "$duration_ms" --warmup-ms 300 | tee -a "$out"
  done
  echo "round $round of $rounds done" >&2
done
node "$peers/summary.js" <"$out"
