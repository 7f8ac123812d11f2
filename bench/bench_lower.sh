#!/usr/bin/env bash
# Lowering SASS back into cubins, over (cubin, completed listing) pairs: the fixtures' kept cubins,
# or every sm_XX.cubin + .sass of a `corpus build --work` directory.
# Per kernel, side by side in one run: the lowering itself (rs_sass_lower, as `regsweep lower`
# prints it) and the whole `regsweep lower` process (pinned: listing unchanged; no crosscheck) vs
# `nvdisasm -c` on the same cubin (the ratios); then pinned through `regalloc X.cubin --listing
# X.sass --pinned -o OUT.cubin` (byte-identical, crosschecked) and free: `regalloc X.cubin --listing
# X.sass --free -o OUT.cubin` (ptxas's scoreboards in the Problem: a "hazard" refusal should never
# happen), with R summed over the kernel's functions for ptxas, ours, and ours without the
# scoreboard conflicts (--no-scoreboards: what keeping ptxas's control bits costs), and the totals
# per architecture.
#   bench/bench_lower.sh [BIN] [--quick] [--every N] [WORK_DIR]   (--quick: sgemm_t4x4.sm_89 only;
#   --every N: every N-th pair of the sorted list, a deterministic sample of a large corpus;
#   BIN, the regsweep executable, as scripts/run-bench.sh passes it; default $REGSWEEP or build/regsweep)
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${REGSWEEP:-build/regsweep}
nd=${NVDISASM:-$(command -v nvdisasm || echo /opt/nvidia-cuda-11.8/usr/bin/nvdisasm)}
quick=0
work=
every=1
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --every) every=$2; shift ;;
    *) if [ -f "$1" ] && [ -x "$1" ]; then bin=$1; else work=$1; fi ;;
  esac
  shift
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pairs=()
if [ -n "$work" ]; then
  while IFS= read -r c; do [ -s "${c%.cubin}.sass" ] && pairs+=("$c"); done < <(find "$work" -name 'sm_*.cubin' -not -path '*.tmp.*' | sort | awk -v n="$every" 'NR % n == 1 || n == 1')
else
  pairs=(tests/fixtures/sass/sgemm_t4x4.sm_89.cubin tests/fixtures/sass/sgemm_t4x4.sm_90.cubin tests/fixtures/sass/calib.sm_90.cubin)
fi
[ $quick = 1 ] && pairs=(tests/fixtures/sass/sgemm_t4x4.sm_89.cubin)
[ -x "$nd" ] || { echo "bench_lower: no nvdisasm ($nd): SKIPPED"; exit 0; }
now() { date +%s.%N; }
rows=$tmp/rows
printf "kernel\tarch\tlower_ms\tlower_process_ms\tnvdisasm_ms\tratio\tpinned\tfree\tpinned_insts\tpinned_mismatch\tfree_insts\tfree_mismatch\tR_ptxas\tR_free\tR_free_noscoreboards\n"
tot=$tmp/tot; : > "$tot"
for c in "${pairs[@]}"; do
  s=${c%.cubin}.sass
  arch=$(basename "$c" .cubin); arch=${arch##*.}; arch=${arch#sm_}; arch=sm_${arch}
  t0=$(now); "$bin" lower "$c" "$s" "$s" -o "$tmp/p.cubin" --no-crosscheck >"$tmp/low.out" 2>&1; t1=$(now)
  lib=$(sed -n 's/.*(\([0-9.]*\) ms)$/\1/p' "$tmp/low.out")
  "$bin" corpus disasm "$c" --rewrite "$tmp/old.cubin" >/dev/null 2>&1
  t2=$(now); "$nd" -c "$tmp/old.cubin" >/dev/null 2>&1; t3=$(now)
  lm=$(echo "($t1-$t0)*1000" | bc -l); nm=$(echo "($t3-$t2)*1000" | bc -l)
  "$bin" regalloc "$c" --listing "$s" --pinned -q -o "$tmp/pin.cubin" --nvdisasm "$nd" >"$tmp/pin.out" 2>&1; prc=$?
  pin=fail; [ $prc = 0 ] && cmp -s "$c" "$tmp/pin.cubin" && pin=identical
  # free, lowered and crosschecked; refusals by reason ("hazard": a scoreboard race, 0 expected;
  # "free-failed": regalloc --free itself failed, before any lowering)
  "$bin" regalloc "$c" --listing "$s" --free -o "$tmp/free.cubin" --nvdisasm "$nd" >"$tmp/free.out" 2>&1; frc=$?
  if [ $frc = 0 ]; then free=ok
  elif grep -q "no trusted field\|not in the learned\|known only as a pair" "$tmp/free.out"; then free=refused
  elif grep -q "scoreboard hazard" "$tmp/free.out"; then free=hazard
  elif grep -q "MISMATCH" "$tmp/free.out"; then free=xcheck-fail
  elif ! grep -q "^regalloc(free): " "$tmp/free.out"; then free=free-failed
  else free=error
  fi
  "$bin" regalloc "$c" --listing "$s" --free --no-scoreboards >"$tmp/nosb.out" 2>&1
  rsum() { sed -n 's/^regalloc(free): .*: R: \([0-9]*\) -> \([0-9]*\) registers.*/\1 \2/p' "$1" | awk '{a += $1; b += $2} END {print a + 0, b + 0}'; }
  read -r rp rf <<<"$(rsum "$tmp/free.out")"; read -r _ rn <<<"$(rsum "$tmp/nosb.out")"
  xc() { sed -n 's/.*crosscheck (nvdisasm): [0-9]* functions, \([0-9]*\) instructions, \([0-9]*\) mismatches.*/\1 \2/p' "$1" | head -1; }
  read -r pi pm <<<"$(xc "$tmp/pin.out")"; read -r fi fm <<<"$(xc "$tmp/free.out")"
  printf "%s\t%s\t%.2f\t%.1f\t%.1f\t%.4f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "${c#$work}" "$arch" "${lib:-0}" "$lm" "$nm" "$(echo "${lib:-0}/$nm" | bc -l)" "$pin" "$free" "${pi:-0}" "${pm:-0}" "${fi:-0}" "${fm:-0}" "$rp" "$rf" "$rn" | tee -a "$rows"
  echo "$arch $pin $free ${pi:-0} ${pm:-0} ${fi:-0} ${fm:-0} $rp $rf $rn" >>"$tot"
done
echo
echo "per architecture: kernels; pinned: byte-identical and crosschecked, instructions nvdisasm read back, mismatches; free: lowered and crosschecked ok, refused for scoreboard hazards (0 expected) or an untrusted field, crosscheck failed, error, regalloc --free itself failed; instructions crosschecked, mismatches; R summed: ptxas, free, free without the scoreboard conflicts, kernels where they cost R"
awk '{k[$1]++; p[$1]+=($2=="identical"); o[$1]+=($3=="ok"); r[$1]+=($3=="refused"); h[$1]+=($3=="hazard"); x[$1]+=($3=="xcheck-fail"); e[$1]+=($3=="error"); ff[$1]+=($3=="free-failed"); pi[$1]+=$4; pm[$1]+=$5; fi[$1]+=$6; fm[$1]+=$7; rp[$1]+=$8; rf[$1]+=$9; rn[$1]+=$10; rc[$1]+=($9>$10)}
     END {for (a in k) printf "  %s\t%d kernels\tpinned %d, %d instructions, %d mismatches\tfree: ok %d, hazards %d, untrusted %d, crosscheck failed %d, error %d, --free itself failed %d; %d instructions crosschecked, %d mismatches\tR %d -> %d (%d without scoreboards; they cost R on %d)\n", a, k[a], p[a], pi[a], pm[a], o[a], h[a], r[a], x[a], e[a], ff[a], fi[a], fm[a], rp[a], rf[a], rn[a], rc[a]}' "$tot" | sort
awk -F'\t' '$5 > 0 {l += $3; p += $4; n += $5; k++} END {if (n) printf "lowering vs nvdisasm -c on the same %d cubins (summed): rs_sass_lower %.1f ms, the whole `regsweep lower` process (parse, lift, counts) %.0f ms, nvdisasm %.0f ms: ratios %.4f and %.3f\n", k, l, p, n, l / n, p / n}' "$rows"
