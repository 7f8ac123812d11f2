#!/usr/bin/env bash
# The GPU harness (tools/sass_run.c) on the fixture sgemm_t4x4 sm_90 kernel: its original cubin and
# the one `regalloc --free -o` writes (0 scoreboard hazards) run on the same seeded inputs (corpus/kernels/sgemm_tiled.launch)
# and every output byte must be identical, with the driver's register count the one written.
# SKIPPED (77), never passed, where there is no cuda.h to build it, no nvdisasm to write the
# recoloured cubin, or no CUDA driver/GPU (sass_run itself says which).
set -uo pipefail
cli="$1"
run="$(dirname "$cli")/tools/sass_run"
[ -x "$run" ] || { echo "test_sass_run: SKIPPED: sass_run not built (no cuda.h)"; exit 77; }
nd="${NVDISASM:-$(command -v nvdisasm || echo /opt/nvidia-cuda-11.8/usr/bin/nvdisasm)}"
[ -x "$nd" ] || { echo "test_sass_run: SKIPPED: no nvdisasm"; exit 77; }
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
c=tests/fixtures/sass/sgemm_t4x4.sm_90.cubin
"$cli" regalloc "$c" --free -q -o "$t/free.cubin" --nvdisasm "$nd" >"$t/log" 2>&1 || { cat "$t/log"; echo "FAIL: regalloc --free"; exit 1; }
# ptxas's scoreboards are in the free Problem: nvdisasm's listing of the written cubin races none
"$cli" lower hazards "$t/free.cubin" >"$t/log" 2>&1 && grep -q "^hazards: 1 listings, 0 hazards" "$t/log" || { cat "$t/log"; echo "FAIL: scoreboard hazards"; exit 1; }
after=$("$cli" lower regcounts "$t/free.cubin" | sed -n 's/.*EIATTR_REGCOUNT \([0-9]*\).*/\1/p')
[ -n "$after" ] || { echo "FAIL: no register count in the written cubin"; exit 1; }
"$run" --recipe corpus/kernels/sgemm_tiled.launch --params "-DTM=4 -DTN=4" "$c" "$t/free.cubin" --rounds 3 >"$t/out" 2>&1
rc=$?
cat "$t/out"
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || { echo "FAIL: outputs differ or CUDA error (exit $rc)"; exit 1; }
grep -q "registers (driver) [0-9]* -> $after;.* identical" "$t/out" || { echo "FAIL: driver count is not $after"; exit 1; }
echo "test_sass_run: ok"
