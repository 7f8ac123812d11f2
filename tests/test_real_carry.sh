#!/usr/bin/env bash
# regsweep's own OpenCL kernels for the carries-move-up rule (tests/fixtures/carry/*.cl, written for
# these tests: a 4-wide local-memory tile GEMM, a vload4/vstore4 tile transpose with size_t
# indices, a 4-bit block dot product) on gfx940 (clang-16/llc-16 + rocm-device-libs) and gfx942
# (clang-22/llc-22 + rocm-device-libs):
#  - LLVM's own allocation passes our Problem: every row has exact truth, the import prints
#    0 truths inconsistent. Before mir/carry.c + analysis/liveness.c (base 374223a) the tile GEMM
#    on gfx942 was refused, "LLVM's allocation violates 10 constraints" (the high half of a
#    V_MAD_U64_U32 addend reused while the result's high half is dead), and the two kernels with
#    library calls were refused on gfx942 ("calls are not supported"): this test fails there;
#  - on gfx942 the 5.2 OpenCL library resolves every builtin (vload4/vstore4/vload_half/
#    convert_float4 through their AS0 names): no library call refused, route in the params;
#  - the oracle: truths accepted by both verifiers, mutants rejected with their category;
#  - each postsplit truth emitted through its llc: MachineVerifier ok, counts equal.
# Skipped (77) without clang-16/22, llc-16/22 or rocm-device-libs.
set -euo pipefail
source "$(dirname "$0")/real_amd.sh"
real_setup "$1" clang-16 llc-16 clang-22 llc-22 llvm-dis-22 llvm-as-22 llvm-cxxfilt-22
real_import tests/fixtures/carry/carry.tsv carry
"$bin" corpus list "$C" --params > "$tmp/list"
check 'grep -q "3 kernels -> 12 instances" "$tmp/import.log"' "12 instances from 3 kernels"
check 'grep -q "12 with ground truth, 0 build failures, 0 prera truths split by LLVM, 0 truths inconsistent" "$tmp/import.log"' \
  "every row with exact truth, LLVM's allocation never rejected"
for k in tile_gemm vload_tile qblock_dot; do for f in prera postsplit; do
  check 'grep -q "^carry/carry_$k.carry_$k/gfx940/$f	.*	truth	file=carry_$k.cl via=clang-16+rocm-device-libs " "$tmp/list"' \
    "$k gfx940 $f: exact truth"
  check 'grep -q "^carry/carry_$k.carry_$k/gfx942/$f	.*	truth	file=carry_$k.cl via=clang-22+rocm-device-libs+isa9402+cov5+as0names " "$tmp/list"' \
    "$k gfx942 $f: exact truth through clang-22 and the 5.2 library"
done; done
check '! grep -q "^FAILED" "$tmp/list"' "no failure row: $(grep ^FAILED "$tmp/list" | cut -c1-200)"

"$bin" oracle "$C" -j 2 > "$tmp/oracle.log" 2>&1 || { echo "FAIL: oracle"; tail -5 "$tmp/oracle.log"; fail=$((fail + 1)); }
grep "family carry" "$tmp/oracle.log" || true
check 'grep -q "family carry  *truths 12/12, mutants \([0-9]*\)/\1 " "$tmp/oracle.log" && grep -q "oracle: 0 misses" "$tmp/oracle.log"' \
  "oracle: 12/12 truths, every mutant rejected"

real_emit_postsplit "$tmp/list" 6
[ "$fail" -eq 0 ] && echo "test_real_carry: 12/12 exact truths, 0 inconsistent, 0 library calls, oracle clean, 6/6 emitted"
exit $((fail > 0))
