#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang (address and undefined-behaviour sanitizers on)
# into build-fuzz/, and runs each for SECONDS (default 30) from its corpus in fuzz/corpus/.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      targets: url duration script_replies pushes
#
# New inputs the fuzzer finds go to build-fuzz/corpus/TARGET (copy the useful ones into
# fuzz/corpus/TARGET); a crash leaves its input in build-fuzz/artifacts/ and fails the script.
# Prints one line per target with its executions.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(url duration script_replies pushes)
out=$root/build-fuzz
boost_prefix=$(LOCKSMITH_BUILD_DIR=$root/build "$root/scripts/bootstrap.sh")
if ! command -v clang++ >/dev/null; then
  echo "fuzz: installing clang" >&2
  if [ "$(id -u)" = 0 ]; then apt-get install -y -qq clang >&2; else sudo apt-get install -y -qq clang >&2; fi
fi
mkdir -p "$out/artifacts"
cxx=(clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
     -I"$root/include" -I"$root/src" -I"${boost_prefix:-/usr}/include" -DBOOST_ASIO_NO_DEPRECATED)
declare -A sources=(
  [url]="fuzz/fuzz_url.cpp src/sansio/url.cpp"
  [duration]="fuzz/fuzz_duration.cpp"
  [script_replies]="fuzz/fuzz_script_replies.cpp src/sansio/scripts.cpp src/api/error.cpp"
  [pushes]="fuzz/fuzz_pushes.cpp src/sansio/pushes.cpp"
)
fuzz_one() { # builds (if needed) and runs one target; prints its line; fails on a finding
  local t=$1 bin=$out/fuzz_$1 log=$out/fuzz_$1.log srcs=() s result execs
  for s in ${sources[$t]}; do srcs+=("$root/$s"); done
  # Rebuilt only when a source is newer than the binary.
  if [ ! -x "$bin" ] || [ -n "$(find "${srcs[@]}" "$root/include" "$root/src" "$root/fuzz" -newer "$bin" -print -quit)" ]; then
    echo "fuzz: building $t" >&2
    "${cxx[@]}" "${srcs[@]}" -o "$bin" -lssl -lcrypto
  fi
  mkdir -p "$out/corpus/$t"
  if "$bin" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$out/artifacts/${t}-" \
       "$out/corpus/$t" "$root/fuzz/corpus/$t" >"$log" 2>&1; then
    result=ok
  else
    result="FAILED (see $log and $out/artifacts)"
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
  echo "fuzz $t: ${execs:-?} executions in ${seconds}s: $result"
  [ "$result" = ok ]
}

for t in "${targets[@]}"; do
  [ -n "${sources[$t]:-}" ] || { echo "fuzz: no target $t" >&2; exit 64; }
done
# As many targets at once as there are cores: a libFuzzer run takes one core for its SECONDS.
status=0 running=0
for t in "${targets[@]}"; do
  if [ $running -ge "$(nproc)" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
for _ in $(seq $running); do wait -n || status=1; done
exit $status
