#!/usr/bin/env bash
# A RET returns to the calls of its own subroutine (sass/sass_parse.c ret_edges), on real ptxas 13
# output: MAGMA 2.6.2's slarfg kernel for sm_80 calls the sqrt slowpath, stores through R[6:7],
# then calls the rcp slowpath, which writes R6. With every RET returning to every call site the
# rcp slowpath's RET reached the sqrt call's return point and the store again, so R[6:7] looked
# live inside the rcp slowpath and ptxas's own colouring broke the joins conflicts:
# `--pinned` with the cubin's control bits said "R6@0140 (R[6:7]) and R6@0740 (R6) are live
# together". Asserted: pinned identical with ptxas's scoreboards, free valid in one round.
set -euo pipefail
bin=$(realpath "$1")
d=tests/fixtures/sass/front/ops
s=$d/magma_slarfg_callret.sm_80.sass
c=$d/magma_slarfg_callret.sm_80.cubin
fail=0
out=$("$bin" regalloc "$s" --scoreboards "$c" --pinned 2>&1) || { echo "$out"; echo "FAIL: pinned with scoreboards"; fail=1; }
grep -q 'identical (176 values, 288 instructions' <<<"$out" || { echo "$out"; echo "FAIL: pinned not identical"; fail=1; }
out=$("$bin" regalloc "$s" --cubin "$c" --pinned 2>&1) || { echo "$out"; echo "FAIL: pinned lowering"; fail=1; }
out=$("$bin" regalloc "$s" --scoreboards "$c" --free 2>&1) || { echo "$out"; echo "FAIL: free"; fail=1; }
grep -q '1 round.*contributor sets equivalent.*verifier: pass' <<<"$out" || { echo "$out"; echo "FAIL: free not valid"; fail=1; }
echo "$out"
exit $fail
