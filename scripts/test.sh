#!/usr/bin/env bash
# Builds everything and runs every test (unit, then integration against real redis-server processes
# that the tests start themselves on free loopback ports, then the package tests: a find_package and
# a FetchContent consumer built outside this build, see test/package/).
#
#   scripts/test.sh [--server NAME] [--sanitize address,undefined | --sanitize thread]
#                   [ctest options...]
#
# --server NAME runs the tests against one server of the matrix (redis-7.0, the system's; redis-8.0,
# valkey-8.1, redis-6.0: see scripts/servers.sh, which builds it first if needed) instead of the
# redis-server in PATH: LOCKSMITH_REDIS_SERVER names its binary for the tests, and its bin
# directory comes first in PATH (redis-cli, and the package test's server). A test that needs a
# newer server than that one is skipped, and the log says why.
#
# --sanitize builds the library, the tool and both test binaries with those sanitizers into a
# build directory of their own (build-asan for address,undefined, build-tsan for thread, else
# build-san), and runs the same tests there, but for the package tests. A finding fails the test
# that made it. LOCKSMITH_TEST_TARGETS names the targets that it builds instead of both test
# binaries: CI's thread-sanitizer stage builds the thread tests alone (integration_tests with
# -DLOCKSMITH_INTEGRATION_FILTER, see CONTRIBUTING.md, "Sanitizers").
#
# LOCKSMITH_BUILD_DIR and LOCKSMITH_CMAKE_ARGS go to scripts/build.sh: for example, the tests of a
# build without the tool and the examples, in a directory of its own:
#
#   LOCKSMITH_BUILD_DIR=build-notools LOCKSMITH_CMAKE_ARGS=-DLOCKSMITH_BUILD_TOOLS=OFF \
#     scripts/test.sh -LE package
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --server ]; then
  [ $# -ge 2 ] || { echo "usage: $0 [--server NAME] [--sanitize LIST] [ctest options...]" >&2; exit 64; }
  "$root/scripts/servers.sh" "$2" >&2
  bin=${LOCKSMITH_SERVERS_DIR:-$root/build/servers}/$2/bin
  export LOCKSMITH_REDIS_SERVER=$bin/redis-server PATH=$bin:$PATH
  echo "test.sh: testing against $("$LOCKSMITH_REDIS_SERVER" --version)" >&2
  shift 2
fi
sanitize=
if [ "${1:-}" = --sanitize ]; then
  [ $# -ge 2 ] || { echo "usage: $0 [--sanitize LIST] [ctest options...]" >&2; exit 64; }
  sanitize=$2
  shift 2
fi
if [ -z "$sanitize" ]; then
  build_dir=${LOCKSMITH_BUILD_DIR:-$root/build}
  "$root/scripts/build.sh"
else
  case $sanitize in
    address,undefined | undefined,address) dir=build-asan ;;
    thread) dir=build-tsan ;;
    *) dir=build-san ;;
  esac
  build_dir=${LOCKSMITH_BUILD_DIR:-$root/$dir}
  read -ra targets <<<"${LOCKSMITH_TEST_TARGETS:-unit_tests integration_tests}"
  LOCKSMITH_BUILD_DIR=$build_dir LOCKSMITH_SANITIZE=$sanitize \
    "$root/scripts/build.sh" --target "${targets[@]}"
  # The package tests build consumers outside this build: nothing for a sanitizer to check there.
  set -- -LE package "$@"
  # A finding ends the process with its report on stderr, which CTest shows.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
fi
# The integration tests are one CTest test per suite, and two run side by side unless
# LOCKSMITH_TEST_JOBS (or a -j among the ctest options) says otherwise: much of a suite's time is
# waiting on servers and timers, and the tests are meant to pass on a loaded machine (they wait for
# events with deadlines). LOCKSMITH_TEST_JOBS=1 runs one at a time, to tell a failure of a test
# from one of the load.
ctest --test-dir "$build_dir" --output-on-failure --timeout 900 -j"${LOCKSMITH_TEST_JOBS:-2}" "$@"
