#!/usr/bin/env bash
# Emit through llc-22 of a kernel with spill slots, on each LLVM-22 architecture (gfx942, gfx950,
# gfx1200, gfx1201): corpus/kernels/gemv_batched.cl under amdgpu_waves_per_eu
# (tests/fixtures/import/budget22.tsv) makes llc-22 spill on every one. Emit stops llc at the Stack
# Slot Coloring after the last allocation round for the block frequencies that order the spill
# slots; llc-22 runs a second one after round 0, before the restart point, and stopping after
# that one failed ("Cannot stop compilation after pass that is not run"). The truth of each
# postsplit row is emitted: the MachineVerifier passes and the counts equal the verifier's.
# Skipped (77) without clang-22/llc-22.
set -euo pipefail
bin=$(realpath "$1")
for t in clang-22 llc-22 ld.lld-22; do
  command -v $t >/dev/null || { echo "SKIP: $t missing"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$1"; then :; else echo "FAIL: $2"; fail=$((fail + 1)); fi; }
C="$tmp/C.h5"
"$bin" corpus import --out "$C" tests/fixtures/import/budget22.tsv --family b22 -j2 > "$tmp/1.log" 2>&1 || { cat "$tmp/1.log"; exit 1; }
"$bin" corpus list "$C" > "$tmp/list"
n=0
for t in gfx942 gfx950 gfx1200 gfx1201; do
  id=$(awk -v t="$t" '$1 ~ "/" t "/postsplit$" && $0 ~ "\ttruth" {print $1}' "$tmp/list")
  check '[ -n "$id" ]' "$t: a postsplit row with exact truth"
  [ -n "$id" ] || continue
  fin=$(ls "$C.work"/units/*/"$t"/final.mir | head -1)
  check 'grep -q "type: *spill-slot" "$fin"' "$t: llc-22 spilled (final.mir has spill slots)"
  if "$bin" emit --corpus "$C" --instance "$id" truth -o "$tmp/$t.s" > "$tmp/$t.log" 2>&1; then
    n=$((n + 1))
    check 'grep -q "spill slots renumbered" "$tmp/$t.log" && ! grep -q " 0 spill slots renumbered" "$tmp/$t.log"' "$t: the spill slots were ordered"
    check 'grep -q "MachineVerifier ok" "$tmp/$t.log"' "$t: MachineVerifier ok"
    check 'grep -q "counts vs verifier: equal" "$tmp/$t.log"' "$t: counts equal"
    check 'grep -q "ScratchSize: [1-9]" "$tmp/$t.s"' "$t: the emitted kernel uses scratch"
  else
    echo "FAIL: $t: emit: $(tail -2 "$tmp/$t.log")"; fail=$((fail + 1))
  fi
  grep -h "llc:" "$tmp/$t.log" || true
done
check '[ "$n" -eq 4 ]' "four architectures emitted ($n)"
[ "$fail" -eq 0 ] && echo "test_emit_llvm22_spill: 4 budgeted kernels with spill slots emitted through llc-22, counts equal"
exit $((fail > 0))
