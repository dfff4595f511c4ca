#!/usr/bin/env bash
# Installs what is missing (scripts/bootstrap.sh), then configures and builds into ./build.
# LOCKSMITH_BUILD_DIR: another build directory. LOCKSMITH_SANITIZE: a -fsanitize= list (for
# example address,undefined or thread) for every target; Boost is then taken from ./build/_boost,
# unpacked once for all build directories.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${LOCKSMITH_BUILD_DIR:-$root/build}
sanitize=${LOCKSMITH_SANITIZE:-}
boost_dir=$build_dir
[ -n "$sanitize" ] && boost_dir=$root/build
boost_prefix=$(LOCKSMITH_BUILD_DIR=$boost_dir "$root/scripts/bootstrap.sh")
flags=()
if [ -n "$sanitize" ]; then
  # No recovery: the first finding fails the test that found it.
  san="-fsanitize=$sanitize -fno-sanitize-recover=all -fno-omit-frame-pointer"
  flags=(-DCMAKE_CXX_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$sanitize")
fi
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=${LOCKSMITH_BUILD_TYPE:-RelWithDebInfo} \
  ${boost_prefix:+-DCMAKE_PREFIX_PATH="$boost_prefix"} "${flags[@]}" >/dev/null
cmake --build "$build_dir" -j"$(nproc)" "$@"
