#!/usr/bin/env bash
# real-suite-report.sh - the numbers of a real-suite corpus (scripts/real-suite.sh): instances and
# exact truths per library x target x form, build failures per library x target grouped by reason,
# and the SASS opcode forms our table refuses in the suite's cubins (`corpus forms`).
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
