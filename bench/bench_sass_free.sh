#!/usr/bin/env bash
# regalloc --free over every SASS kernel: the listings of the fixtures (or the .sass files given)
# and every form-sass instance of a corpus (`regsweep regalloc C.h5 --free`; default
# data/corpus-mini.h5 when it exists). Per kernel: R registers before (ptxas) and after,
# occupancy before and after, ms (parse + lift + Problem + colouring rounds + write-back +
# re-lift check, wall clock); then per family x arch and in total: kernels with fewer, equal or
# more registers than ptxas (goal: <= ptxas on >= 90%, fewer on >= 30%). A listing --free
# refuses or whose validation fails counts as a failure.
#   bench/bench_sass_free.sh [BIN] [--quick] [--corpus C.h5 | --no-corpus] [FILE.sass...]   BIN default build/regsweep
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/regsweep
if [ $# -gt 0 ] && [ "${1%.sass}" = "$1" ] && [ "${1#--}" = "$1" ]; then bin=$1; shift; fi
corpus=data/corpus-mini.h5
files=() quick=0
while [ $# -gt 0 ]; do
  case $1 in
    --corpus) corpus=$2; shift 2 ;;
    --no-corpus) corpus=; shift ;;
    --quick) quick=1; shift ;;
    *) files+=("$1"); shift ;;
  esac
done
[ ${#files[@]} -gt 0 ] || files=(tests/fixtures/sass/front/*.sass tests/fixtures/sass/*.sass)
# --quick (CI's smoke run): the first listing only (the corpus pass runs the same code)
[ $quick = 0 ] || files=("${files[0]}") corpus=
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
fail=0
# one row per kernel: family arch before after occ-before occ-after ms
for f in "${files[@]}"; do
  base=$(basename "$f" .sass)
  fam=${base%.sm_*} arch=sm_${base##*.sm_}
  t0=$(date +%s%N)
  if ! out=$("$bin" regalloc "$f" --free 2>&1); then
    echo "$fam $arch: FAILED: $(echo "$out" | grep -m1 -v '^regalloc(free)')"
    fail=$((fail + 1))
    continue
  fi
  ms=$((($(date +%s%N) - t0) / 1000000))
  echo "$out" | sed -n "s/.*R: \([0-9]*\) -> \([0-9]*\) registers, occupancy \([0-9]*\) -> \([0-9]*\) .*/$fam $arch \1 \2 \3 \4 $ms/p" >> "$rows"
done
if [ -n "$corpus" ] && [ -f "$corpus" ]; then
  # regalloc(free) lines of an instance come before its "instance ID: valid, T ms" line
  out=$("$bin" regalloc "$corpus" --free 2>&1) || true
  fail=$((fail + $(echo "$out" | grep -c '^instance .*: \(FAILED\|bad input\)' || true)))
  echo "$out" | grep '^instance .*: \(FAILED\|bad input\)' || true
  echo "$out" | awk '
    /^regalloc\(free\): .*R: [0-9]+ -> [0-9]+ registers, occupancy/ {
      match($0, /R: [0-9]+ -> [0-9]+ registers, occupancy [0-9]+ -> [0-9]+/); split(substr($0, RSTART, RLENGTH), w, " ")
      pend = pend w[2] " " w[4] " " w[7] " " w[9] "\n"; next }
    /^instance .*: valid, / {
      id = $2; sub(/:$/, "", id); n = split(id, p, "/"); ms = $(NF - 1)
      m = split(pend, ls, "\n")
      for (i = 1; i < m; i++) if (ls[i] != "") print "corpus:" p[1], p[n - 1], ls[i], int(ms + 0.5)
      pend = ""; next }
    /^instance / { pend = "" }' >> "$rows"
fi
printf '%-34s %-6s %8s %8s %6s %6s %9s\n' family arch R-ptxas R-ours occ-b occ-a ms
sort -k1,1 -k2,2 "$rows" | while read -r fam arch b a ob oa ms; do
  printf '%-34s %-6s %8s %8s %6s %6s %9s\n' "$fam" "$arch" "$b" "$a" "$ob" "$oa" "$ms"
done
echo
echo "per family x arch: kernels, fewer / equal / more R than ptxas, mean R before -> after, mean ms"
awk '{k = $1 " " $2; n[k]++; if ($4 < $3) f[k]++; else if ($4 == $3) e[k]++; else m[k]++
      b[k] += $3; a[k] += $4; t[k] += $7}
     END {for (k in n) printf "%-40s %3d  %3d / %3d / %3d  %6.1f -> %6.1f  %8.1f\n", k, n[k], f[k], e[k], m[k],
            b[k] / n[k], a[k] / n[k], t[k] / n[k]}' "$rows" | sort
total() { # label, which rows: fixtures | corpus | all
  awk -v label="$1" '(label == "all" || (label == "corpus") == ($1 ~ /^corpus:/)) {n++; if ($4 < $3) f++; else if ($4 == $3) e++; else m++; t += $7; if ($6 > $5) o++}
     END {if (!n) n = 1e-9
          printf "%s: kernels %d: fewer R than ptxas %d (%.1f%%), equal %d, more %d; <= ptxas %.1f%%; occupancy up on %d; mean %.1f ms per kernel\n",
                 label, n, f, 100 * f / n, e, m, 100 * (f + e) / n, o, t / n}' "$rows"
}
total fixtures
total corpus
total all
echo "failed (refused or validation failed): $fail"
[ "$fail" -eq 0 ]  # a refused listing or a failed validation fails the bench
