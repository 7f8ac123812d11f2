#!/usr/bin/env bash
# Install every Debian 12 package regsweep needs to build, test and run. Idempotent: when all
# packages are present it only checks (no apt-get update), so a second run takes a second.
set -euo pipefail
PKGS=(build-essential cmake pkg-config git
      libopenmpi-dev openmpi-bin libz3-dev libcjson-dev libhwloc-dev hwloc
      libhdf5-dev hdf5-tools libcurl4-openssl-dev gnuplot-nox clang-14 llvm-14
      valgrind)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
