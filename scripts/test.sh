#!/usr/bin/env bash
# Builds everything and runs every test (unit, then integration against real redis-server processes
# that the tests start themselves on free loopback ports).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${LOCKSMITH_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
ctest --test-dir "$build_dir" --output-on-failure --timeout 900 "$@"
