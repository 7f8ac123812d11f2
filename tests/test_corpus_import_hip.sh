#!/usr/bin/env bash
# `regsweep corpus import` of a HIP kernel, device-only (clang-16 with rocm-device-libs, llc-16):
# gfx940 rows with exact truth; a real rocSPARSE module cut per kernel; a gfx90a HIP target is refused by name (the corpus reads gfx90a at
# LLVM 14, HIP needs LLVM >= 15). Skipped (77) without rocm-device-libs or libamdhip64-dev.
set -euo pipefail
bin=$(realpath "$1")
[ -f /usr/include/hip/hip_runtime.h ] || { echo "SKIP: libamdhip64-dev missing (HIP headers)"; exit 77; }
ls /usr/lib/*/amdgcn/bitcode/ocml.bc >/dev/null 2>&1 || { echo "SKIP: rocm-device-libs missing"; exit 77; }
command -v clang-16 >/dev/null || { echo "SKIP: clang-16 missing"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$1"; then :; else echo "FAIL: $2"; fail=$((fail + 1)); fi; }
"$bin" corpus import --out "$tmp/H.h5" tests/fixtures/import/saxpy.hip --family hip -j2 > "$tmp/log" 2>&1 || cat "$tmp/log"
"$bin" corpus list "$tmp/H.h5" > "$tmp/list"
for f in prera postsplit; do
  check 'grep -q "^hip/saxpy._Z9hip_saxpyPfPKffi/gfx940/$f	.*truth$" "$tmp/list"' "HIP gfx940 $f with exact truth"
done
# a real library module (rocSPARSE 2.3.3's axpyi and gthrz, 4 instantiations): one row pair per
# kernel, each with exact truth, each stage cut to its own kernel's IR definition
"$bin" corpus import --out "$tmp/R.h5" tests/fixtures/import/rocsparse_level1.hip --family rocsparse -j2 > "$tmp/log" 2>&1 || cat "$tmp/log"
"$bin" corpus list "$tmp/R.h5" > "$tmp/rlist"
check '[ "$(grep -c "^rocsparse/rocsparse_level1\._Z1[0-9][a-z]*_kernel.*/gfx940/\(prera\|postsplit\)	.*truth$" "$tmp/rlist")" -eq 8 ]' \
  "rocSPARSE: 4 kernels x 2 forms with truth: $(cat "$tmp/rlist")"
n=0
for m in "$tmp"/R.h5.work/v/amd/gfx940/rocsparse/*/*.mir; do
  [ "$(grep -c '^  define ' "$m")" -eq 1 ] || { echo "not cut to one IR definition: $m"; n=$((n + 1)); }
done
# four stages per kernel: prera, postsplit, final and the SGPR round's own MIR (sground.mir)
check '[ "$n" -eq 0 ] && [ "$(ls "$tmp"/R.h5.work/v/amd/gfx940/rocsparse/*/*.mir | wc -l)" -eq 16 ] &&
  [ "$(ls "$tmp"/R.h5.work/v/amd/gfx940/rocsparse/*/sground.mir | wc -l)" -eq 4 ]' "each stage file (4 per kernel) holds its own kernel's IR only"
# INLINEASM from the device library (a ';' inside its asm string, MIRPrinter comments on its
# operand-kind immediates): read, with truth
"$bin" corpus import --out "$tmp/V.h5" tests/fixtures/import/vote.hip --family hip -j2 > "$tmp/log" 2>&1 || cat "$tmp/log"
check 'grep -q "INLINEASM &\"; ockl ballot" "$tmp"/V.h5.work/v/amd/gfx940/hip/*/prera.mir' "vote.hip has the ockl INLINEASM"
check '[ "$(grep -c "^hip/vote._Z4votePKiPy/gfx940/\(prera\|postsplit\)	.*truth$" <("$bin" corpus list "$tmp/V.h5"))" -eq 2 ]' \
  "INLINEASM kernel: 2 rows with truth: $("$bin" corpus list "$tmp/V.h5")"
check '! "$bin" corpus import --out "$tmp/X.h5" tests/fixtures/import/saxpy.hip --targets gfx90a 2> "$tmp/e"' "HIP on gfx90a refused"
check 'grep -q "target .gfx90a.: HIP compiles with clang-16" "$tmp/e"' "named: $(cat "$tmp/e")"
[ "$fail" -eq 0 ] && echo "test_corpus_import_hip: all checks passed"
exit $((fail > 0))
