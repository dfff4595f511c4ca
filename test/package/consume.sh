#!/usr/bin/env bash
# Builds one of the consumer projects beside this script as an outside project would use locksmith,
# then runs it against a redis-server of its own (it locks and unlocks once).
#
#   consume.sh find_package|fetch_content|readme SOURCE_DIR LOCKSMITH_BUILD_DIR WORK_DIR INITIAL_CACHE
#
# find_package: installs LOCKSMITH_BUILD_DIR (already built) into WORK_DIR/prefix, afresh, and
# finds it there. readme: the README's path for a newcomer (issue 28): installs as find_package
# does (the README's `cmake --install`), then takes the project's CMakeLists.txt (the first ```cmake
# block of "## Install") and its main.cpp (the ```cpp block of "## Quick start") from the README
# itself, configures them with the one option the README gives (CMAKE_PREFIX_PATH, the install
# prefix: no cache, no Boost hint), builds, and runs the program with the URL of a Redis of its own.
# fetch_content: pulls SOURCE_DIR in with FetchContent, which builds the library again.
# INITIAL_CACHE (cmake -C, not for readme) carries the compiler, its launcher, its flags and the
# prefix path of Boost from locksmith's own build; the find_package consumer clears the prefix
# path, so that it proves that the installed package finds Boost without a hint from its user.
# The consumer's build in WORK_DIR/build is kept between runs (not readme's).
# Exits 77 (skipped) after the build when redis-server is not installed.
set -euo pipefail
mode=$1 source_dir=$2 locksmith_build=$3 work=$4 cache=$5
mkdir -p "$work"
options=()
case $mode in
  find_package)
    rm -rf "$work/prefix"
    cmake --install "$locksmith_build" --prefix "$work/prefix" >"$work/install.log"
    # No Boost hint: the installed package must find the Boost it was built with by itself. A
    # cache kept from an earlier run would still know where Boost is, so it goes.
    options=(-Dlocksmith_ROOT="$work/prefix" -DCMAKE_PREFIX_PATH=)
    rm -f "$work/build/CMakeCache.txt"
    unset CMAKE_PREFIX_PATH Boost_ROOT BOOST_ROOT
    ;;
  fetch_content) options=(-DLOCKSMITH_SOURCE_DIR="$source_dir") ;;
  readme)
    unset CMAKE_PREFIX_PATH Boost_ROOT BOOST_ROOT
    rm -rf "$work/prefix" "$work/project"
    cmake --install "$locksmith_build" --prefix "$work/prefix" >"$work/install.log"
    mkdir -p "$work/project"
    # The first fenced block of the given language after the README's heading.
    block() {
      awk -v heading="$1" -v fence="\`\`\`$2" '
        $0 == heading { in_section = 1; next }
        in_section && /^## / { exit }
        in_section && !in_block && $0 == fence { in_block = 1; next }
        in_block && $0 == "```" { exit }
        in_block { print }' "$source_dir/README.md"
    }
    block "## Install" cmake >"$work/project/CMakeLists.txt"
    block "## Quick start" cpp >"$work/project/main.cpp"
    for f in CMakeLists.txt main.cpp; do
      [ -s "$work/project/$f" ] || { echo "consume.sh: no $f in the README" >&2; exit 1; }
    done
    ;;
  *) echo "consume.sh: no consumer $mode" >&2; exit 64 ;;
esac
echo "consume.sh: configuring and building the $mode consumer in $work/build"
if [ "$mode" = readme ]; then
  rm -rf "$work/build"
  (cd "$work/project" && cmake -S . -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null)
  cmake --build "$work/build" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
  program=$work/build/app
else
  cmake -S "$source_dir/test/package/$mode" -B "$work/build" -C "$cache" "${options[@]}" >/dev/null
  cmake --build "$work/build" --target consumer -j "${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
  program=$work/build/consumer
fi

command -v redis-server >/dev/null && command -v redis-cli >/dev/null || {
  echo "consume.sh: redis-server or redis-cli not in PATH: built the consumer, not run"
  exit 77
}

# A redis-server on a free loopback port: a port that another server holds makes ours exit, and
# the one that answers must be ours.
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait' EXIT
ours() { redis-cli -p "$port" info server 2>/dev/null | tr -d '\r' | grep -qx "process_id:$server"; }
for _ in $(seq 20); do
  port=$((20000 + RANDOM % 30000))
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >"$work/redis.log" &
  server=$!
  for _ in $(seq 500); do
    ours && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.01
  done
  ours && break
  kill "$server" 2>/dev/null || true
  server=
done
[ -n "$server" ] || { echo "consume.sh: could not start redis-server" >&2; exit 1; }

"$program" "redis://127.0.0.1:$port" | tee "$work/output.log"
if [ "$mode" = readme ]; then
  # What the README says it prints.
  grep -Eqx 'holding stock/42, fencing token [1-9][0-9]*' "$work/output.log" || {
    echo "consume.sh: the README's program did not print what the README says" >&2; exit 1; }
  key='locksmith:{stock/42}'
else
  key='locksmith:{package/consumer}'
fi
left=$(redis-cli -p "$port" exists "$key" | tr -d '\r')
[ "$left" = 0 ] || { echo "consume.sh: the consumer left its lock key" >&2; exit 1; }
echo "consume.sh: the $mode consumer locked and unlocked"
