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
flags=()
if [ -n "$sanitize" ]; then
  # No recovery: the first finding fails the test that found it. -O1 with line tables, as the
  # sanitizers' manuals advise: reports still name files and lines, and it compiles in about 40%
  # less CPU than RelWithDebInfo's -O2 -g.
  san="-fsanitize=$sanitize -fno-sanitize-recover=all -fno-omit-frame-pointer"
  flags=(-DCMAKE_CXX_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$sanitize"
         -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG")
fi
read -ra extra <<<"${LOCKSMITH_CMAKE_ARGS:-}"
# A new tree is built with Ninja; an existing one keeps the generator it was made with.
[ -f "$build_dir/CMakeCache.txt" ] || ! command -v ninja >/dev/null || flags+=(-G Ninja)
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=${LOCKSMITH_BUILD_TYPE:-RelWithDebInfo} \
  ${boost_prefix:+-DCMAKE_PREFIX_PATH="$boost_prefix"} "${flags[@]}" "${extra[@]}" >/dev/null
cmake --build "$build_dir" -j"$(nproc)" "$@"
