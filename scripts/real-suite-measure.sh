#!/usr/bin/env bash
# real-suite-measure.sh - the measurements of a real-suite corpus (scripts/real-suite.sh), as one
# markdown note on stdout (docs/real-suite.md is one):
#   instances, kernels and exact truths per library x architecture x form; the oracle per library x
#   architecture (truths accepted, mutants rejected per category); builtin:chaitin verified (a
#   sweep); emit (AMD: the answer through llc with its MachineVerifier, counts equal; NVIDIA: lowered
#   into the cubin, nvdisasm crosscheck); pinned and free on the sass rows (regalloc); every
#   exclusion with its reason; normalization's size reduction against the template families; the
#   builtin:sampled baseline's Table 2 on the real suite beside the template families (the same
#   sweep on the mini corpus).
#
#   scripts/real-suite-measure.sh REAL.h5 [--mini data/corpus-mini.h5] [--work DIR] [-j N]
#       [--sample K] [--samples N] [--emit N|all] [--regsweep BIN]
#
# --sample K: about one kernel in K (sweep/oracle --filter sample=K: a kept kernel is kept on all its
# targets and forms) for the oracle and the sweeps of the real suite (not the mini corpus); the
# counts of sections 1, 6, 7 and the sass regalloc are always over the whole corpus.
# --emit N: emit-check up to N passing builtin:chaitin answers (AMD and NVIDIA sass together,
# spread evenly over the run; default 400; `all` for every one: about 0.7 s each on 2 loaded
# cores, the longest step). Each step keeps its output in WORK (default REAL.measure/): a re-run
# redoes only the steps whose output is missing (delete WORK/STEP.* to redo one).
set -euo pipefail
args="$*"
usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 1 ] || usage
real=$1; shift
mini=data/corpus-mini.h5 work="" jobs=2 sample=1 samples=10 emit=400 bin=build/regsweep
while [ $# -gt 0 ]; do
  case $1 in
    --mini) mini=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    --sample) sample=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    --emit) emit=$2; shift 2 ;;
    --regsweep) bin=$2; shift 2 ;;
    *) echo "real-suite-measure.sh: unknown option '$1'" >&2; usage ;;
  esac
done
[ -r "$real" ] || { echo "real-suite-measure.sh: $real: cannot read" >&2; exit 2; }
[ -r "$mini" ] || { echo "real-suite-measure.sh: $mini: cannot read (--mini)" >&2; exit 2; }
[ -x "$bin" ] || { echo "real-suite-measure.sh: $bin: no regsweep binary (--regsweep)" >&2; exit 2; }
bin=$(realpath "$bin") real=$(realpath "$real") mini=$(realpath "$mini")
work=${work:-${real%.h5}.measure}
mkdir -p "$work"
[ "$emit" = all ] && emit=1000000
sweep_filter=""
[ "$sample" -gt 1 ] && sweep_filter="sample=$sample"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
t_start=$(date +%s)
log() { echo "real-suite-measure: $*" >&2; }

# step NAME CMD...: CMD's stdout+stderr into WORK/NAME.txt, once (written aside, renamed when done);
# its wall time into WORK/NAME.time. A failing command's output is kept as NAME.failed.
step() {
  local name=$1; shift
  [ -e "$work/$name.txt" ] && return 0
  log "$name: $*"
  local t0=$(date +%s) rc=0
  "$@" > "$work/$name.part" 2>&1 || rc=$?
  echo $(( $(date +%s) - t0 )) > "$work/$name.time"
  if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then # 1: the command's own finding (a miss, a failure): a result
    mv "$work/$name.part" "$work/$name.failed"
    log "$name: exit $rc (output in $work/$name.failed)"
    return 0
  fi
  echo "exit $rc" >> "$work/$name.part"
  mv "$work/$name.part" "$work/$name.txt"
}
# A sweep into WORK/DIR (resumed when an earlier run stopped); its log is step NAME.
sweep() {
  local name=$1 dir=$2; shift 2
  local res=()
  [ -e "$work/$name.txt" ] && return 0
  [ -e "$work/$dir/run.h5" ] || [ -d "$work/$dir/shards" ] && res=(--resume)
  local np=()
  if [ "$jobs" -gt 1 ] && command -v mpirun >/dev/null; then np=(mpirun -np $((jobs + 1))); fi
  step "$name" "${np[@]}" "$bin" sweep --bind none --out "$work/$dir" "${res[@]}" "$@"
}
secs() { cat "$work/$1.time" 2>/dev/null || echo "?"; }

# ---- the runs --------------------------------------------------------------------------------
step info "$bin" corpus info "$real"
step list "$bin" corpus list "$real"
step mini-info "$bin" corpus info "$mini"
families=$(grep -v '^FAILED' "$work/list.txt" | grep -v '^exit ' | cut -f1 | cut -d/ -f1 | sort -u)
for f in $families; do
  fl="family=$f"; [ -n "$sweep_filter" ] && fl="$fl,$sweep_filter"
  step "oracle-$f" "$bin" oracle "$real" -j "$jobs" --filter "$fl"
done
sweep chaitin chaitin --corpus "$real" --model builtin:chaitin --samples 1 --emit-check "$emit" \
  ${sweep_filter:+--filter "$sweep_filter"}
step pinned "$bin" regalloc "$real" --pinned
step free "$bin" regalloc "$real" --free
sweep sampled-real sampled-real --corpus "$real" --model 'builtin:sampled?temp=0.5' --samples "$samples" \
  ${sweep_filter:+--filter "$sweep_filter"}
sweep sampled-mini sampled-mini --corpus "$mini" --model 'builtin:sampled?temp=0.5' --samples "$samples"
[ -d "$work/chaitin" ] && step chaitin-csv "$bin" report "$work/chaitin" --format csv --by family,target,form
[ -d "$work/sampled-real" ] && [ -d "$work/sampled-mini" ] &&
  step table2 "$bin" report "$work/sampled-real" "$work/sampled-mini" --by model,family,form
[ -d "$work/sampled-real" ] && [ -d "$work/sampled-mini" ] &&
  step table2-all "$bin" report "$work/sampled-real" "$work/sampled-mini" --by model

# ---- the note --------------------------------------------------------------------------------
# Row ids are family/variant/target/form: library = family; vendor from the target.
ninst=$(grep -cv -e '^FAILED' -e '^exit ' "$work/list.txt" || true)
nfail=$(grep -c '^FAILED' "$work/list.txt" || true)
echo "# Real suite: measurements"
echo
echo "\`scripts/real-suite-measure.sh $args\` on \`$real\` ($ninst instances, $nfail build failures);"
echo "regsweep $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u '+%Y-%m-%d %H:%M UTC'),"
echo "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; --sample $sample, --samples $samples,"
echo "-j $jobs. Steps' wall times (s): $(for f in "$work"/*.time; do printf '%s %s, ' "$(basename "$f" .time)" "$(cat "$f")"; done | sed 's/, $//')."
echo
echo "## 1. Kernels, instances and exact truths (library x architecture x form)"
echo
echo "| library | target | form | kernels | instances | exact truths | infeasible |"
echo "|---|---|---|---:|---:|---:|---:|"
# infeasible per family x target x form, from corpus info's first table
awk -F' *\\| *' 'NF >= 7 && $5 ~ /^[0-9]+$/ && $7 ~ /^[0-9]+$/ { print $2 "\t" $3 "\t" $4 "\t" $7 }' "$work/info.txt" > "$work/infeasible.tmp"
awk -F'\t' '
  FNR == NR { inf[$1 "\t" $2 "\t" $3] = $4; next }
  /^exit / || /^FAILED / { next }
  { split($1, a, "/"); k = a[1] "\t" a[3] "\t" a[4]; n[k]++; if ($NF == "truth") t[k]++
    if (!((k, a[2]) in seen)) { seen[k, a[2]] = 1; kern[k]++ } }
  END { for (k in n) { split(k, b, "\t"); printf "| %s | %s | %s | %d | %d | %d | %d |\n", b[1], b[2], b[3], kern[k], n[k], t[k], inf[k] } }' \
  "$work/infeasible.tmp" "$work/list.txt" | sort
echo
echo "Kernels compiled per library x target: kernels with an instance (any form), and (kernel or"
echo "unit) x target pairs that gave none (build failures; section 6 says why):"
echo
echo "| library | target | kernels with instances | build failures |"
echo "|---|---|---:|---:|"
awk -F'\t' '
  /^exit / { next }
  /^FAILED / { split(substr($1, 8), a, "/"); k = a[1] "\t" a[3]; fail[k]++; all[k] = 1; next }
  { split($1, a, "/"); k = a[1] "\t" a[3]; all[k] = 1; if (!((k, a[2]) in seen)) { seen[k, a[2]] = 1; kern[k]++ } }
  END { for (k in all) { split(k, b, "\t"); printf "| %s | %s | %d | %d |\n", b[1], b[2], kern[k], fail[k] } }' "$work/list.txt" | sort
echo

echo "## 2. Oracle (both verifiers): truths accepted, mutants rejected with their category"
echo
echo "| library | target | truths accepted | mutants rejected | syntax | dataflow | hardware | misses | time (s) |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
for f in $families; do
  o="$work/oracle-$f.txt"
  [ -e "$o" ] || { echo "| $f | (no result: $(basename "$work")/oracle-$f.failed) | | | | | | | |"; continue; }
  sed -n 's/^oracle: target \([^ ]*\) *truths \([0-9/]*\), mutants \([0-9/]*\) (syntax \([0-9/]*\), dataflow \([0-9/]*\), hardware \([0-9/]*\)), misses \([0-9]*\)$/\1 \2 \3 \4 \5 \6 \7/p' "$o" |
    while read -r t tr mu sy df hw mi; do echo "| $f | $t | $tr | $mu | $sy | $df | $hw | $mi | $(secs "oracle-$f") |"; done
  grep -E '^(MISS|DISAGREEMENT)' "$o" | head -5 | sed 's/^/    /' || true
  grep -h 'verifier time' "$o" | sed "s/^oracle: /$f: /" | sed 's/^/- /' || true
done
echo
echo "Categories: a mutant's expected verdict (conflict, fixed, lane: dataflow; drop, unknown key, bad"
echo "register name: syntax; class, file, alignment, budget, reserved: hardware); NVIDIA PTX rows"
echo "without an exact truth and AMD rows LLVM split are not in the oracle (section 6)."
echo

echo "## 3. builtin:chaitin: verified answers (one greedy attempt per instance)"
echo
echo "| library | target | form | instances | feasible | verified | failures (syntax/dataflow/hardware/timeout) |"
echo "|---|---|---|---:|---:|---:|---|"
if [ -e "$work/chaitin-csv.txt" ]; then
  awk -F, 'NR > 1 && $2 != "" && $1 !~ /^exit/ { printf "| %s | %s | %s | %d | %d | %d | %s/%s/%s/%s |\n", $2, $3, $4, $7, $8, $11 * $8 + 0.5, $39, $40, $41, $42 }' \
    "$work/chaitin-csv.txt" | sort
else
  echo "| (no result: $(basename "$work")/chaitin.failed) |||||||"
fi
grep -E "^[0-9]+ attempts in|^emit-check|checked [0-9]|lowered [0-9]|sm_[0-9]+: ok|REJECTED|LLVM rejected" "$work/chaitin.txt" 2>/dev/null | sed 's/^ */    /' || true
echo

echo "## 4. Emit: builtin:chaitin's passing answers written back"
echo
echo "AMD: the registers substituted into the MIR, llc finishes with its MachineVerifier, the"
echo "kernel's register counts against the verifier's. NVIDIA (form sass): lowered into the"
echo "instance's cubin, read back by nvdisasm (crosscheck)."
echo
echo "| library | target | form | checked | ok | counts differ | rejected / gaps / encoder bugs | refused: form not learned | refused: scoreboard race | errors |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"
tsv="$work/chaitin/emit-check.tsv"
if [ -e "$tsv" ]; then
  awk -F'\t' 'NR > 1 { split($1, a, "/"); k = a[1] "\t" a[3] "\t" a[4]; n[k]++; o = $4
      if (o == "ok") ok[k]++; else if (o == "counts-differ") { ok[k]++; cd[k]++ }
      else if (o ~ /^(VERIFIER|ENCODER)/) bug[k]++; else if (o == "encode-refused" && $12 ~ /still reads|scoreboard/) race[k]++
      else if (o == "encode-refused") ref[k]++; else err[k]++ }
    END { for (k in n) { split(k, b, "\t"); printf "| %s | %s | %s | %d | %d | %d | %d | %d | %d | %d |\n", b[1], b[2], b[3], n[k], ok[k], cd[k], bug[k], ref[k], race[k], err[k] } }' "$tsv" | sort
  echo
  echo "Outcomes other than ok, by kind (forms the learned field table lacks; answers that overwrite a"
  echo "register an in-flight load still reads under ptxas's scoreboards; write-back gaps; two instances each):"
  echo
  awk -F'\t' 'NR > 1 && $4 != "ok" { m = $12; if (m ~ /still reads/) k = "scoreboard race"
      else if (m ~ /not in the learned field table/) { sub(/.*: form /, "form ", m); sub(/ is not in the learned.*/, "", m); k = m " not learned" }
      else if (m ~ /no trusted field/) { sub(/.*no trusted field/, "no trusted field", m); sub(/, learned.*/, "", m); k = m }
      else k = $4 ": " substr(m, 1, 100)
      gsub(/ ?\(?sm_[0-9]+\)?/, "", k); gsub(/\/\*[0-9a-f]+\*\/ /, "", k); c[k]++; if (c[k] <= 2) ex[k] = ex[k] "; " $1 }
    END { for (k in c) printf "- %s: %d (e.g. %s)\n", k, c[k], substr(ex[k], 3, 300) }' "$tsv" | sort
else
  echo "| (no emit-check: $(basename "$work")/chaitin.txt) ||||||||"
fi
echo

echo "## 5. NVIDIA sass: pinned (ptxas's registers rebuilt identically) and free (recoloured)"
echo
echo "| library | target | instances | pinned identical | free valid | R ptxas -> ours (sum) | fewer R | occupancy gained |"
echo "|---|---|---:|---:|---:|---|---:|---:|"
awk '
  FNR == 1 { file++ }
  /^regalloc\(free\): .*R: [0-9]+ -> [0-9]+ registers/ { match($0, /R: [0-9]+ -> [0-9]+/); split(substr($0, RSTART + 3, RLENGTH - 3), r, " -> ")
    rb = r[1]; ra = r[2]; match($0, /occupancy [0-9]+ -> [0-9]+/); split(substr($0, RSTART + 10, RLENGTH - 10), o, " -> "); ob = o[1]; oa = o[2] }
  /^instance / { split($2, a, "/"); k = a[1] "\t" a[3]; ok = ($3 == "identical," || $3 == "valid,")
    if (file == 1) { n[k]++; pin[k] += ok } else { fr[k] += ok; sb[k] += rb; sa[k] += ra; less[k] += (ra < rb); occ[k] += (oa > ob) } rb = ra = ob = oa = 0 }
  END { for (k in n) { split(k, b, "\t"); printf "| %s | %s | %d | %d | %d | %d -> %d | %d | %d |\n", b[1], b[2], n[k], pin[k], fr[k], sb[k], sa[k], less[k], occ[k] } }' \
  "$work/pinned.txt" "$work/free.txt" 2>/dev/null | sort
grep -h "^regalloc(pinned): .*sass instances\|^regalloc(free): .*sass instances" "$work/pinned.txt" "$work/free.txt" 2>/dev/null | sed 's/^/    /' || true
grep -h "^instance .*: \(FAILED\|failure\|refused\)" "$work/pinned.txt" "$work/free.txt" 2>/dev/null | head -8 | sed 's/^/    /' || true
echo

echo "## 6. Exclusions, each with its reason"
echo
echo "Build failures ((kernel or unit) x target that gave no instance), by library, target and reason:"
echo
echo "| library | target | count | reason (paths and numbers folded) |"
echo "|---|---|---:|---|"
grep '^FAILED' "$work/list.txt" | awk -F'\t' '{ split(substr($1, 8), a, "/"); r = $2; gsub(/\/[^ :]*\//, "", r); gsub(/_Z[0-9A-Za-z_]+/, "KERNEL", r)
    gsub(/0x[0-9a-f]+/, "0xN", r); gsub(/[0-9]+/, "N", r); gsub(/\|/, "/", r); print a[1] "\t" a[3] "\t" substr(r, 1, 140) }' |
  sort | uniq -c | sort -k2,2 -k3,3 -k1,1rn | awk '{ c = $1; sub(/^ *[0-9]+ /, ""); split($0, f, "\t"); printf "| %s | %s | %d | %s |\n", f[1], f[2], c, f[3] }'
echo
echo "Instances without an exact truth (kept in the corpus, not in the oracle), by reason:"
echo
echo "| library | target | form | count | reason |"
echo "|---|---|---|---:|---|"
grep -v -e '^FAILED' -e '^exit ' "$work/list.txt" | awk -F'\t' '$NF != "truth" { split($1, a, "/"); r = $NF
    gsub(/\/[^ ]*\/[^ :]*:?/, "FILE:", r); gsub(/_Z[0-9A-Za-z_~]+/, "KERNEL", r); gsub(/[0-9]+/, "N", r)
    print a[1] "\t" a[3] "\t" a[4] "\t" substr(r, 1, 120) }' | sort | uniq -c |
  awk '{ c = $1; sub(/^ *[0-9]+ /, ""); split($0, f, "\t"); printf "| %s | %s | %s | %d | %s |\n", f[1], f[2], f[3], c, f[4] }'
echo

echo "## 7. Normalization's size reduction: real code against the template families"
echo
echo "Mean per instance over each library's (family's) rows, from \`corpus info\` (its per family x target"
echo "x form means, weighted by instances); the template families are the mini corpus's."
echo
echo "| corpus | family | form | instances | raw lines | norm lines | lines -% | raw tokens | norm tokens | tokens -% |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"
norm() { # corpus-info file, label
  awk -F' *\\| *' -v lab="$2" '
    /^\| family \| target \| form \| instances/ { sec = 1; next }
    /^\| family \| target \| form \| raw lines/ { sec = 2; next }
    /^$/ { sec = 0 }
    sec == 1 && $5 ~ /^[0-9]+$/ { n[$2 "\t" $3 "\t" $4] = $5 }
    sec == 2 && $5 ~ /^[0-9]+$/ { k = $2 "\t" $3 "\t" $4; w = n[k]
      for (q = 0; q < 2; q++) { g = (q ? "(all)" : $2) "\t" $4  # per family, and all families together
        N[g] += w; rl[g] += w * $5; nl[g] += w * $6; rt[g] += w * $8; nt[g] += w * $9 } }
    END { for (g in N) if (N[g]) { split(g, b, "\t")
      printf "| %s | %s | %s | %d | %.0f | %.0f | %.1f | %.0f | %.0f | %.1f |\n", lab, b[1], b[2], N[g], rl[g] / N[g], nl[g] / N[g],
        100 * (1 - nl[g] / rl[g]), rt[g] / N[g], nt[g] / N[g], 100 * (1 - nt[g] / rt[g]) } }' "$1" | sort
}
{ norm "$work/info.txt" real; norm "$work/mini-info.txt" template; } | grep '(all)'
{ norm "$work/info.txt" real; norm "$work/mini-info.txt" template; } | grep -v '(all)'
echo

echo "## 8. builtin:sampled (synthetic baseline, not a model): Table 2, real suite beside the template families"
echo
echo "The same sweep (\`sweep --model 'builtin:sampled?temp=0.5' --samples $samples\`) on the real suite"
echo "(sampled-real) and on the mini corpus's template families (sampled-mini); \`regsweep report\`'s"
echo "Table 2 and its detail table (pass@k with 95% bootstrap intervals, failure classes)."
echo
for t in table2-all table2; do
  if [ -e "$work/$t.txt" ]; then
    # Table 2 and the detail table (the first two tables of the report), without their notes
    awk '/^\|/ { print; inb = 1; next } inb && !/^\|/ { print ""; inb = 0; if (++tables == 2) exit }' "$work/$t.txt"
  else
    echo "(no report: $(basename "$work")/sampled-*.failed)"
  fi
done
echo "Pass rate: the greedy attempt; Pass@$samples: one of the first $samples attempts passed (observed); pass@k:"
echo "the unbiased estimator; failure shares over failed attempts (docs/report.md)."
echo
log "done in $(( $(date +%s) - t_start )) s; work files in $work"
