#!/usr/bin/env bash
# Register-capped variants of our own flash_attn_fwd.cu (corpus/kernels) where ptxas spills below
# the hardware limit: the fixtures of tests/test_sass_spills.sh (tests/fixtures/sass-spills).
# The cap is the PTX directive .maxnreg N after .maxntid, what -maxrregcount N does for a kernel
# without __launch_bounds__ (flash_attn_fwd.cu has __launch_bounds__(THREADS), which makes nvcc
# ignore -maxrregcount). ptxas -v's log is kept beside each cubin.
#   scripts/build-spill-fixtures.sh [OUT_DIR]      (default tests/fixtures/sass-spills)
set -euo pipefail
out="${1:-tests/fixtures/sass-spills}"
nvcc="${NVCC:-/usr/local/cuda/bin/nvcc}"
ptxas="${PTXAS:-/usr/local/cuda/bin/ptxas}"
k=corpus/kernels/flash_attn_fwd.cu
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
mkdir -p "$out"
one() { # NAME COMPUTE SM CAP -Dmacros...
  local n=$1 v=$2 sm=$3 cap=$4
  shift 4
  "$nvcc" -O3 -ptx -arch=compute_$v "$@" "$k" -o "$t/$n.ptx"
  awk -v cap="$cap" '{print} /^\.maxntid/ {print ".maxnreg " cap}' "$t/$n.ptx" >"$t/$n.cap.ptx"
  "$ptxas" -arch=sm_$sm -v "$t/$n.cap.ptx" -o "$out/$n.sm_$sm.cubin" >"$out/$n.sm_$sm.ptxas-v.txt" 2>&1
  cat "$out/$n.sm_$sm.ptxas-v.txt"
}
one fa_hd96_r128 80 80 128 -DHD=96
one fa_hd128_r128 80 80 128 -DHD=128
one fa_hd64x2_r168 80 86 168 -DHD=64 -DRPT=2
one fa_hd64x2_r168 90 90 168 -DHD=64 -DRPT=2
one fa_dstat64x2_r168 80 80 168 -DHD=64 -DRPT=2 -DSTAT=double # 64-bit m, l: STL.64/LDL.64 spills
one fa_dstat64x2_r160 80 80 160 -DHD=64 -DRPT=2 -DSTAT=double
one fa_dstat64x2_r168 90 90 168 -DHD=64 -DRPT=2 -DSTAT=double # sm_90: STL.64/LDL.64 spills, all promoted
