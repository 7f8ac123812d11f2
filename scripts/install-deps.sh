#!/usr/bin/env bash
# Install every Debian 12 package regsweep needs to build, test and run. Idempotent: when all
# packages are present it only checks (no apt-get update), so a second run takes a second.
set -euo pipefail
PKGS=(build-essential cmake pkg-config git
      libopenmpi-dev openmpi-bin libz3-dev libcjson-dev libhwloc-dev hwloc
      libhdf5-dev hdf5-tools libcurl4-openssl-dev gnuplot-nox clang-14 llvm-14 libclang-rt-14-dev
      valgrind python3 curl bc
      clang-16 llvm-16)  # archs: llc-16 for gfx940 (MI300) and gfx1100 (RDNA3)
# The Slurm test runs a real slurmctld/slurmd: their recommended plugins (PMIx) are needed too.
WITH_RECOMMENDS=(slurm-wlm munge)
missing=() missing_rec=()
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
for p in "${PKGS[@]}"; do have "$p" || missing+=("$p"); done
for p in "${WITH_RECOMMENDS[@]}"; do have "$p" || missing_rec+=("$p"); done
if [ ${#missing[@]} -eq 0 ] && [ ${#missing_rec[@]} -eq 0 ]; then
  echo "install-deps: all $(( ${#PKGS[@]} + ${#WITH_RECOMMENDS[@]} )) packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing ${missing[*]} ${missing_rec[*]}"
$SUDO apt-get update -qq
export DEBIAN_FRONTEND=noninteractive
[ ${#missing[@]} -eq 0 ] || $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
[ ${#missing_rec[@]} -eq 0 ] || $SUDO apt-get install -y -qq "${missing_rec[@]}"
