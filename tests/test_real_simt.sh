#!/usr/bin/env bash
# regsweep's own OpenCL kernels for the per-lane (SIMT) rule (tests/fixtures/simt/*.cl, written for
# these tests: a float2 whose .y is written on both sides of a divergent if/else in a loop, a
# byte-block decode reading one 64-bit offset on both sides, and a strided staging loop whose
# remainder lanes LLVM selects through a lane mask kept in an SGPR pair) on gfx940
# (clang-16/llc-16 + rocm-device-libs) and gfx942 (clang-22/llc-22):
#  - LLVM's own allocation passes our Problem: every row has exact truth, the import prints
#    0 truths inconsistent. At 6baf9fe (before analysis/simt.c's lanes' CFG) all 8 rows of the
#    first two were refused, "LLVM's allocation violates 1 (gfx942 else_index: 4) constraints", and
#    at b317dac (before analysis/lanemask.c) mask_tail's 2 gfx940 rows (1 constraint): this test
#    fails there;
#  - the oracle: truths accepted by both verifiers, mutants rejected with their category;
#  - a mutant that puts the two values written on both sides and read together after the join on
#    one register (truly live at once on every lane) is rejected as dataflow by both verifiers;
#  - each postsplit truth emitted through its llc: MachineVerifier ok, counts equal.
# RS_TEST_QUICK=1 (the sanitizer build): the import and its truths only; the oracle, the mutant and
# the emits run in the plain build.
# Skipped (77) without clang-16/22, llc-16/22 or rocm-device-libs.
set -euo pipefail
source "$(dirname "$0")/real_amd.sh"
real_setup "$1" clang-16 llc-16 clang-22 llc-22 llvm-dis-22 llvm-as-22 llvm-cxxfilt-22 python3
real_import tests/fixtures/simt/simt.tsv simt
"$bin" corpus list "$C" > "$tmp/list"
check 'grep -q "3 kernels -> 12 instances" "$tmp/import.log"' "12 instances from 3 kernels"
check 'grep -q "12 with ground truth, 0 build failures, 0 prera truths split by LLVM, 0 truths inconsistent" "$tmp/import.log"' \
  "every row with exact truth, LLVM's allocation never rejected"
for k in pair_side else_index mask_tail; do for a in gfx940 gfx942; do for f in prera postsplit; do
  check 'grep -q "^simt/simt_$k.simt_$k/$a/$f	.*	truth$" "$tmp/list"' "$k $a $f: exact truth ($(grep "simt_$k/$a/$f" "$tmp/list" | cut -f4))"
done; done; done

if [ "${RS_TEST_QUICK:-0}" = 1 ]; then
  [ "$fail" -eq 0 ] && echo "test_real_simt (quick): 12/12 exact truths, 0 inconsistent; oracle, mutant and emits left to the plain build"
  exit $((fail > 0))
fi

"$bin" oracle "$C" -j 2 > "$tmp/oracle.log" 2>&1 || { echo "FAIL: oracle"; tail -5 "$tmp/oracle.log"; fail=$((fail + 1)); }
grep "family simt" "$tmp/oracle.log" || true
check 'grep -q "family simt  *truths 12/12, mutants \([0-9]*\)/\1 " "$tmp/oracle.log" && grep -q "oracle: 0 misses" "$tmp/oracle.log"' \
  "oracle: 12/12 truths, every mutant rejected"

# the values written on both sides (one def in each) and read together after the join
id=simt/simt_else_index.simt_else_index/gfx942/postsplit
mir=$(ls "$C".work/units/simt_else_index-*/gfx942/postsplit.mir | head -1)
mapfile -t both < <(grep -o '%[0-9]*:vgpr_32 = V_CVT_F32_UBYTE0' "$mir" | cut -d: -f1 | sort | uniq -c | awk '$1 == 2 {print $2}')
check '[ "${#both[@]}" -eq 2 ]' "two values written on both sides of the diamond (${both[*]:-none})"
if [ "${#both[@]}" -eq 2 ]; then
  "$bin" alloc --corpus "$C" --instance "$id" --model builtin:truth -n 1 2>/dev/null |
    python3 -c "import json,sys; a=json.loads(json.loads(sys.stdin.readline())['answer']); a['${both[1]}']=a['${both[0]}']; print(json.dumps(a))" \
      > "$tmp/mutant.json"
  rc=0; "$bin" verify --corpus "$C" --instance "$id" "$tmp/mutant.json" --verifier both > "$tmp/mutant.log" 2>&1 || rc=$?
  check '[ "$rc" -eq 1 ] && grep -q "native: dataflow" "$tmp/mutant.log" && grep -q "z3: dataflow" "$tmp/mutant.log"' \
    "mutant ${both[1]} on ${both[0]}'s register rejected as dataflow by both ($(head -4 "$tmp/mutant.log" | tr '\n' ' '))"
fi

real_emit_postsplit "$tmp/list" 6
[ "$fail" -eq 0 ] && echo "test_real_simt: 12/12 exact truths, 0 inconsistent, oracle clean, both-sides mutant rejected, 6/6 emitted"
exit $((fail > 0))
