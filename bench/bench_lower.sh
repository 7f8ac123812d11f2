#!/usr/bin/env bash
# Lowering SASS back into cubins, over (cubin, completed listing) pairs: the fixtures' kept cubins,
# or every sm_XX.cubin + .sass of a `corpus build --work` directory.
# Per kernel, side by side in one run: `regsweep lower` (pinned: listing unchanged; no crosscheck)
# wall time vs `nvdisasm -c` on the same cubin (the ratio); then pinned and free through
# `regalloc X.cubin --listing X.sass ... -o OUT.cubin` with nvdisasm's crosscheck, and the totals
# per architecture: kernels, instructions crosschecked, instruction mismatches, live-count rows that
# differ, refusals (untrusted field), byte-identical pinned cubins.
#   bench/bench_lower.sh [--quick] [WORK_DIR]     (--quick: sgemm_t4x4.sm_89 only, one round)
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${REGSWEEP:-build/regsweep}
nd=${NVDISASM:-$(command -v nvdisasm || echo /opt/nvidia-cuda-11.8/usr/bin/nvdisasm)}
quick=0
work=
for a in "$@"; do case $a in --quick) quick=1 ;; *) work=$a ;; esac; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pairs=()
if [ -n "$work" ]; then
  while IFS= read -r c; do [ -s "${c%.cubin}.sass" ] && pairs+=("$c"); done < <(find "$work" -name 'sm_*.cubin' -not -path '*.tmp.*' | sort)
else
  pairs=(tests/fixtures/sass/sgemm_t4x4.sm_89.cubin tests/fixtures/sass/sgemm_t4x4.sm_90.cubin)
fi
[ $quick = 1 ] && pairs=(tests/fixtures/sass/sgemm_t4x4.sm_89.cubin)
[ -x "$nd" ] || { echo "bench_lower: no nvdisasm ($nd): SKIPPED"; exit 0; }
now() { date +%s.%N; }
printf "kernel\tarch\tlower_ms\tnvdisasm_ms\tratio\tpinned\tfree\tinsts\tmismatch\tlive_differ\n"
tot=$tmp/tot; : > "$tot"
for c in "${pairs[@]}"; do
  s=${c%.cubin}.sass
  arch=$(basename "$c" .cubin); arch=${arch##*.}; arch=${arch#sm_}; arch=sm_${arch}
  t0=$(now); "$bin" lower "$c" "$s" "$s" -o "$tmp/p.cubin" --no-crosscheck >/dev/null 2>&1; t1=$(now)
  "$bin" corpus disasm "$c" --rewrite "$tmp/old.cubin" >/dev/null 2>&1
  t2=$(now); "$nd" -c "$tmp/old.cubin" >/dev/null 2>&1; t3=$(now)
  lm=$(echo "($t1-$t0)*1000" | bc -l); nm=$(echo "($t3-$t2)*1000" | bc -l)
  "$bin" regalloc "$c" --listing "$s" --pinned -q -o "$tmp/pin.cubin" --nvdisasm "$nd" >"$tmp/pin.out" 2>&1; prc=$?
  pin=fail; [ $prc = 0 ] && cmp -s "$c" "$tmp/pin.cubin" && pin=identical
  "$bin" regalloc "$c" --listing "$s" --free -q -o "$tmp/free.cubin" --nvdisasm "$nd" >"$tmp/free.out" 2>&1; frc=$?
  free=ok
  if [ $frc != 0 ]; then
    if grep -q "no trusted field\|not in the learned" "$tmp/free.out"; then free=refused
    elif grep -q "MISMATCH" "$tmp/free.out"; then free=xcheck-fail
    else free=error; fi
  fi
  x=$(grep -h "crosscheck (nvdisasm)" "$tmp/free.out" | head -1)
  insts=$(echo "$x" | sed -n 's/.* functions, \([0-9]*\) instructions, \([0-9]*\) mismatches; live-count rows [0-9]*, \([0-9]*\) differ.*/\1 \2 \3/p')
  [ -n "$insts" ] || insts="0 0 0"
  read -r ni nm2 nl <<<"$insts"
  printf "%s\t%s\t%.1f\t%.1f\t%.3f\t%s\t%s\t%s\t%s\t%s\n" "${c#$work}" "$arch" "$lm" "$nm" "$(echo "$lm/$nm" | bc -l)" "$pin" "$free" "$ni" "$nm2" "$nl"
  echo "$arch $pin $free $ni $nm2 $nl" >>"$tot"
done
echo
echo "per architecture: kernels, pinned byte-identical+crosschecked, free: ok / refused / crosscheck failed / error, free instructions crosschecked, mismatches, live-count rows differing"
awk '{k[$1]++; p[$1]+=($2=="identical"); o[$1]+=($3=="ok"); r[$1]+=($3=="refused"); x[$1]+=($3=="xcheck-fail"); e[$1]+=($3=="error"); i[$1]+=$4; m[$1]+=$5; l[$1]+=$6}
     END {for (a in k) printf "  %s\t%d kernels\tpinned %d\tfree ok %d refused %d xcheck-fail %d error %d\tinstructions %d\tmismatches %d\tlive rows differ %d\n", a, k[a], p[a], o[a], r[a], x[a], e[a], i[a], m[a], l[a]}' "$tot" | sort
