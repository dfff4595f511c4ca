#!/usr/bin/env bash
# locksmith beside node-redlock on one redis-server that this script starts on a free loopback
# port: the uncontended cycle (one worker, one name), 64 workers of one process on their own
# names, and the handoff between 2 workers of one process on one name (node-redlock polls every
# 10 ms with up to 10 ms of jitter; locksmith waits for the release's message), in alternated
# rounds so that both see the same machine. locksmith-bench's rows include its raw floor
# (`SET NX PX` + `DEL` by hand), and its unfenced lock (--no-fence). Then RedLock over 5 nodes
# (4 more servers): locksmith's one-attempt cycle (`--scenario quorum --frozen 0`), fenced and
# unfenced, beside node-redlock's over the same 5 nodes. Needs node and npm; the peers' packages are
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
server_pids=()
cleanup() {
  for pid in "${server_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# Starts a redis-server on a free port, in a folder of its own, and appends its port to `ports`.
ports=()
start_server() {
  local dir port pid
  dir=$(mktemp -d "$work/redis.XXXXXX")
  for _ in $(seq 20); do
    port=$((20000 + RANDOM % 30000))
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
      --logfile "$dir/redis.log" &
    pid=$!
    for _ in $(seq 50); do
      redis-cli -p "$port" ping >/dev/null 2>&1 && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if redis-cli -p "$port" ping >/dev/null 2>&1; then
      server_pids+=("$pid")
      ports+=("$port")
      return 0
    fi
    kill "$pid" 2>/dev/null || true
  done
  echo "run.sh: no redis-server started" >&2
  exit 1
}
# One node for the single-node shapes; it and four more for RedLock over 5 nodes.
for _ in 1 2 3 4 5; do start_server; done
port=${ports[0]}
urls=$(printf 'redis://127.0.0.1:%s,' "${ports[@]}")
urls=${urls%,}
all_ports=$(IFS=,; echo "${ports[*]}")

out=$work/runs.jsonl
for round in $(seq "$rounds"); do
  "$build_dir/locksmith-bench" --redis "redis://127.0.0.1:$port" --scenario uncontended,independent \
    --strategy subscribe --duration "${duration_ms}ms" --json | tee -a "$out"
  "$build_dir/locksmith-bench" --redis "redis://127.0.0.1:$port" --scenario handoff --workers 2 \
    --processes 1 --strategy subscribe --duration "${duration_ms}ms" --json | tee -a "$out"
  # The unfenced lock (lock_options::fence = false) in the same shapes, beside its raw floor.
  "$build_dir/locksmith-bench" --redis "redis://127.0.0.1:$port" --scenario uncontended,independent \
    --strategy subscribe --no-fence --duration "${duration_ms}ms" --json | grep -v '"raw"' |
    tee -a "$out"
  for sc in uncontended independent handoff; do
    node "$peers/node-redlock.js" --port "$port" --scenario "$sc" \
      --duration-ms "$duration_ms" --warmup-ms 300 | tee -a "$out"
  done
  # RedLock over 5 nodes: one worker, one name, one attempt per cycle, fenced and unfenced.
  for fence in "" --no-fence; do
    "$build_dir/locksmith-bench" --redis "$urls" --scenario quorum --frozen 0 $fence \
      --duration "${duration_ms}ms" --json | tee -a "$out"
  done
  node "$peers/node-redlock.js" --ports "$all_ports" --scenario uncontended \
    --duration-ms "$duration_ms" --warmup-ms 300 | tee -a "$out"
  echo "round $round of $rounds done" >&2
done
node "$peers/summary.js" <"$out"
