#!/usr/bin/env bash
# Spill slots as values of free mode (sass/spills.h), per kernel: `regalloc X.cubin --free -o
# OUT.cubin` with and without --no-spills, side by side in one run: R (ptxas's count) before ->
# after, spill stores/loads (STL/LDL instructions) before -> after, 64/128-bit slot values in registers
# (of those promotable), frame bytes, occupancy (warps/SM),
# valid (the re-lift check), lowered and crosschecked (or the refusal), wall time of each; slot
# words: in registers / promotable, and of those kept how many no in-place colouring can hold
# ("no room": the other values fill the count at a point of the range), beside the registers free
# mode frees without spills (R - R(no-spills)); totals per architecture.
#   bench/bench_sass_spills.sh [BIN] [--quick] [DIR|X.cubin ...]   (default: tests/fixtures/sass-spills;
#   --quick: fa_hd96_r128.sm_80 only;
#   a DIR: every *.cubin under it, e.g. a FlashAttention-2 build's out/ directory)
# One function per cubin is the intended input (FlashAttention-2's entries, our capped kernels);
# a cubin with several functions prints its first function's line.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${REGSWEEP:-build/regsweep}
nd=${NVDISASM:-$(command -v nvdisasm || echo /opt/nvidia-cuda-11.8/usr/bin/nvdisasm)}
ins=()
quick=0
for a in "$@"; do
  if [ "$a" = --quick ]; then quick=1
  elif [ -f "$a" ] && [ -x "$a" ]; then bin=$a
  else ins+=("$a"); fi
done
[ ${#ins[@]} -gt 0 ] || ins=(tests/fixtures/sass-spills)
[ $quick = 0 ] || ins=(tests/fixtures/sass-spills/fa_hd96_r128.sm_80.cubin) # CI's smoke run: one small kernel
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
list=()
for a in "${ins[@]}"; do
  if [ -d "$a" ]; then while IFS= read -r f; do list+=("$f"); done < <(find "$a" -name '*.cubin' | sort)
  else list+=("$a"); fi
done
printf '%-44s %-6s %-11s %-15s %-5s %-13s %-11s %-9s %-6s %-26s %8s | %-11s %-26s %8s\n' kernel arch R stores/loads 64b \
  "words(noroom)" frame occ valid lowered ms "R(no-spl)" "lowered(no-spills)" ms
declare -A n rb ra sb sa lb la lok lokn rn wp wi wn
for c in "${list[@]}"; do
  t0=$(date +%s%N)
  "$bin" regalloc "$c" --free -o "$tmp/s.cubin" --nvdisasm "$nd" >"$tmp/log" 2>&1
  st=$?
  t1=$(date +%s%N)
  "$bin" regalloc "$c" --free --no-spills -o "$tmp/n.cubin" --nvdisasm "$nd" >"$tmp/logn" 2>&1
  stn=$?
  t2=$(date +%s%N)
  l=$(grep -m1 '^regalloc(free):' "$tmp/log")
  ln=$(grep -m1 '^regalloc(free):' "$tmp/logn")
  [ -n "$l" ] || { printf '%-44s refused: %s\n' "$(basename "$c")" "$(grep -m1 -v '^$' "$tmp/log" | cut -c1-120)"; continue; }
  arch=$(basename "$c" | grep -oE 'sm_[0-9]+' | head -1)
  [ -n "$arch" ] || arch=$(grep -oE ': sm_[0-9]+,' "$tmp/log" | head -1 | tr -d ':, ')
  [ -n "$arch" ] || arch=$(basename "$(dirname "$c")" | grep -oE 'sm_[0-9]+' | head -1)
  [ -n "$arch" ] || arch="?"
  R=$(sed -E 's/.*R: ([0-9]+) -> ([0-9]+) registers.*/\1 \2/' <<<"$l")
  Rn=$(sed -E 's/.*R: ([0-9]+) -> ([0-9]+) registers.*/\2/' <<<"$ln")
  occ=$(sed -E 's/.*occupancy ([0-9]+) -> ([0-9]+) warps.*/\1->\2/' <<<"$l")
  sp=$(sed -nE 's/.*spills: ([0-9]+) stores, ([0-9]+) loads -> ([0-9]+), ([0-9]+) \(frame ([0-9]+) -> ([0-9]+) bytes.*/\1 \2 \3 \4 \5 \6/p' <<<"$l")
  [ -n "$sp" ] || sp="0 0 0 0 0 0"
  read -r s0 l0 s1 l1 f0 f1 <<<"$sp"
  wide=$(sed -nE 's/.*64\/128-bit: ([0-9]+) of ([0-9]+).*/\1\/\2/p' <<<"$l")
  [ -n "$wide" ] || wide=-
  sw=$(sed -nE 's/.*slot words: ([0-9]+) promotable, ([0-9]+) in registers, ([0-9]+) of ([0-9]+) kept have no room.*/\1 \2 \3/p' <<<"$l")
  [ -n "$sw" ] || sw="0 0 0"
  read -r w0 w1 w2 <<<"$sw"
  valid=$(grep -q 'contributor sets equivalent.*verifier: pass' <<<"$l" && echo yes || echo NO)
  low() { # log status -> "ok (N rewritten)" / "refused: why"
    if [ "$2" = 0 ] && grep -q 'crosscheck (nvdisasm).*: ok' "$1"; then
      echo "ok$(grep -oE '[0-9]+ spill accesses rewritten' "$1" | sed -E 's/([0-9]+).*/ (\1 rewritten)/')"
    else
      local why
      why=$(grep -m1 -oE "(of|form) [A-Z0-9.]+ 0x[0-9a-f]+ '[A-Z]*'|scoreboard hazard|MISMATCH|not a rewrite" "$1" | head -1)
      why=${why#of }
      echo "refused: ${why#form }"
    fi
  }
  lo=$(low "$tmp/log" $st)
  lon=$(low "$tmp/logn" $stn)
  label=$(basename "$c" .cubin)
  [[ $label == *sm_* ]] || label="$(basename "$(dirname "$c")")/$label"
  printf '%-44s %-6s %-11s %-15s %-5s %-13s %-11s %-9s %-6s %-26s %8d | %-11s %-26s %8d\n' "$label" "$arch" \
    "${R/ /->}" "$s0/$l0->$s1/$l1" "$wide" "$w1/$w0($w2)" "$f0->$f1" "$occ" "$valid" "$lo" $(( (t1 - t0) / 1000000 )) "$Rn" "$lon" \
    $(( (t2 - t1) / 1000000 ))
  read -r r0 r1 <<<"$R"
  n[$arch]=$(( ${n[$arch]:-0} + 1 )); rb[$arch]=$(( ${rb[$arch]:-0} + r0 )); ra[$arch]=$(( ${ra[$arch]:-0} + r1 ))
  rn[$arch]=$(( ${rn[$arch]:-0} + Rn ))
  wp[$arch]=$(( ${wp[$arch]:-0} + w0 )); wi[$arch]=$(( ${wi[$arch]:-0} + w1 )); wn[$arch]=$(( ${wn[$arch]:-0} + w2 ))
  sb[$arch]=$(( ${sb[$arch]:-0} + s0 )); sa[$arch]=$(( ${sa[$arch]:-0} + s1 ))
  lb[$arch]=$(( ${lb[$arch]:-0} + l0 )); la[$arch]=$(( ${la[$arch]:-0} + l1 ))
  [[ $lo == ok* ]] && lok[$arch]=$(( ${lok[$arch]:-0} + 1 ))
  [[ $lon == ok* ]] && lokn[$arch]=$(( ${lokn[$arch]:-0} + 1 ))
done
echo
echo "totals per architecture: kernels, R ptxas -> free (--no-spills), spill stores -> left, loads -> left, slot words in registers of promotable (kept with no room), lowered+crosschecked (--no-spills)"
for a in $(printf '%s\n' "${!n[@]}" | sort); do
  printf '%-6s %3d kernels  R %6d -> %6d (%6d)  stores %6d -> %6d  loads %6d -> %6d  words %d of %d (%d)  lowered %d (%d)\n' "$a" "${n[$a]}" \
    "${rb[$a]}" "${ra[$a]}" "${rn[$a]}" "${sb[$a]}" "${sa[$a]}" "${lb[$a]}" "${la[$a]}" "${wi[$a]}" "${wp[$a]}" "${wn[$a]}" \
    "${lok[$a]:-0}" "${lokn[$a]:-0}"
done
