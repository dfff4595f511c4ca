#!/usr/bin/env bash
# Builds the servers of the test matrix from Debian's source packages into build/servers/NAME/bin
# (redis-server and redis-cli), never system-wide, and prints the bin directory of each.
#
#   scripts/servers.sh [NAME...]      default: every name below; one already built is kept
#
#   redis-7.0    the system's /usr/bin/redis-server (Debian 12's 7.0.15): nothing to build
#   redis-8.0    Debian 13 (trixie) redis 8.0.x
#   valkey-8.1   Debian 13 (trixie) valkey 8.1.x
#   redis-6.0    Debian 11 (bullseye) redis 6.0.16: the oldest supported (see the README)
#
# The upstream tarball (.orig.tar.*) comes from the suite's source package, fetched with
# `apt-get source --download-only` against a temporary deb-src list of this machine's own Debian
# mirror (read from the apt sources, as scripts/bootstrap.sh does), with the package lists kept in
# the build tree. apt checks the tarball against the suite's signed index. It is built with plain
# `make` with TLS (libc malloc, no modules: about two minutes on two quiet cores), one at a time.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${LOCKSMITH_SERVERS_DIR:-$root/build/servers}
# The compiler, make and libssl-dev (the servers are built with TLS) on a fresh machine; it
# prints Boost's prefix, which is not needed here.
"$root/scripts/bootstrap.sh" >/dev/null
jobs=${LOCKSMITH_SERVERS_JOBS:-$(nproc)}
all=(redis-7.0 redis-8.0 valkey-8.1 redis-6.0)

log() { printf 'servers: %s\n' "$*" >&2; }

# name -> "suite package upstream-version-prefix"
source_of() {
  case $1 in
    redis-8.0) echo "trixie redis 8.0." ;;
    valkey-8.1) echo "trixie valkey 8.1." ;;
    redis-6.0) echo "bullseye redis 6.0." ;;
    *) return 1 ;;
  esac
}

mirror_uri() { # the first non-security Debian archive URI of the machine's apt sources
  local m=
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    m=$(awk '
      /^URIs:/ { uris = $2 }
      /^Suites:/ { suites = $0 }
      /^$/ { if (uris != "" && suites !~ /security/) { print uris; exit } uris = ""; suites = "" }
      END { if (uris != "" && suites !~ /security/) print uris }' \
      /etc/apt/sources.list.d/debian.sources | head -n1)
  fi
  if [ -z "$m" ] && [ -f /etc/apt/sources.list ]; then
    m=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++)
          if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)
  fi
  [ -n "$m" ] || { log "cannot find the Debian mirror in the apt sources"; exit 1; }
  echo "$m"
}

apt_dir=$out/_apt
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt_dir/lists" -o Dir::State::status=/dev/null
          -o "Dir::Cache=$apt_dir/cache" -o APT::Sandbox::User=root -qq)
apt_ready=
apt_once() { # reads the deb-src indexes of the suites to build from (args), once per run
  [ -n "$apt_ready" ] && return
  local m keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  m=$(mirror_uri)
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  printf "deb-src [signed-by=$keyring] $m %s main\n" "$@" >"$apt_dir/sources.list"
  log "reading the source indexes of $*"
  apt-get "${apt_opts[@]}" update >&2
  apt_ready=1
}

fetch_tarball() { # suite package prefix -> prints the path of the upstream tarball
  local suite=$1 pkg=$2 prefix=$3 version dir=$out/_src
  # The suite's version: the newest whose upstream part starts with prefix (trixie's index may
  # hold a point release and forky's a newer upstream; we ask only for the matching one).
  version=$(apt-cache "${apt_opts[@]}" showsrc "$pkg" | awk -v p="$prefix" '
    /^Version:/ { v = $2; u = v; sub(/^[0-9]+:/, "", u); if (index(u, p) == 1) print v }' |
    sort -V | tail -n1)
  [ -n "$version" ] || { log "no $pkg $prefix* source package in $suite"; exit 1; }
  mkdir -p "$dir"
  log "downloading $pkg=$version"
  # The .dsc and the Debian patches of a point release may sit elsewhere on the mirror; only the
  # upstream tarball is needed, and apt has checked whatever it downloaded.
  (cd "$dir" && apt-get "${apt_opts[@]}" source --download-only "$pkg=$version" >&2) ||
    log "(apt-get source reported a missing file; only the .orig tarball is used)"
  local upstream=${version#*:}
  upstream=${upstream%-*}
  local tarball
  tarball=$(ls "$dir/${pkg}_${upstream}.orig.tar."* 2>/dev/null | head -n1)
  [ -n "$tarball" ] || { log "no upstream tarball for $pkg=$version"; exit 1; }
  echo "$tarball"
}

build_one() { # name
  local name=$1 dest=$out/$1 suite pkg prefix tarball src
  if [ "$name" = redis-7.0 ]; then
    mkdir -p "$dest/bin"
    ln -sf /usr/bin/redis-server "$dest/bin/redis-server"
    ln -sf /usr/bin/redis-cli "$dest/bin/redis-cli"
    return
  fi
  read -r suite pkg prefix <<<"$(source_of "$name")"
  if [ -x "$dest/bin/redis-server" ] && [ -x "$dest/bin/redis-cli" ]; then
    log "$name already built"
    return
  fi
  apt_once "${suites[@]}"
  tarball=$(fetch_tarball "$suite" "$pkg" "$prefix")
  src=$out/_build/$name
  rm -rf "$src" && mkdir -p "$src"
  tar -xf "$tarball" -C "$src" --strip-components=1
  log "building $name from $(basename "$tarball") (log: $src/make.log)"
  local server=redis-server cli=redis-cli
  [ "$pkg" = valkey ] && { server=valkey-server; cli=valkey-cli; }
  # libc malloc: the matrix checks commands and replies, not allocator speed. With TLS, which the
  # tls and cli_security suites start their servers with (libssl-dev: scripts/bootstrap.sh).
  make -C "$src" -j"$jobs" MALLOC=libc BUILD_TLS=yes >"$src/make.log" 2>&1 ||
    { tail -n 30 "$src/make.log" >&2; log "building $name failed"; exit 1; }
  mkdir -p "$dest/bin"
  cp "$src/src/$server" "$dest/bin/redis-server"
  cp "$src/src/$cli" "$dest/bin/redis-cli"
  rm -rf "$src"
}

[ $# -gt 0 ] || set -- "${all[@]}"
suites=()
for name in "$@"; do
  [ "$name" = redis-7.0 ] && continue
  read -r suite _ <<<"$(source_of "$name")" || { log "unknown server $name (${all[*]})"; exit 64; }
  [[ " ${suites[*]} " == *" $suite "* ]] || suites+=("$suite")
done
for name in "$@"; do
  build_one "$name"
  echo "$name $out/$name/bin ($("$out/$name/bin/redis-server" --version | head -n1))"
done
