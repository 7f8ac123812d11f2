#!/usr/bin/env bash
# ggml's OpenCL kernels (tests/fixtures/real/ggml_*.cl, MIT; written for other vendors' GPUs) on
# gfx940 (clang-16/llc-16 + rocm-device-libs) and gfx942 (clang-22/llc-22 + rocm-device-libs):
#  - LLVM's own allocation passes our Problem: every row has exact truth, the import prints
#    0 truths inconsistent (before mir/carry.c: 1 + 1 + 10 constraints broken, the high half of a
#    V_MAD_U64_U32 addend whose result's high half is dead);
#  - on gfx942 the 5.2 OpenCL library resolves every builtin (vload/vstore/convert/read_imagef
#    through their AS0 names): no library call refused, route in the params;
#  - the oracle: truths accepted by both verifiers, mutants rejected with their category;
#  - each postsplit truth emitted through its llc: MachineVerifier ok, counts equal.
# Skipped (77) without clang-16/22, llc-16/22 or rocm-device-libs.
set -euo pipefail
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's plugins leak at exit: see test_sweep.sh
bin=$(realpath "$1")
for t in clang-16 llc-16 clang-22 llc-22 llvm-dis-22 llvm-as-22 llvm-cxxfilt-22; do
  command -v $t >/dev/null || { echo "SKIP: $t missing"; exit 77; }
done
ls /usr/lib/*/amdgcn/bitcode/opencl.bc >/dev/null 2>&1 || { echo "SKIP: rocm-device-libs missing"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$1"; then :; else echo "FAIL: $2"; fail=$((fail + 1)); fi; }
C="$tmp/G.h5"
"$bin" corpus import --out "$C" tests/fixtures/real/ggml.tsv --family ggml -j2 > "$tmp/import.log" 2>&1 ||
  { cat "$tmp/import.log"; exit 1; }
tail -2 "$tmp/import.log"
"$bin" corpus list "$C" --params > "$tmp/list"
check 'grep -q "2 kernels -> 8 instances" "$tmp/import.log"' "8 instances from 2 kernels"
check 'grep -q "8 with ground truth, 0 build failures, 0 prera truths split by LLVM, 0 truths inconsistent" "$tmp/import.log"' \
  "every row with exact truth, LLVM's allocation never rejected"
for k in gemm_noshuffle_q4_k_f32 mul_mm_f32_f32_l4_lm; do for f in prera postsplit; do
  check 'grep -q "^ggml/ggml_$k.kernel_$k/gfx940/$f	.*	truth	file=ggml_$k.cl via=clang-16+rocm-device-libs " "$tmp/list"' \
    "$k gfx940 $f: exact truth"
  check 'grep -q "^ggml/ggml_$k.kernel_$k/gfx942/$f	.*	truth	file=ggml_$k.cl via=clang-22+rocm-device-libs+isa9402+cov5+as0names " "$tmp/list"' \
    "$k gfx942 $f: exact truth through clang-22 and the 5.2 library"
done; done
check '! grep -q "^FAILED" "$tmp/list"' "no failure row: $(grep ^FAILED "$tmp/list" | cut -c1-200)"

"$bin" oracle "$C" -j 2 > "$tmp/oracle.log" 2>&1 || { echo "FAIL: oracle"; tail -5 "$tmp/oracle.log"; fail=$((fail + 1)); }
grep "family ggml" "$tmp/oracle.log" || true
check 'grep -q "family ggml  *truths 8/8, mutants \([0-9]*\)/\1 " "$tmp/oracle.log" && grep -q "oracle: 0 misses" "$tmp/oracle.log"' \
  "oracle: 8/8 truths, every mutant rejected"

n=0
while IFS= read -r id; do
  if "$bin" emit --corpus "$C" --instance "$id" truth -o "$tmp/e.s" > "$tmp/e.log" 2>&1 &&
    grep -q "MachineVerifier ok" "$tmp/e.log" && grep -q "counts vs verifier: equal" "$tmp/e.log"; then
    n=$((n + 1))
  else
    echo "FAIL: emit $id: $(tail -2 "$tmp/e.log")"; fail=$((fail + 1))
  fi
done < <(awk -F'\t' '$1 ~ /\/postsplit$/ {print $1}' "$tmp/list")
check '[ "$n" -eq 4 ]' "4 postsplit truths emitted, counts equal ($n)"
[ "$fail" -eq 0 ] && echo "test_real_ggml: 8/8 exact truths, 0 inconsistent, 0 library calls, oracle clean, 4/4 emitted"
exit $((fail > 0))
