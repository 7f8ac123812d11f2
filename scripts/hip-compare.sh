#!/usr/bin/env bash
# hip-compare.sh - run a kernel emitted by `regsweep emit` next to the compiler's own on an AMD GPU:
# identical inputs, outputs compared byte for byte, both timed (scripts/hip-compare.cpp).
# Needs ROCm (hipcc, a gfx90a device). NEVER run in CI: there is no GPU there (docs/emit.md).
#
# usage: scripts/hip-compare.sh OWN.hsaco EMITTED.hsaco KERNEL GRIDX BLOCKX REPS ARG...
#   e.g. sgemm 256x256x256, BM=BN=32 TM=TN=2 (256 threads per group, 64 groups), float:
#   scripts/hip-compare.sh own.hsaco emitted.hsaco sgemm_tiled 64 256 100 \
#       buf:262144 buf:262144 buf:262144 i32:256 i32:256 i32:256 f32:1.0 f32:0.5
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v hipcc >/dev/null || { echo "hip-compare: hipcc not found (install ROCm; this needs an AMD GPU)" >&2; exit 2; }
[ $# -ge 6 ] || { sed -n '5,9p' "$0" >&2; exit 2; }
bin="${TMPDIR:-/tmp}/hip-compare.$$"
trap 'rm -f "$bin"' EXIT
hipcc -O2 -o "$bin" "$here/hip-compare.cpp"
"$bin" "$@"
