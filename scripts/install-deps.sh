#!/usr/bin/env bash
# Install every Debian 12 package regsweep needs to build, test and run. Idempotent: when all
# packages are present it only checks (no apt-get update), so a second run takes a second.
set -euo pipefail
PKGS=(build-essential cmake pkg-config git
      libopenmpi-dev openmpi-bin libz3-dev libcjson-dev libhwloc-dev hwloc
      libhdf5-dev hdf5-tools libcurl4-openssl-dev gnuplot-nox clang-14 llvm-14 lld-14 libclang-rt-14-dev
      valgrind python3 curl bc jq   # jq: bench/bench_reward.sh, tests/test_reward_client.sh
      clang-16 llvm-16   # archs: llc-16 for gfx940 (MI300) and gfx1100 (RDNA3)
      clang-22 llvm-22 lld-22  # llc-22: gfx942, gfx950 (MI300X/MI355X), gfx1200/gfx1201 (RDNA4); bookworm-security
      rocm-device-libs libamdhip64-dev)  # corpus import: OpenCL library on gfx940, HIP device-only compiles (test_corpus_import_hip)
# The Slurm test runs a real slurmctld/slurmd: their recommended plugins (PMIx) are needed too.
WITH_RECOMMENDS=(slurm-wlm munge)
# ---- nvdisasm (sass-tools) ------------------------------------------------------------------
# CUDA 13 ships no nvdisasm/cuobjdump. When none is on PATH and none is extracted yet, take the
# binaries of Debian non-free's nvidia-cuda-toolkit 11.8 (84 MB .deb): `apt-get download` and
# `dpkg-deb -x` into /opt/nvidia-cuda-11.8, so nothing of its dependency tree is installed and
# /usr/local/cuda (CUDA 13) is untouched. regsweep looks there after --nvdisasm and PATH.
NV118="${NV118_DIR:-/opt/nvidia-cuda-11.8}"
nvdisasm_118() {
  if command -v nvdisasm >/dev/null 2>&1; then
    echo "install-deps: nvdisasm on PATH: $(command -v nvdisasm)"; return 0
  fi
  if [ -x "$NV118/usr/bin/nvdisasm" ] && "$NV118/usr/bin/nvdisasm" --version >/dev/null 2>&1; then
    echo "install-deps: nvdisasm present: $NV118/usr/bin/nvdisasm"; return 0
  fi
  local S="" nf=/etc/apt/sources.list.d/nonfree.sources mirror tmp
  [ "$(id -u)" -eq 0 ] || S=sudo
  if ! grep -qsE '^[^#]*bookworm([[:space:]].*)?[[:space:]]non-free([[:space:]]|$)|^Components:.*[[:space:]]non-free([[:space:]]|$)' \
       /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; then
    # the mirror of the existing bookworm main source (deb822 or one-line style)
    mirror="$(awk '/^URIs:/{u=$2} /^Suites:/ && / bookworm( |$)/{print u; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null)"
    [ -n "$mirror" ] || mirror="$(awk '$1=="deb" && $3=="bookworm"{print $2; exit}' /etc/apt/sources.list 2>/dev/null)"
    [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
    echo "install-deps: adding Debian non-free (bookworm, $mirror) as $nf"
    printf 'Types: deb\nURIs: %s\nSuites: bookworm\nComponents: non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$mirror" | $S tee "$nf" >/dev/null
  fi
  $S apt-get update -qq
  tmp="$(mktemp -d)"; chmod 755 "$tmp"  # apt downloads as _apt
  (cd "$tmp" && apt-get download -qq nvidia-cuda-toolkit)
  $S mkdir -p "$NV118"
  $S dpkg-deb -x "$tmp"/nvidia-cuda-toolkit_*.deb "$NV118"
  rm -rf "$tmp"
  "$NV118/usr/bin/nvdisasm" --version | tail -1 | sed 's/^/install-deps: nvdisasm extracted: /'
}
# ---- end nvdisasm ------------------------------------------------------------------------------
missing=() missing_rec=()
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
for p in "${PKGS[@]}"; do have "$p" || missing+=("$p"); done
for p in "${WITH_RECOMMENDS[@]}"; do have "$p" || missing_rec+=("$p"); done
if [ ${#missing[@]} -eq 0 ] && [ ${#missing_rec[@]} -eq 0 ]; then
  echo "install-deps: all $(( ${#PKGS[@]} + ${#WITH_RECOMMENDS[@]} )) packages present"
  nvdisasm_118
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing ${missing[*]} ${missing_rec[*]}"
$SUDO apt-get update -qq
export DEBIAN_FRONTEND=noninteractive
[ ${#missing[@]} -eq 0 ] || $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
[ ${#missing_rec[@]} -eq 0 ] || $SUDO apt-get install -y -qq "${missing_rec[@]}"
nvdisasm_118
