#!/usr/bin/env bash
# real-suite-report.sh - the numbers of a real-suite corpus (scripts/real-suite.sh): instances and
# exact truths per library x target x form, build failures per library x target grouped by reason,
# the SASS opcode forms our table refuses in the suite's cubins (`corpus forms`) and, per
# NVIDIA library x target, the sass rows `regalloc --pinned` rebuilds identically and `--free`
# recolours validly.
#   scripts/real-suite-report.sh REAL.h5 [WORKDIR] [--regsweep BIN]
set -euo pipefail
h5=$1 work=${2:-} bin=build/regsweep
[ "${3:-}" = --regsweep ] && bin=$4
"$bin" corpus info "$h5" | sed -n '1,/^Size reduction/p' | grep -v '^Size reduction'
echo "## Instances per library x vendor"
"$bin" corpus list "$h5" | grep -v ^FAILED | awk -F'\t' '{split($1,a,"/"); v=(a[3] ~ /^sm_/) ? "nv" : "amd"; n[a[1]"\t"v]++; if ($NF=="truth") t[a[1]"\t"v]++}
  END {for (k in n) printf "%s\t%d instances\t%d exact truths\n", k, n[k], t[k]}' | sort
echo "## Build failures by library, target and reason (first words)"
"$bin" corpus list "$h5" | grep ^FAILED | awk -F'\t' '{split($1,a,"/"); sub(/^FAILED /,"",a[1]); r=$2; gsub(/\/[^ :]*\//,"",r); gsub(/[0-9]+/,"N",r); print a[1]"\t"a[3]"\t"substr(r,1,110)}' |
  sort | uniq -c | sort -rn | head -40
echo "## Rows without truth, by reason"
"$bin" corpus list "$h5" | grep -v ^FAILED | awk -F'\t' '$NF!="truth"{split($1,a,"/"); r=$NF; gsub(/[0-9]+/,"N",r); print a[1]"\t"a[4]"\t"substr(r,1,110)}' | sort | uniq -c | sort -rn | head -20
if [ -n "$work" ]; then
  echo "## SASS forms the opcode table refuses (all cubins of the work directory)"
  find "$work" -name '*.cubin' -path '*/units/*' | sort > /tmp/real-suite-cubins.$$
  if [ -s /tmp/real-suite-cubins.$$ ]; then
    xargs -a /tmp/real-suite-cubins.$$ "$bin" corpus forms 2>&1 | grep -iE "unknown|forms seen|refused" | sort | uniq -c | sort -rn | head -40 || true
  fi
  rm -f /tmp/real-suite-cubins.$$
fi
echo "## NVIDIA per library x target: instances ptx/sass, exact truths ptx/sass, pinned identical, free valid"
"$bin" corpus list "$h5" | grep -v ^FAILED | awk -F'\t' '{ n = split($1, a, "/"); if (a[n - 1] !~ /^sm_/) next
    k = a[1] "\t" a[n - 1]; c[k "\t" a[n]]++; if ($NF == "truth") t[k "\t" a[n]]++; keys[k] = 1 }
  END { for (k in keys) print k "\t" c[k "\tptx"] + 0 "\t" c[k "\tsass"] + 0 "\t" t[k "\tptx"] + 0 "\t" t[k "\tsass"] + 0 }' |
  sort >/tmp/real-suite-nv.$$
if [ -s /tmp/real-suite-nv.$$ ]; then
  for m in pinned free; do # instance LIB/VARIANT/TARGET/sass: identical|valid|...
    # a failed instance's line goes to stderr: both streams whole, one after the other (2>&1
    # would let unbuffered stderr lines land inside buffered stdout lines)
    "$bin" regalloc "$h5" --$m >/tmp/real-suite-$m.out.$$ 2>/tmp/real-suite-$m.err.$$ || true
    cat /tmp/real-suite-$m.out.$$ /tmp/real-suite-$m.err.$$ | awk -v m=$m '/^instance / { id = $2; sub(/:$/, "", id); n = split(id, a, "/")
        ok = (m == "pinned") ? ($0 ~ /: identical/) : ($0 ~ /: valid/); k = a[1] "\t" a[n - 1]; g[k] += ok; keys[k] = 1 }
      END { for (k in keys) print k "\t" g[k] }' | sort >/tmp/real-suite-$m.$$ || true
  done
  printf 'library\ttarget\tptx\tsass\ttruth-ptx\ttruth-sass\tpinned\tfree\n'
  join -t$'\t' -a1 -e0 -o auto <(awk -F'\t' '{ print $1 "/" $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 }' /tmp/real-suite-nv.$$) \
    <(awk -F'\t' '{ print $1 "/" $2 "\t" $3 }' /tmp/real-suite-pinned.$$) |
    join -t$'\t' -a1 -e0 -o auto - <(awk -F'\t' '{ print $1 "/" $2 "\t" $3 }' /tmp/real-suite-free.$$) | sed 's|/|\t|' |
    awk -F'\t' -v OFS='\t' '{ print; for (i = 3; i <= 8; i++) s[i] += $i }
      END { printf "all\tall"; for (i = 3; i <= 8; i++) printf "\t%d", s[i]; print "" }'
fi
rm -f /tmp/real-suite-nv.$$ /tmp/real-suite-{pinned,free}.$$ /tmp/real-suite-{pinned,free}.{out,err}.$$
