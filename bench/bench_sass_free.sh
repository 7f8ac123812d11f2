#!/usr/bin/env bash
# regalloc --free over every SASS listing of the fixtures (or the .sass files given), per family
# x arch: R registers before (ptxas) and after, occupancy before and after, whether we use fewer,
# equal or more registers than ptxas, and the time per kernel (parse + lift + Problem + colouring
# rounds + write-back + re-lift check, wall clock). A listing --free refuses counts as a failure.
#   bench/bench_sass_free.sh [BIN] [FILE.sass...]     BIN default build/regsweep
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/regsweep}
shift || true
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(tests/fixtures/sass/front/*.sass tests/fixtures/sass/*.sass)
fewer=0 equal=0 more=0 fail=0 n=0 total_ms=0
printf '%-34s %-6s %8s %8s %6s %6s %9s\n' family arch R-ptxas R-ours occ-b occ-a ms
for f in "${files[@]}"; do
  base=$(basename "$f" .sass)
  fam=${base%.sm_*} arch=sm_${base##*.sm_}
  t0=$(date +%s%N)
  if ! out=$("$bin" regalloc "$f" --free 2>&1); then
    echo "$fam $arch: FAILED: $(echo "$out" | head -1)"
    fail=$((fail + 1))
    continue
  fi
  t1=$(date +%s%N)
  ms=$(( (t1 - t0) / 1000000 ))
  while read -r b a ob oa; do
    n=$((n + 1)) total_ms=$((total_ms + ms))
    if [ "$a" -lt "$b" ]; then fewer=$((fewer + 1)); elif [ "$a" -eq "$b" ]; then equal=$((equal + 1)); else more=$((more + 1)); fi
    printf '%-34s %-6s %8s %8s %6s %6s %9s\n' "$fam" "$arch" "$b" "$a" "$ob" "$oa" "$ms"
  done < <(echo "$out" | sed -n 's/.*R: \([0-9]*\) -> \([0-9]*\) registers, occupancy \([0-9]*\) -> \([0-9]*\) .*/\1 \2 \3 \4/p')
done
echo "kernels $n: fewer R than ptxas $fewer, equal $equal, more $more; refused $fail; mean $(( n ? total_ms / n : 0 )) ms per listing"
