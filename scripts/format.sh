#!/usr/bin/env bash
# Formats every C++ file that git tracks with .clang-format (installs clang-format if missing).
# --check: changes nothing, lists the files that are not formatted, and fails if there are any.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if ! command -v clang-format >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq clang-format >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq clang-format >/dev/null; fi
fi
mapfile -t files < <(git ls-files '*.cpp' '*.hpp')
if [ "${1:-}" = "--check" ]; then
  # One clang-format per core: the check is CI's first stage.
  mapfile -t bad < <(printf '%s\0' "${files[@]}" | xargs -0 -n 16 -P "$(nproc)" sh -c \
    'for f; do clang-format --style=file "$f" | cmp -s "$f" - || echo "$f"; done' sh | sort)
  if [ ${#bad[@]} -gt 0 ]; then
    printf 'format: not formatted (run scripts/format.sh):\n' >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files formatted"
else
  clang-format --style=file -i "${files[@]}"
fi
