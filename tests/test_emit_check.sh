#!/usr/bin/env bash
# sweep --emit-check on real llc-14 runs: a small AMD slice of the mini corpus (sgemm postsplit,
# builtin:chaitin, one sample), 3 passing answers emitted with LLVM's MachineVerifier; passing
# texts are kept even though --keep failed is asked for; every checked answer is accepted by LLVM
# with register counts equal to the verifier's (emit-check.tsv rows "ok").
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
echo "test_emit_check: ok"
