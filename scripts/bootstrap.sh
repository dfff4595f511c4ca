#!/usr/bin/env bash
# Installs what locksmith needs on a Debian 12 machine, idempotently, and prints the CMake prefix
# under which Boost >= 1.91 is found (empty when the system's own Boost is new enough).
#
# Debian 12 ships Boost 1.81, which has no Boost.Redis. We take the newest libboost1.9x-dev from
# Debian's trixie-backports suite, on the mirror this machine already uses, and unpack it into a
# git-ignored prefix inside the build tree. It is never installed system-wide: its dependencies
# would pull in a newer libc.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${LOCKSMITH_BUILD_DIR:-$root/build}
prefix=$build_dir/_boost
min_boost=109100

log() { printf 'bootstrap: %s\n' "$*" >&2; }

sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_updated=
apt_update_once() {
  [ -n "$apt_updated" ] && return
  sudo_if_needed apt-get update -qq >&2
  apt_updated=1
}

# Debian packages, installed only when missing.
need=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
have_cmd g++ || need+=(g++)
have_cmd cmake || need+=(cmake)
have_cmd make || need+=(make)
# Ninja schedules the compiles of every target together (make waits for a target's dependencies
# to be built before it starts the target's own files): scripts/build.sh uses it for a new tree.
have_cmd ninja || need+=(ninja-build)
have_cmd redis-server || need+=(redis-server)
have_cmd redis-cli || need+=(redis-tools)
have_cmd gnuplot || need+=(gnuplot-nox)
# scripts/servers.sh unpacks the servers' upstream tarballs, Valkey's a .tar.xz (CI builds it):
# xz-utils is Debian's priority "standard", which a minimal image may lack.
have_cmd xz || need+=(xz-utils)
have_pkg libssl-dev || need+=(libssl-dev)
have_pkg libcli11-dev || need+=(libcli11-dev)
have_pkg ca-certificates || need+=(ca-certificates)
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  apt_update_once
  DEBIAN_FRONTEND=noninteractive sudo_if_needed apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
# The Debian redis-server package starts a system service; our tests start their own servers.

boost_version_of() { # prints BOOST_VERSION of an include dir, or 0
  local h=$1/boost/version.hpp
  [ -f "$h" ] && sed -n 's/^#define BOOST_VERSION \([0-9]*\).*/\1/p' "$h" || echo 0
}

if [ "$(boost_version_of /usr/include)" -ge $min_boost ]; then
  log "system Boost $(boost_version_of /usr/include) is new enough"
  exit 0
fi
if [ "$(boost_version_of "$prefix/usr/include")" -ge $min_boost ]; then
  echo "$prefix/usr"
  exit 0
fi

# The mirror this machine already uses for Debian's main archive (deb822 first, then one-line style).
mirror=
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  mirror=$(awk '
    /^URIs:/ { uris = $2 }
    /^Suites:/ { suites = $0 }
    /^$/ { if (uris != "" && suites !~ /security/ && suites ~ /bookworm|trixie|stable/) { print uris; exit } uris = ""; suites = "" }
    END { if (uris != "" && suites !~ /security/) print uris }' /etc/apt/sources.list.d/debian.sources | head -n1)
fi
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
  mirror=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)
fi
[ -n "$mirror" ] || { log "cannot find the Debian mirror in the apt sources"; exit 1; }

work=$build_dir/_boost_download
rm -rf "$work" && mkdir -p "$work/lists/partial" "$work/debs"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
echo "deb [signed-by=$keyring] $mirror trixie-backports main" >"$work/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$work/lists" -o Dir::State::status=/dev/null
          -o APT::Sandbox::User=root -qq)
log "reading trixie-backports from $mirror"
apt-get "${apt_opts[@]}" update >&2
pkg=$(apt-cache "${apt_opts[@]}" pkgnames libboost1.9 | grep -E '^libboost1\.9[0-9]+-dev$' | sort -V | tail -n1)
[ -n "$pkg" ] || { log "no libboost1.9x-dev in trixie-backports"; exit 1; }
log "downloading $pkg"
(cd "$work/debs" && apt-get "${apt_opts[@]}" download "$pkg" >&2)
rm -rf "$prefix" && mkdir -p "$prefix"
dpkg -x "$work"/debs/*.deb "$prefix"
rm -rf "$work"
v=$(boost_version_of "$prefix/usr/include")
[ "$v" -ge $min_boost ] || { log "unpacked Boost $v is too old"; exit 1; }
log "Boost $v unpacked into $prefix"
echo "$prefix/usr"
