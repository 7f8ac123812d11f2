#!/usr/bin/env bash
# `regsweep corpus import` for an LLVM-22 architecture (gfx942), on real clang-22/llc-22 output:
#  - OpenCL through clang-22 -nogpulib + -amdgpu-internalize-symbols (the grid's route), HIP through
#    clang-22 with Debian's HIP 5.2 headers and device libraries (ISA version, wave size, code
#    object v5, hip.bc and oclc_daz_opt supplied; reduce.hip calls ocml, __syncthreads and atomics):
#    rows per kernel and form, exact truths, the route in each row's params;
#  - the stages are llc-22's third allocation round (greedy,2 / virtregrewriter,2): the three
#    stage files pass llc-22's MachineVerifier and the module has no call left;
#  - LLVM IR (scale.ll: clang-14's, its target-cpu dropped) and the three MIR stages llc-22 wrote,
#    as inputs for gfx942;
#  - llc-22's rewriter appends implicit defs of the lanes an undef sub-register def leaves
#    undefined (rank1.cl): the stages align all the same, with exact truth;
#  - OpenCL ocml math (bnorm.cl: rsqrt, sqrt) links oclc_daz_opt as clang-16 did (off; on with
#    -cl-denorms-are-zero): exact truths, nothing left undefined; a sub-register index llc-22
#    names by 16-bit halves (halves.cl on gfx1200) is read as its lanes: exact truths, emitted;
#  - builtin:chaitin's answers emitted through llc-22 with its MachineVerifier (emit-check);
#  - a recipe line mixing gfx90a and gfx942 is two jobs with one name (one variant across
#    architectures); a 5.2 device-library function the target cannot run (llc-22 deletes it and
#    its call) is a named failure; a re-run compiles nothing; a kernel set listed twice for one target and a
#    HIP target at LLVM 14 are refused by name.
# Skipped (77) without clang-22/llc-22, rocm-device-libs or libamdhip64-dev.
set -euo pipefail
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's plugins leak at exit (the emit check runs a sweep): see test_sweep.sh
bin=$(realpath "$1")
for t in clang-22 llc-22 llvm-as-22 llvm-dis-22 clang-14 llc-14; do
  command -v $t >/dev/null || { echo "SKIP: $t missing"; exit 77; }
done
[ -f /usr/include/hip/hip_runtime.h ] || { echo "SKIP: libamdhip64-dev missing (HIP headers)"; exit 77; }
ls /usr/lib/*/amdgcn/bitcode/oclc_isa_version_940.bc >/dev/null 2>&1 || { echo "SKIP: rocm-device-libs missing"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$1"; then :; else echo "FAIL: $2"; fail=$((fail + 1)); fi; }
fx=tests/fixtures/import
C="$tmp/C.h5"

"$bin" corpus import --out "$C" "$fx/llvm22.tsv" --family l22 -j2 > "$tmp/1.log" 2>&1 || { cat "$tmp/1.log"; exit 1; }
"$bin" corpus list "$C" --params > "$tmp/list"
cat "$tmp/1.log"
check 'grep -q "6 units (6 compiled, 0 cached), 6 kernels -> 16 instances" "$tmp/1.log"' "16 instances from 6 kernels"
check 'grep -q "0 build failures, 0 prera truths split by LLVM, 0 truths inconsistent" "$tmp/1.log"' "no failure, no inconsistent truth"
for k in saxpy block_sum; do
  for f in prera postsplit; do
    check 'grep -q "^l22/vecops.$k/gfx942/$f	.*	truth	file=vecops.cl via=clang-22+rocm-device-libs+isa9402+cov5+as0names -O3$" "$tmp/list"' \
      "OpenCL $k gfx942 $f: exact truth, clang-22 + 5.2 library route in params"
    check 'grep -q "^l22/vecops.$k/gfx90a/$f	.*	truth	file=vecops.cl via=clang-14+prelude -O3$" "$tmp/list"' \
      "OpenCL $k gfx90a $f: the same variant name, clang-14 route"
  done
done
for f in prera postsplit; do
  check 'grep -q "^l22/saxpy._Z9hip_saxpyPfPKffi/gfx942/$f	.*	truth	file=saxpy.hip via=clang-22+rocm-device-libs+isa9402+cov5+wave64 -O3$" "$tmp/list"' \
    "HIP gfx942 $f: exact truth, route in params"
done
# llc-22's rewriter marks the lanes an undef sub-register def leaves undefined (an operand the
# postsplit stage does not have): the stages still align, exactly
check 'grep -q "IMPLICIT_DEF implicit-def \$vgpr" "$(ls "$C.work"/units/rank1-*/gfx942/final.mir)"' "rank1's final stage has the appended implicit-def"
for f in prera postsplit; do
  check 'grep -q "^l22/rank1.rank1/gfx942/$f	.*	truth	" "$tmp/list"' "rank1 gfx942 $f: exact truth"
done
for f in prera postsplit; do
  check 'grep -q "^l22/scale.scale_clamp/gfx942/$f	.*	truth	file=scale.ll via=llc-22 -O3$" "$tmp/list"' "LLVM IR (clang-14's, target-cpu dropped) on gfx942 $f: exact truth"
done
for f in prera postsplit; do
  check 'grep -q "^l22/reduce._Z6reducePfPKfiS_/gfx942/$f	.*	truth	file=reduce.hip via=clang-22+rocm-device-libs+isa9402+cov5+wave64 -O3$" "$tmp/list"' \
    "HIP with library calls (ocml, __syncthreads, atomics) gfx942 $f: exact truth"
done
check '[ "$(grep -c . "$tmp/list")" -eq 16 ]' "16 rows, no failure row"

# the gfx942 stages: llc-22's MachineVerifier takes them, no call left, greedy ran three rounds
n=0
for d in "$C.work"/units/*/gfx942; do
  for s in prera postsplit final; do
    n=$((n + 1))
    if ! llc-22 -march=amdgcn -mcpu=gfx942 -run-pass=none -verify-machineinstrs "$d/$s.mir" -o /dev/null 2> "$tmp/v"; then
      echo "FAIL: MachineVerifier on $d/$s.mir: $(head -3 "$tmp/v")"; fail=$((fail + 1))
    fi
    check '! grep -qE "SI_CALL|S_SETPC_B64" "$d/$s.mir"' "no call in $d/$s.mir"
  done
done
check '[ "$n" -eq 15 ]' "five gfx942 jobs with three stages each ($n)"
# final = virtregrewriter,2: vectors allocated (after virtregrewriter,1 they would still be virtual)
check 'grep -q "renamable \$vgpr" "$(ls "$C.work"/units/saxpy-*/gfx942/final.mir)"' "final stage has vectors allocated"
check '! grep -q "renamable \$vgpr" "$(ls "$C.work"/units/saxpy-*/gfx942/postsplit.mir)"' "postsplit (greedy,2) still has vectors virtual"
check 'grep -q "renamable \$sgpr" "$(ls "$C.work"/units/saxpy-*/gfx942/postsplit.mir)"' "postsplit has SGPRs physical"

# a device-library function the target cannot run: llc-22 would delete it with its call; named
# and a function no library defines: named, not left as a call
printf '#include <hip/hip_runtime.h>\nextern "C" __device__ float mystery(float);\n__global__ void ext(float *y) { y[threadIdx.x] = mystery(y[threadIdx.x]); }\n' > "$tmp/ext.hip"
"$bin" corpus import --out "$tmp/D.h5" "$fx/sdot2.hip" "$tmp/ext.hip" --targets gfx942,gfx1200 --family d > "$tmp/d.log" 2>&1 || cat "$tmp/d.log"
"$bin" corpus list "$tmp/D.h5" > "$tmp/d.list"
check 'grep -q "^d/sdot2._Z5dot2kPii/gfx942/prera	.*truth$" "$tmp/d.list"' "sdot2 on gfx942: a row with truth"
check 'grep -q "^FAILED d/sdot2/gfx1200	llc-22 error: llc-22 removed a rocm-device-libs 5.2 function gfx1200 cannot run.*+dot2-insts is not supported" "$tmp/d.list"' \
  "sdot2 on gfx1200: named failure: $(grep FAILED "$tmp/d.list")"
check '! grep -q "sdot2.*gfx1200/prera" "$tmp/d.list"' "no gfx1200 row without the computation"
check 'grep -q "^FAILED d/ext/gfx942	clang-22 error: undefined after linking rocm-device-libs 5.2: @mystery" "$tmp/d.list"' \
  "an undefined function named: $(grep "FAILED d/ext/gfx942" "$tmp/d.list")"

# OpenCL math from the 5.2 library: ocml's rsqrt and sqrt read __oclc_daz_opt, which clang-22 no
# longer links for OpenCL (before: `undefined after linking rocm-device-libs 5.2: @__oclc_daz_opt`);
# linked off, on with -cl-denorms-are-zero as clang-16 does. And a sub-register index llc-22 names by
# 16-bit halves on gfx1200 (halves.cl: 9 lanes of a vreg_1024, `lo16_hi16_sub1_lo16_..._sub8_hi16`;
# before: `unknown subregister index`): read as the lanes it covers, exact truths, emitted through
# llc-22 with counts equal. Three compiles: skipped under RS_TEST_QUICK
if [ -z "${RS_TEST_QUICK:-}" ]; then
  printf '%s/bnorm.cl\topencl\t-\tgfx942\n%s/bnorm.cl\topencl\t-cl-denorms-are-zero\tgfx942\n%s/halves.cl\topencl\t-\tgfx1200\n' \
    "$PWD/$fx" "$PWD/$fx" "$PWD/$fx" > "$tmp/daz.tsv"
  "$bin" corpus import --out "$tmp/B.h5" "$tmp/daz.tsv" --family b -j2 > "$tmp/b.log" 2>&1 || cat "$tmp/b.log"
  "$bin" corpus list "$tmp/B.h5" --params > "$tmp/b.list"
  for f in prera postsplit; do
    check 'grep -q "^b/bnorm.bnorm/gfx942/$f	.*	truth	file=bnorm.cl via=clang-22+rocm-device-libs+isa9402+cov5+as0names -O3$" "$tmp/b.list"' \
      "OpenCL rsqrt/sqrt (ocml, __oclc_daz_opt) gfx942 $f: exact truth"
    check 'grep -q "^b/bnorm-2.bnorm/gfx942/$f	.*	truth	.* -cl-denorms-are-zero -O3$" "$tmp/b.list"' "the same with -cl-denorms-are-zero $f: exact truth"
  done
  check '! grep -q FAILED "$tmp/b.list"' "no failure: $(grep FAILED "$tmp/b.list" || true)"
  check '[ "$(grep "^b/bnorm.bnorm/gfx942/prera" "$tmp/b.list" | cut -f2)" != "$(grep "^b/bnorm-2.bnorm/gfx942/prera" "$tmp/b.list" | cut -f2)" ]' \
    "daz on and off are two different kernels (ocml's denormal path)"
  check 'grep -q "lo16_hi16_sub1_lo16_sub1_hi16_sub2_lo16.*sub8_hi16" "$(ls "$tmp/B.h5.work"/units/halves-*/gfx1200/prera.mir)"' \
    "halves.cl's gfx1200 MIR has the index named by 16-bit halves"
  # its double division: llc-22 prints V_DIV_FMAS_F64_e64's implicit VCC read as $vcc_lo in wave32,
  # which its MIR parser refuses; emit respells it (emit/wave32.c; before: `missing implicit register operand`)
  check 'grep -q "nofpexcept V_DIV_FMAS_F64_e64 .*implicit \$vcc_lo" "$(ls "$tmp/B.h5.work"/units/halves-*/gfx1200/final.mir)"' \
    "halves.cl's gfx1200 final MIR has V_DIV_FMAS_F64_e64 reading \$vcc_lo"
  for f in prera postsplit; do
    check 'grep -q "^b/halves.halves/gfx1200/$f	.*	truth	" "$tmp/b.list"' "halves.cl gfx1200 $f: exact truth"
    "$bin" emit --corpus "$tmp/B.h5" --instance "b/halves.halves/gfx1200/$f" truth -o "$tmp/h.s" > "$tmp/h.log" 2>&1 || true
    check 'grep -q "counts vs verifier: equal" "$tmp/h.log"' "halves.cl gfx1200 $f truth through llc-22: $(tail -1 "$tmp/h.log")"
  done
fi

# emit: builtin:chaitin's answers on the gfx942 rows through llc-22 (-start-after=virtregrewriter,2,
# MachineVerifier on); vecops' rows come from a two-kernel module (each row's IR holds its own)
"$bin" sweep --corpus "$C" --model builtin:chaitin --filter target=gfx942 --samples 1 --bind none --out "$tmp/run" \
  --emit-check 100 > "$tmp/s.log" 2>&1 || cat "$tmp/s.log"
check 'grep -Eq "builtin:chaitin *checked 12: llc accepted 12, REJECTED 0 \(verifier bugs\), counts differ 0, errors 0" "$tmp/s.log"' \
  "emit through llc-22: $(grep "checked" "$tmp/s.log")"
m="$C.work/v/amd/gfx942/l22/vecops.saxpy/prera.mir"
check 'grep -q "define .*@saxpy" "$m" && ! grep -q "define .*@block_sum" "$m"' "saxpy's row holds its IR and no other kernel's"

# resume: nothing compiles again
"$bin" corpus import --out "$C" "$fx/llvm22.tsv" --family l22 -j2 > "$tmp/2.log" 2>&1
check 'grep -q "(0 compiled, 6 cached)" "$tmp/2.log"' "re-run compiles nothing: $(grep units "$tmp/2.log")"

# the three MIR stages llc-22 wrote (the rank1 unit's) as input: gfx942 from their target-cpu
for s in prera postsplit final; do cp "$(ls "$C.work"/units/rank1-*/gfx942/$s.mir)" "$tmp/r1.$s.mir"; done
"$bin" corpus import --out "$tmp/M.h5" "$tmp/r1.prera.mir" --targets gfx942 --family mir > "$tmp/m.log" 2>&1 || cat "$tmp/m.log"
"$bin" corpus list "$tmp/M.h5" --params > "$tmp/m.list"
for f in prera postsplit; do
  check 'grep -q "^mir/r1.rank1/gfx942/$f	.*	truth	file=r1.prera.mir via=mir -O3$" "$tmp/m.list"' "MIR stages for gfx942 $f: exact truth"
  check '[ "$(grep "^mir/r1.rank1/gfx942/$f	" "$tmp/m.list" | cut -f2)" = "$(grep "^l22/rank1.rank1/gfx942/$f	" "$tmp/list" | cut -f2)" ]' \
    "MIR input $f: the same IR hash as the compiled row"
done

# refused by name: one kernel set twice for one target; HIP at LLVM 14
printf '%s/vecops.cl\topencl\t-\tgfx942\n%s/vecops.cl\topencl\t-\tgfx1200,gfx942\n' "$PWD/$fx" "$PWD/$fx" > "$tmp/twice.tsv"
check '! "$bin" corpus import --out "$tmp/X.h5" "$tmp/twice.tsv" 2> "$tmp/e1"' "a kernel set twice for gfx942 refused"
check 'grep -q "vecops.cl:2: listed twice for target gfx942 (opencl lines 1 and 2" "$tmp/e1"' "named: $(cat "$tmp/e1")"
check '! "$bin" corpus import --out "$tmp/X.h5" "$fx/saxpy.hip" --targets gfx942,gfx1030 2> "$tmp/e2"' "HIP on gfx1030 refused"
check 'grep -q "target .gfx1030.: HIP compiles with clang-16 or clang-22.*HIP targets: gfx940, gfx942, gfx950" "$tmp/e2"' "named: $(cat "$tmp/e2")"
check '[ ! -e "$tmp/X.h5" ]' "nothing written on refusal"

[ "$fail" -eq 0 ] && echo "test_corpus_import_llvm22: all checks passed"
exit $((fail > 0))
