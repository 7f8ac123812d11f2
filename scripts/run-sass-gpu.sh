#!/usr/bin/env bash
# run-sass-gpu.sh -- on a machine with an NVIDIA GPU: every form-sass instance of a corpus for the
# GPU's architecture, recoloured by `regalloc --free`, lowered into its cubin (crosschecked by
# nvdisasm) and run against the original on the same seeded inputs (tools/sass_run.c, the family's
# corpus/kernels/*.launch recipe). Prints one line per kernel and the totals: kernels run, identical
# outputs, differing, skipped (not launchable, no cubin), refused by the lowering, and the summed
# median times original vs rewritten.
#   scripts/run-sass-gpu.sh CORPUS.h5 [sm_90] [--rounds N]
# Needs a corpus built with the /text/cubin column (regsweep corpus build, after 2026-12), build/
# regsweep, build/tools/sass_run and nvdisasm.
set -uo pipefail
cd "$(dirname "$0")/.."
corpus=${1:?usage: scripts/run-sass-gpu.sh CORPUS.h5 [sm_XX] [--rounds N]}
arch=${2:-sm_90}
rounds=5
[ "${3:-}" = "--rounds" ] && rounds=${4:-5}
bin=${REGSWEEP:-build/regsweep}
run=${SASS_RUN:-build/tools/sass_run}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
n=0 same=0 differ=0 skip=0 refused=0
to=0 tr=0
while read -r id _; do
  n=$((n + 1))
  if ! "$bin" emit --corpus "$corpus" --instance "$id" truth -o "$t/orig.cubin" >"$t/log" 2>&1; then
    echo "$id: skipped: $(tail -1 "$t/log")"; skip=$((skip + 1)); continue
  fi
  if ! "$bin" regalloc "$t/orig.cubin" --free -q -o "$t/new.cubin" >"$t/log" 2>&1; then
    echo "$id: refused: $(grep -m1 'refused\|MISMATCH\|FAIL' "$t/log")"; refused=$((refused + 1)); continue
  fi
  "$run" --corpus "$corpus" --instance "$id" "$t/new.cubin" --rounds "$rounds" >"$t/out" 2>&1
  rc=$?
  echo "$id: $(cat "$t/out")"
  case $rc in
    0) same=$((same + 1)) ;;
    1) differ=$((differ + 1)) ;;
    77) skip=$((skip + 1)); continue ;;
    *) differ=$((differ + 1)) ;;
  esac
  read -r a b < <(sed -n 's/.*median \([0-9.]*\) ms -> \([0-9.]*\) ms.*/\1 \2/p' "$t/out")
  to=$(echo "$to + ${a:-0}" | bc -l); tr=$(echo "$tr + ${b:-0}" | bc -l)
done < <("$bin" corpus list "$corpus" | awk -v a="/$arch/sass" '$1 ~ a"$" {print $1}')
echo "run-sass-gpu: $arch: $n kernels: $same identical, $differ DIFFER, $skip skipped, $refused refused by the lowering;" \
     "summed median time original $to ms, rewritten $tr ms"
[ $differ = 0 ]
