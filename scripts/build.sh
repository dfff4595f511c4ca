#!/usr/bin/env bash
# Installs what is missing (scripts/bootstrap.sh), then configures and builds into ./build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${LOCKSMITH_BUILD_DIR:-$root/build}
boost_prefix=$(LOCKSMITH_BUILD_DIR=$build_dir "$root/scripts/bootstrap.sh")
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=${LOCKSMITH_BUILD_TYPE:-RelWithDebInfo} \
  ${boost_prefix:+-DCMAKE_PREFIX_PATH="$boost_prefix"} >/dev/null
cmake --build "$build_dir" -j"$(nproc)" "$@"
