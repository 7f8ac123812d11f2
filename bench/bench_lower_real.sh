#!/usr/bin/env bash
# The cubin back end on code nobody here wrote: per library x architecture directory of
# (X.cubin, X.sass) pairs (built locally from NVIDIA/cuda-samples and ggml's CUDA back end; no build script committed),
# side by side in one run per cubin:
#   hazards   `lower hazards` on ptxas's own listing (0 expected: every rule is measured on it);
#   pinned    `lower X.cubin X.sass X.sass -o P.cubin`: byte-identical (and its rs_sass_lower time);
#   regalloc  `regalloc X.cubin --listing X.sass --pinned -o R.cubin`: byte-identical too (ptxas's colouring
#             through the Problem with ptxas's scoreboards: a false hazard fails it);
#   nvdisasm  `nvdisasm -c` on the same cubin (the ratio's denominator);
#   free      `regalloc X.cubin --listing X.sass --free -o F.cubin`: written and crosschecked, or
#             refused (reason: the first field nobody could find), functions kept as ptxas wrote them;
#             the forms probed, fields found, nvdisasm runs and probe time; crosscheck mismatches.
#   bench/bench_lower_real.sh [BIN] [--no-free] DIR...     (DIR: e.g. /work/cache/anylower/cuda-samples/sm_80;
#   the library is DIR's parent's name, the architecture DIR's name)
# Without DIR it measures our own fixture pairs in tests/fixtures/sass-lower (with --quick, CI's
# smoke run, those of sm_86 only: 3 cubins, each costs several nvdisasm runs); the real libraries' sources are not committed: docs/lower.md has their figures.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${REGSWEEP:-build/regsweep}
nd=${NVDISASM:-$(command -v nvdisasm || echo /opt/nvidia-cuda-11.8/usr/bin/nvdisasm)}
dirs=()
free=1 quick=0
while [ $# -gt 0 ]; do
  case $1 in
    --no-free) free=0 ;;
    --quick) quick=1 ;; # the smoke run: the fixtures of one architecture (sm_86) only
    *) if [ -f "$1" ] && [ -x "$1" ]; then bin=$1; else dirs+=("$1"); fi ;;
  esac
  shift
done
own=${#dirs[@]}
[ ${#dirs[@]} -gt 0 ] || dirs=(tests/fixtures/sass-lower)
[ -x "$nd" ] || { echo "bench_lower_real: no nvdisasm ($nd): SKIPPED"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
rows=$tmp/rows
: >"$rows"
: >"$tmp/kept"
printf "lib\tarch\tcubin\tfuncs\thazards\tpinned\tlower_ms\tnvdisasm_ms\tfree\tkept\treason\tforms_probed\tprobe_fields\tprobe_runs\tprobe_ms\txcheck_insts\tmismatches\tpinned_ra\tfuncs_reenc\n"
for d in "${dirs[@]}"; do
  arch=$(basename "$d") lib=$(basename "$(dirname "$d")")
  for c in "$d"/*.cubin; do
    [ $quick = 1 ] && [ $own = 0 ] && [[ $c != *.sm_86.cubin ]] && continue
    s=${c%.cubin}.sass
    [ -s "$s" ] || continue
    name=$(basename "$c" .cubin)
    h=$("$bin" lower hazards "$c=$s" 2>&1 | sed -n 's/^hazards: [0-9]* listings, \([0-9]*\) hazards$/\1/p')
    "$bin" lower "$c" "$s" "$s" -o "$tmp/p.cubin" --no-crosscheck >"$tmp/pin.out" 2>&1
    pin=fail
    cmp -s "$c" "$tmp/p.cubin" 2>/dev/null && pin=identical
    lms=$(sed -n 's/^lower: .*(\([0-9.]*\) ms)$/\1/p' "$tmp/pin.out")
    funcs=$(sed -n 's/^lower: .*: sm_[0-9]*, \([0-9]*\) functions.*/\1/p' "$tmp/pin.out")
    pra=-
    if [ "${PINNED_RA:-1}" = 1 ]; then
      "$bin" regalloc "$c" --listing "$s" --pinned -o "$tmp/r.cubin" --nvdisasm "$nd" >"$tmp/pra.out" 2>&1
      pra=fail
      cmp -s "$c" "$tmp/r.cubin" 2>/dev/null && pra=identical
      rm -f "$tmp/r.cubin"
    fi
    "$bin" corpus disasm "$c" --rewrite "$tmp/old.cubin" >/dev/null 2>&1
    t0=$(now); "$nd" -c "$tmp/old.cubin" >/dev/null 2>&1; t1=$(now)
    nms=$(echo "($t1-$t0)*1000" | bc -l)
    fr=- kept=0 reason=- pf=0 pfl=0 pr=0 pms=0 xi=0 xm=0 fre=0
    if [ $free = 1 ]; then
      "$bin" regalloc "$c" --listing "$s" --free -o "$tmp/f.cubin" --nvdisasm "$nd" >"$tmp/free.out" 2>&1
      frc=$?
      kept=$(grep -c '^kept: ' "$tmp/free.out")
      if [ $frc = 0 ]; then fr=written
      elif [ $frc = 1 ] && [ "$kept" -gt 0 ] && grep -q '^crosscheck (nvdisasm):.*: ok' "$tmp/free.out"; then fr=written-some-kept
      else
        fr=refused
        reason=$(grep -o "form [A-Z0-9]* 0x[0-9a-f]* '[A-Z]*'\|operand [0-9]* ([A-Z]) of [A-Z0-9]* 0x[0-9a-f]* '[A-Z]*'\|scoreboard hazard\|MISMATCH\|known only as a pair" "$tmp/free.out" | head -1)
        grep -q '^regalloc(free): ' "$tmp/free.out" || reason="regalloc --free failed"
      fi
      read -r pf pfl pr pms <<<"$(sed -n 's/^probe: \([0-9]*\) forms probed.*, \([0-9]*\) fields found.* in \([0-9]*\) nvdisasm runs.*, \([0-9]*\) ms$/\1 \2 \3 \4/p' "$tmp/free.out" | head -1)"
      fre=$(sed -n 's/^lower: .* re-encoded ([0-9]* register fields) in \([0-9]*\) functions.*/\1/p' "$tmp/free.out" | head -1)
      # the kept functions' reasons, by class, for the summary
      sed -n 's/^kept: [^:]*: ptxas.s code and register count: //p' "$tmp/free.out" |
        sed -e 's/^\/\*[0-9a-f]*\*\/: //' -e 's/^\([0-9]* scoreboard hazards\?\).*/scoreboard hazard/' -e 's/, nor does.*//' -e 's/ (sm_[0-9]*, .*//' \
          -e 's/^\(refused by the front end ([^)]*)\).*/\1/' |
        sed "s/^/$lib $arch: /" >>"$tmp/kept"
      read -r xi xm <<<"$(sed -n 's/.*crosscheck (nvdisasm): [0-9]* functions, \([0-9]*\) instructions, \([0-9]*\) mismatches.*/\1 \2/p' "$tmp/free.out" | head -1)"
    fi
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$lib" "$arch" "$name" "${funcs:-0}" "${h:-?}" "$pin" \
      "${lms:-0}" "$nms" "$fr" "$kept" "${reason:--}" "${pf:-0}" "${pfl:-0}" "${pr:-0}" "${pms:-0}" "${xi:-0}" "${xm:-0}" "$pra" "${fre:-0}" | tee -a "$rows"
  done
done
echo
echo "per library x architecture: cubins; hazards on ptxas's code; pinned byte-identical (lower, regalloc --pinned -o); free: written, written with functions kept, refused; functions re-encoded and kept (share re-encoded of those free mode changed); forms probed, fields, nvdisasm runs, probe ms; instructions crosschecked, mismatches; lowering vs nvdisasm -c"
awk -F'\t' '{k=$1" "$2; n[k]++; fn[k]+=$4; h[k]+=$5; p[k]+=($6=="identical"); pa[k]+=($18=="identical"); w[k]+=($9=="written"); s[k]+=($9=="written-some-kept"); r[k]+=($9=="refused"); kp[k]+=$10; fe[k]+=$19; pf[k]+=$12; pl[k]+=$13; pr[k]+=$14; pm[k]+=$15; xi[k]+=$16; xm[k]+=$17; lm[k]+=$7; nm[k]+=$8}
  END {for (k in n) printf "  %s\t%d cubins, %d functions\thazards %d\tpinned identical %d, regalloc --pinned -o %d\tfree: written %d, with kept functions %d, refused %d; functions re-encoded %d, kept %d (%.2f%% re-encoded)\tprobe: %d forms, %d fields, %d runs, %.0f ms (%.0f ms per form)\tcrosscheck %d instructions, %d mismatches\tlowering %.1f ms vs nvdisasm %.0f ms (ratio %.4f)\n", k, n[k], fn[k], h[k], p[k], pa[k], w[k], s[k], r[k], fe[k], kp[k], fe[k] + kp[k] ? 100 * fe[k] / (fe[k] + kp[k]) : 100, pf[k], pl[k], pr[k], pm[k], pf[k] ? pm[k] / pf[k] : 0, xi[k], xm[k], lm[k], nm[k], nm[k] ? lm[k] / nm[k] : 0}' "$rows" | sort
echo "functions kept, by reason:"
[ -s "$tmp/kept" ] && sort "$tmp/kept" | uniq -c | sort -rn
echo "refusal reasons:"
awk -F'\t' '$9 == "refused" {print "  " $1 " " $2 ": " $11}' "$rows" | sort | uniq -c | sort -rn
