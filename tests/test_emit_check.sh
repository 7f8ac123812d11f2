#!/usr/bin/env bash
# sweep --emit-check on real llc-14 runs: a small AMD slice of the mini corpus (sgemm postsplit,
# builtin:chaitin, one sample), 3 passing answers emitted with LLVM's MachineVerifier; passing
# texts are kept even though --keep failed is asked for; every checked answer is accepted by LLVM
# with register counts equal to the verifier's (emit-check.tsv rows "ok"); and the gfx940
# attention slice, where LLVM's own VGPR spills into AGPRs are told apart from a count mismatch.
set -euo pipefail
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's plugins leak at exit: see test_sweep.sh
cli="$1"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
log="$out/log"
"$cli" sweep --corpus data/corpus-mini.h5 --model builtin:chaitin --filter family=sgemm,target=gfx90a,form=postsplit \
  --samples 1 --keep failed --bind none --out "$out/run" --emit-check 3 >"$log" 2>&1 || { cat "$log"; exit 1; }
grep -q "builtin:chaitin *checked 3: llc accepted 3, REJECTED 0" "$log" || { cat "$log"; echo "FAIL: summary"; exit 1; }
tsv="$out/run/emit-check.tsv"
[ "$(tail -n +2 "$tsv" | wc -l)" -eq 3 ] || { cat "$tsv"; echo "FAIL: 3 rows"; exit 1; }
[ "$(tail -n +2 "$tsv" | cut -f4 | sort -u)" = "ok" ] || { cat "$tsv"; echo "FAIL: outcomes"; exit 1; }
# the emitted vgpr count equals the verifier's on every row
awk -F'\t' 'NR > 1 && ($5 != $9 || $6 != $10) { bad = 1 } END { exit bad }' "$tsv" || { cat "$tsv"; echo "FAIL: counts"; exit 1; }
# gfx940 attention (llc-16) at 256 VGPRs: LLVM spills VGPRs into free AGPRs after allocation
# ("Reload Reuse"), one AGPR above the answer's; that is LLVM's register, not a count mismatch
"$cli" sweep --corpus data/corpus-mini.h5 --model builtin:chaitin --filter family=fa,target=gfx940 \
  --samples 1 --bind none --out "$out/fa" --emit-check 100 >"$log" 2>&1 || { cat "$log"; exit 1; }
grep -Eq "builtin:chaitin *checked [1-9][0-9]*: llc accepted [1-9][0-9]*, REJECTED 0 \(verifier bugs\), counts differ 0, errors 0" "$log" ||
  { cat "$log"; echo "FAIL: gfx940 attention summary"; exit 1; }
grep -q "LLVM spilled VGPRs into AGPRs above the answer's" "$out/fa/emit-check.tsv" ||
  { cat "$out/fa/emit-check.tsv"; echo "FAIL: no Reload Reuse row"; exit 1; }
echo "test_emit_check: ok"
