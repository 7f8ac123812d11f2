#!/usr/bin/env bash
# regalloc --free over SASS, side by side with ptxas, in one run: the listings of the fixtures
# (tests/fixtures/sass, sass/front, sass-real: CUDA kernels written for the tests) or the .sass
# files given, and every form-sass instance of one or more corpora (default data/corpus-mini.h5).
#   bench/bench_sass_free.sh [BIN] [--quick] [--corpus C.h5]... [--no-corpus] [--family NAME]
#                            [--work DIR]... [FILE.sass...]
#     BIN default build/regsweep; --quick: the warp_ops listings of sass-real only (seconds)
#     --corpus (repeatable; the first replaces the default): e.g. the real suite's magma.h5
#     --family NAME: only the corpora's rows (and failure rows) of that family
#     --work DIR: an import work directory (corpus import --work): its units' cubins join the
#       opcode coverage count, so listings the import refused are counted too
# Prints, per family x arch (a listing: its function; a corpus row: corpus:FAMILY):
#   listings parsed / refused (reasons below), functions valid under --free, fewer / equal /
#   more R than ptxas BEFORE the floor (our colouring alone), floors (ptxas's own colouring,
#   lowered, was the result), fewer / equal / more AFTER it, occupancy gained / lost, the most
#   colouring rounds (must be 1), mean ms per function (parse + lift + Problem + colouring +
#   write-back + re-lift check);
# then the totals (and per arch), the opcode coverage of the same listings (`regsweep corpus forms`: forms
# seen vs known) and, for listings with nvdisasm's `-lrm count` table beside them (NAME.lrm),
# how many rows `regsweep inspect --live` gives the same counts as nvdisasm. A corpus's
# failure rows of its sass listings (e.g. an unknown form) count as refused listings.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/regsweep
if [ $# -gt 0 ] && [ "${1%.sass}" = "$1" ] && [ "${1#--}" = "$1" ]; then bin=$1; shift; fi
corpora=(data/corpus-mini.h5) corpus_given=0
quick=0 family= works=()
files=() disasm_refused=()
while [ $# -gt 0 ]; do
  case $1 in
    --corpus) [ $corpus_given = 1 ] || corpora=(); corpus_given=1; corpora+=("$2"); shift 2 ;;
    --no-corpus) corpora=(); corpus_given=1; shift ;;
    --family) family=$2; shift 2 ;;
    --work) works+=("$2"); shift 2 ;;
    --quick) quick=1; shift ;;
    -*) echo "bench_sass_free: unknown option $1" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
for c in ${corpora[@]+"${corpora[@]}"}; do
  [ -f "$c" ] || { echo "bench_sass_free: no corpus $c" >&2; exit 2; }
done
if [ ${#files[@]} -eq 0 ]; then
  if [ $quick = 1 ]; then
    files=(tests/fixtures/sass-real/warp_ops.*.sass)
    [ $corpus_given = 1 ] || corpora=()
  else
    files=(tests/fixtures/sass/front/*.sass tests/fixtures/sass/*.sass tests/fixtures/sass-real/*.sass)
    # tests/fixtures/sass-tex keeps only CUDA sources: compiled here for sm_75-sm_90 and completed
    # (cached in build/bench-sass-tex; a source newer than its cubin is rebuilt)
    nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
    if [ -x "$nvcc" ]; then
      mkdir -p build/bench-sass-tex
      for src in tests/fixtures/sass-tex/*.cu; do
        for sm in sm_75 sm_80 sm_86 sm_89 sm_90; do
          c=build/bench-sass-tex/$(basename "$src" .cu).$sm.cubin
          l=${c%.cubin}.sass
          if ! [ -s "$l" ] || [ "$src" -nt "$c" ]; then
            rm -f "$l"
            "$nvcc" -cubin -O3 -arch=$sm "$src" -o "$c" &&
              "$bin" corpus disasm "$c" -o "$l.part" > "$l.err" 2>&1 && mv "$l.part" "$l"
          fi
          if [ -s "$l" ]; then files+=("$l")
          else disasm_refused+=("$(basename "$src" .cu) $sm $(tail -1 "$l.err" 2> /dev/null)"); fi
        done
      done
    else
      echo "bench_sass_free: no nvcc ($nvcc): tests/fixtures/sass-tex not measured" >&2
    fi
  fi
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rows=$tmp/rows refused=$tmp/refused
: >"$rows"
: >"$refused"
for r in ${disasm_refused[@]+"${disasm_refused[@]}"}; do echo "$r" >>"$refused"; done
# one row per function: family arch before ours after occ-before occ-after rounds ms valid floor
# (ours = R of our colouring before the floor; 999 when it left values uncoloured)
parse_free() { # arch-or-empty, stdin: regalloc --free output
  awk -v arch="$1" '
    /^regalloc\(free\): .*: R: [0-9]+ -> [0-9]+ registers/ {
      fn = $2; sub(/:$/, "", fn)
      match($0, /R: [0-9]+ -> [0-9]+ registers, occupancy [0-9]+ -> [0-9]+/)
      split(substr($0, RSTART, RLENGTH), w, " ")
      rounds = 1; if (match($0, /values, [0-9]+ round/)) { split(substr($0, RSTART, RLENGTH), q, " "); rounds = q[2] }
      ms = 0; if (match($0, /[0-9.]+ ms\)/)) ms = substr($0, RSTART, RLENGTH - 4)
      ours = w[4]
      if (match($0, /ours needed [0-9]+ R/)) { split(substr($0, RSTART, RLENGTH), q, " "); ours = q[3] }
      if ($0 ~ /ours left [0-9]+ values/) ours = 999
      valid = ($0 ~ /contributor sets equivalent/ && $0 ~ /verifier: pass/ && $0 !~ /could not colour it validly/) ? 1 : 0
      a = arch; if (a == "") a = "?"
      print fn, a, w[2], ours, w[4], w[7], w[9], rounds, ms, valid, ($0 ~ /ptxas.s own colouring/) ? 1 : 0
    }'
}
for f in "${files[@]}"; do
  base=$(basename "$f" .sass)
  arch=sm_${base##*.sm_}
  if out=$("$bin" regalloc "$f" --free 2>&1); then
    echo "$out" | parse_free "$arch" >>"$rows"
  else
    rc=$?
    if [ $rc = 2 ]; then
      echo "$base $arch $(echo "$out" | grep -m1 'regsweep regalloc' | sed 's/^regsweep regalloc: [^:]*:[0-9]*: //')" >>"$refused"
    else # parsed, but a function failed: its lines count as not valid
      echo "$out" | parse_free "$arch" | awk '{ $10 = 0; print }' >>"$rows"
      echo "$out" | grep '^FAIL' | head -3 | sed "s|^|$base $arch: |"
    fi
  fi
done
for corpus in ${corpora[@]+"${corpora[@]}"}; do
  # the regalloc(free) lines of an instance come before its "instance ID: valid|FAILED" line;
  # ID = family/variant/arch/form
  # both streams in order (regalloc writes them line by line): a failed instance's own line is
  # on stderr; the FAIL detail lines are kept apart for the reasons below
  "$bin" regalloc "$corpus" --free 2>&1 | tee "$tmp/corpus-err" | awk -v fam="$family" '
    /^regalloc\(free\): .*: R: / { pend = pend $0 "\n"; next }
    /^instance / { id = $2; sub(/:$/, "", id); n = split(id, p, "/")
                   if (fam != "" && p[1] != fam) { pend = ""; next }
                   ok = ($0 ~ /: valid, /) ? "" : " FAILED"
                   m = split(pend, ls, "\n")
                   for (i = 1; i < m; i++) print p[1] "\t" p[n - 1] "\t" ls[i] ok
                   if ($0 ~ /bad input/) print p[1] "\t" p[n - 1] "\tREFUSED " id " " $0
                   pend = "" }' >"$tmp/corpus1" || true # a failed instance is a row marked FAILED
  cat "$tmp/corpus1" >>"$tmp/corpus"
  if grep -q '^FAIL' "$tmp/corpus-err"; then # why instances failed, folded: numbers and names out
    echo "$corpus: functions not valid under --free, by reason:"
    grep '^FAIL' "$tmp/corpus-err" | sed -E 's/^FAIL [^ ]*: //; s/[0-9]+/N/g' | sort | uniq -c | sort -rn | head -5 | sed 's/^/  /'
  fi
  grep 'REFUSED' "$tmp/corpus1" | awk -F'\t' '{print "corpus:" $1 " " $2 " " $3}' >>"$refused" || true
  grep -v 'REFUSED' "$tmp/corpus1" | while IFS=$'\t' read -r fam arch line; do
    echo "$line" | parse_free "$arch" | awk -v fam="$fam" -v bad="$([[ $line == *FAILED ]] && echo 1 || echo 0)" \
      '{ $1 = "corpus:" fam; if (bad) $10 = 0; print }'
  done >>"$rows"
  # listings the import refused are failure rows: FAILED FAMILY/VARIANT/ARCH <tab> sass: REASON
  "$bin" corpus list "$corpus" | awk -F'\t' -v fam="$family" '/^FAILED / && $2 ~ /^sass: / {
      id = $1; sub(/^FAILED /, "", id); n = split(id, p, "/")
      if (fam != "" && p[1] != fam) next
      r = $2; gsub(/\/[^ :]*\//, "", r)
      print "corpus:" p[1] " " p[n] " " p[2] ": " r }' >>"$refused"
  "$bin" corpus list "$corpus" | awk -v fam="$family" '!/^FAILED / { n = split($1, p, "/")
      if (p[n] == "sass" && (fam == "" || p[1] == fam)) c[p[n - 1]]++ }
    END { for (a in c) print a, c[a] }' >>"$tmp/corpus-listings"
done
: >>"$tmp/corpus-listings"
: >>"$tmp/corpus"

printf '%-32s %-6s %5s %5s  %-13s %5s  %-13s %5s %5s %6s %8s\n' family arch fns valid \
  "before:f/e/m" floor "after:f/e/m" occ+ occ- rounds ms/fn
awk '{ k = $1 " " $2; n[k]++; v[k] += $10
       if ($4 < $3) bf[k]++; else if ($4 == $3) be[k]++; else bm[k]++
       if ($11) fl[k]++
       if ($5 < $3) af[k]++; else if ($5 == $3) ae[k]++; else am[k]++
       if ($7 > $6) og[k]++; if ($7 < $6) ol[k]++
       if ($8 > r[k]) r[k] = $8; t[k] += $9 }
     END { for (k in n) { split(k, q, " ")
             printf "%-32s %-6s %5d %5d  %3d/%3d/%3d   %5d  %3d/%3d/%3d   %5d %5d %6d %8.1f\n", q[1], q[2], n[k], v[k],
                    bf[k], be[k], bm[k], fl[k], af[k], ae[k], am[k], og[k], ol[k], r[k], t[k] / n[k] } }' "$rows" | sort
echo
nref=$(wc -l <"$refused")
ncorp=$(awk -F'\t' '$3 ~ /^regalloc/' "$tmp/corpus" | wc -l)
echo "listings: $((${#files[@]} + ${#disasm_refused[@]})) files, $(grep -vc '^corpus:' "$refused" || true) refused$([ ${#corpora[@]} = 0 ] ||
  echo "; corpus ${corpora[*]}${family:+ (family $family)}: $(awk '{ n += $2 } END { print n + 0 }' "$tmp/corpus-listings") sass rows ($ncorp functions), $(grep -c '^corpus:' "$refused" || true) listings refused")"
for a in sm_75 sm_80 sm_86 sm_89 sm_90; do
  np=0
  for f in "${files[@]}"; do [[ $f == *."$a".sass ]] && np=$((np + 1)); done
  np=$((np + $(awk -v a="$a" '$1 == a { n += $2 } END { print n + 0 }' "$tmp/corpus-listings")))
  nr=$(grep -c " $a " "$refused" || true)
  nrc=$(grep '^corpus:' "$refused" | grep -c " $a " || true)
  nd=0 # refused by corpus disasm: never in files
  for r in ${disasm_refused[@]+"${disasm_refused[@]}"}; do [[ $r == *" $a "* ]] && nd=$((nd + 1)); done
  [ "$np" = 0 ] && [ "$nr" = 0 ] || echo "  $a: $((np - nr + nrc + nd)) listings parsed, $nr refused"
done
if [ "$nref" != 0 ]; then # the reasons, numbers and names folded so that one cause is one line
  echo "refused listings by reason:"
  sed -E 's/^[^ ]+ [^ ]+ //; s/^[^ ]*: //; s/0x[0-9a-f]+/0xN/g; s/[0-9]+/N/g; s/ _Z[^ ]*//g' "$refused" | cut -c1-160 |
    sort | uniq -c | sort -rn | sed 's/^/  /'
  [ "$nref" -gt 40 ] || sed 's/^/  refused: /' "$refused"
fi
total() { # label, which: files | corpus | all | corpus:FAMILY, [arch]
  awk -v label="$1" -v which="$2" -v arch="${3:-}" '(which == "all" || which == $1 || (which !~ /:/ && (which == "corpus") == ($1 ~ /^corpus:/))) && (arch == "" || $2 == arch) {
      n++; v += $10; if ($4 < $3) bf++; else if ($4 == $3) be++; else bm++
      if ($11) fl++; if ($5 < $3) af++; else if ($5 == $3) ae++; else am++
      if ($7 > $6) og++; if ($7 < $6) ol++; if ($8 > r) r = $8; t += $9 }
    END { if (!n) { printf "%s: no functions\n", label; exit }
          printf "%s: %d functions, %d valid; before the floor: fewer R than ptxas %d (%.1f%%), equal %d, more %d; floors %d; after: fewer %d (%.1f%%), equal %d, more %d; occupancy up %d, down %d; rounds max %d; %.1f ms per function\n",
                 label, n, v, bf, 100 * bf / n, be, bm, fl, af, 100 * af / n, ae, am, og, ol, r, t / n }' "$rows"
}
total "listings" files
total "corpus" corpus
for fam in $(awk '$1 ~ /^corpus:/ { print $1 }' "$rows" | sort -u); do total "  $fam" "$fam"; done
total "all" all
for a in sm_75 sm_80 sm_86 sm_89 sm_90; do total "  $a" all "$a"; done

# opcode coverage over the same listings (and the corpus): forms seen vs known
cov_args=("${files[@]}" ${corpora[@]+"${corpora[@]}"})
for w in ${works[@]+"${works[@]}"}; do
  while IFS= read -r c; do cov_args+=("$c"); done < <(find "$w/units" -name '*.cubin' | sort)
done
"$bin" corpus forms "${cov_args[@]}" >"$tmp/forms" || true
grep '^refused\|unknown' "$tmp/forms" | grep -v '^forms:' | sed 's/^/  coverage: /' || true
echo "coverage: $(tail -1 "$tmp/forms")"

# inspect --live against nvdisasm -lrm count, row by row, where a NAME.lrm table is beside NAME.sass
lrm_rows=0 lrm_equal=0
for f in "${files[@]}"; do
  t=${f%.sass}.lrm
  [ -f "$t" ] || continue
  "$bin" inspect "$f" --live >"$tmp/live" 2>/dev/null || continue
  read -r r e < <(awk '
    FNR == NR { if (/^# /) { fn = $2; sub(/:$/, "", fn); next } if (NF == 5) ours[fn " " $1] = $2 " " $3 " " $4 " " $5; next }
    /\.section[ \t]+\.text\./ { fn = $2; sub(/^\.text\./, "", fn); sub(/,.*/, "", fn); ncol = 0; next }
    /\/\/ \|/ && /GPR/ { s = $0; sub(/.*\/\/ \|/, "", s); ncol = split(s, h, "|"); for (i = 1; i <= ncol; i++) gsub(/ /, "", h[i]); next }
    /^ *\/\*[0-9a-f]+\*\/ \/\/ \|/ {
      a = $1; gsub(/[\/*]/, "", a); s = $0; sub(/.*\/\/ \|/, "", s); split(s, c, "|")
      g = p = u = up = 0
      for (i = 1; i <= ncol; i++) { x = c[i]; gsub(/ /, "", x); x += 0
        if (h[i] == "GPR") g = x; else if (h[i] == "PRED") p = x; else if (h[i] == "UGPR") u = x; else if (h[i] == "UPRED") up = x }
      rows++; if (ours[fn " " a] == g " " p " " u " " up) eq++ }
    END { print rows + 0, eq + 0 }' "$tmp/live" "$t")
  lrm_rows=$((lrm_rows + r)) lrm_equal=$((lrm_equal + e))
done
if [ "$lrm_rows" -gt 0 ]; then
  awk -v r="$lrm_rows" -v e="$lrm_equal" 'BEGIN { printf "inspect --live vs nvdisasm -lrm count: %d of %d rows equal (%.1f%%)\n", e, r, 100 * e / r }'
else
  echo "inspect --live vs nvdisasm -lrm count: no .lrm tables beside these listings"
fi
# what the bench measures went wrong: a refused listing, a function not valid, more than one round
bad=$(awk '!$10 { b++ } $8 > 1 { b++ } END { print b + 0 }' "$rows")
if [ "$nref" != 0 ] || [ "$bad" != 0 ]; then
  echo "bench_sass_free: $nref listings refused, $bad functions not valid in one round" >&2
  exit 1
fi
