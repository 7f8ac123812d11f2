#!/usr/bin/env bash
# `regsweep corpus import` of a HIP kernel, device-only (clang-16 with rocm-device-libs, llc-16):
# gfx940 rows with exact truth; a gfx90a HIP target is refused by name (the corpus reads gfx90a at
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
check '! "$bin" corpus import --out "$tmp/X.h5" tests/fixtures/import/saxpy.hip --targets gfx90a 2> "$tmp/e"' "HIP on gfx90a refused"
check 'grep -q "target .gfx90a.: HIP compiles with clang-16" "$tmp/e"' "named: $(cat "$tmp/e")"
[ "$fail" -eq 0 ] && echo "test_corpus_import_hip: all checks passed"
exit $((fail > 0))
