#!/usr/bin/env bash
# Builds the API reference from the public headers (include/locksmith, detail/ excluded) with
# Doxygen into build/docs (html/index.html), and fails on any warning: a broken @ref, or a public
# name without documentation. Installs doxygen if it is missing, as bootstrap.sh does for the rest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${LOCKSMITH_BUILD_DIR:-$root/build}
if ! command -v doxygen >/dev/null 2>&1; then
  echo "docs: installing doxygen" >&2
  if [ "$(id -u)" = 0 ]; then apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends doxygen >&2
  else sudo apt-get update -qq >&2 && sudo apt-get install -y -qq --no-install-recommends doxygen >&2; fi
fi
mkdir -p "$build_dir/docs"
cd "$root"
# The Doxyfile reads its output directory from the environment, so that the reference goes into
# whichever build tree the caller uses.
LOCKSMITH_DOCS_OUT=$build_dir/docs doxygen docs/Doxyfile
echo "docs: $build_dir/docs/html/index.html"
