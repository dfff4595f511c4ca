#!/usr/bin/env bash
# Installs what is missing (scripts/bootstrap.sh), then configures and builds into ./build.
# LOCKSMITH_BUILD_DIR: another build directory; Boost is still taken from ./build/_boost, unpacked
# once for all build directories. LOCKSMITH_SANITIZE: a -fsanitize= list (for example
# address,undefined or thread) for every target. LOCKSMITH_CMAKE_ARGS: more configure options,
# split at spaces (for example -DLOCKSMITH_BUILD_TOOLS=OFF); like any cache entry, they stay in
# that build directory until changed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${LOCKSMITH_BUILD_DIR:-$root/build}
sanitize=${LOCKSMITH_SANITIZE:-}
boost_prefix=$(LOCKSMITH_BUILD_DIR=$root/build "$root/scripts/bootstrap.sh")
# RelWithDebInfo with line tables only (-g1), not full debug information: backtraces, perf and
# sanitizer reports still name files and lines, and a file compiles in about a quarter less CPU
# (examples/http_gateway.cpp at -O2: 46.9 s with -g, 34.6 s with -g1). For a debugger's view of
# variables, configure another tree with LOCKSMITH_BUILD_TYPE=Debug.
flags=()
opt=-O2
if [ -n "$sanitize" ]; then
  # No recovery: the first finding fails the test that found it. -O1, as the sanitizers' manuals
  # advise: it compiles in about 40% less CPU than -O2 -g.
  san="-fsanitize=$sanitize -fno-sanitize-recover=all -fno-omit-frame-pointer"
  flags=(-DCMAKE_CXX_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$sanitize")
  opt=-O1
fi
flags+=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt -g1 -DNDEBUG")
read -ra extra <<<"${LOCKSMITH_CMAKE_ARGS:-}"
# A new tree is built with Ninja; an existing one keeps the generator it was made with.
[ -f "$build_dir/CMakeCache.txt" ] || ! command -v ninja >/dev/null || flags+=(-G Ninja)
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=${LOCKSMITH_BUILD_TYPE:-RelWithDebInfo} \
  ${boost_prefix:+-DCMAKE_PREFIX_PATH="$boost_prefix"} "${flags[@]}" "${extra[@]}" >/dev/null
cmake --build "$build_dir" -j"$(nproc)" "$@"
