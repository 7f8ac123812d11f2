#!/usr/bin/env bash
# sass-wild-measure.sh -- measure the SASS front end on cubins under OUT/LIB/ARCH/ (built locally from
# public sources; no build script for fetched code is committed, by this workplace's rule)
# (issue 42): per library x arch, cubins, functions, functions refused (by form), pinned
# identical (and of them read with rows inferred from nvdisasm -plr), free valid / kept ptxas's
# colouring (it could not colour validly) / fewer / equal / more R than ptxas, functions (and rows) whose
# `inspect --live` equals nvdisasm -plr, and the time of disasm + parse + pinned + free per 100k
# instructions. One nvdisasm run per cubin (`corpus disasm --plr`): pinned, free (with the cubin's
# control bits) and the -plr check read that listing. BEFORE=path/to/an/older/regsweep also counts the functions
# that build refuses (a whole listing for one form, before issue 42).
# Usage: scripts/sass-wild-measure.sh [LIB...]   Env: OUT (/work/cache/anysass) REGSWEEP (build/regsweep)
set -uo pipefail
OUT="${OUT:-/work/cache/anysass}"
RS="${REGSWEEP:-build/regsweep}"
LIBS=("$@")
[[ ${#LIBS[@]} -gt 0 ]] || LIBS=(cuda-samples ggml)
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
printf '%-13s %-6s %5s %6s %7s %8s %7s %6s %6s %6s %6s %6s %6s %9s %9s %9s  %s\n' lib arch cubins funcs insts refused pinned inferd free kept fewer equal more live=plr plr-rows 's/100k' "refused by form"
for lib in "${LIBS[@]}"; do
  for d in "$OUT/$lib"/sm_*; do
    [[ -d "$d" ]] || continue
    a=$(basename "$d")
    shopt -s nullglob
    cubs=("$d"/*.cubin)
    [[ ${#cubs[@]} -gt 0 ]] || continue
    : >"$T/p"; : >"$T/f"; : >"$T/b"; : >"$T/l"
    t0=$(date +%s.%N)
    insts=0
    for c in "${cubs[@]}"; do
      "$RS" corpus disasm "$c" --plr -o "$T/x.plr" >"$T/d" 2>&1 || { cat "$T/d" >>"$T/p"; continue; }
      n=$(sed -nE 's/.* ([0-9]+) instructions,.*/\1/p' "$T/d")
      insts=$((insts + ${n:-0}))
      "$RS" regalloc "$T/x.plr" --cubin "$c" --pinned >>"$T/p" 2>&1
      "$RS" regalloc "$T/x.plr" --cubin "$c" --free >>"$T/f" 2>&1
      "$RS" inspect "$T/x.plr" --live --check-plr >>"$T/l" 2>&1
      if [[ -n "${BEFORE:-}" ]]; then # exit 2: the listing refused whole (1 is a pinned failure)
        "$BEFORE" regalloc "$c" --pinned -q >/dev/null 2>>"$T/b"
        [[ $? == 2 ]] && echo "BEFORE-REFUSED $c" >>"$T/b"
      fi
    done
    t1=$(date +%s.%N)
    ident=$(grep -c ': identical (' "$T/p")
    refused=$(grep -c 'regalloc: refused ' "$T/p")
    funcs=$((ident + refused + $(grep -c 'regalloc(pinned): .*failure' "$T/p")))
    valid=$(grep 'contributor sets equivalent.*verifier: pass' "$T/f" | grep -vc 'could not colour it validly')
    kept=$(grep -c 'could not colour it validly' "$T/f") # free kept ptxas's colouring (named, exit 1)
    inferd=$(grep -c ': identical (.*inferred rows (nvdisasm -plr): ' "$T/p") # pinned identical with inferred rows
    read -r fewer equal more < <(sed -nE 's/^regalloc\(free\): [^:]+: R: ([0-9]+) -> ([0-9]+) .*/\1 \2/p' "$T/f" |
      awk '{ if ($2 < $1) f++; else if ($2 == $1) e++; else m++ } END { print f + 0, e + 0, m + 0 }')
    byform=$(grep -h ' functions refused, by form:' "$T/p" | sed 's/.*by form://' | tr ' ' '\n' | paste - - 2>/dev/null |
      awk 'NF == 2 { c[$1] += $2 } END { for (k in c) printf "%s %d, ", k, c[k] }')
    live=$(grep -c '^live = nvdisasm -plr: ' "$T/l")
    lrows=$(sed -nE 's/^live = nvdisasm -plr: .*: ([0-9]+) rows.*/\1/p' "$T/l" | awk '{ s += $1 } END { print s + 0 }')
    secs=$(echo "$t1 - $t0" | bc) # includes the -plr check (a fraction of parse + pinned)
    per=$( [[ $insts -gt 0 ]] && echo "scale=2; $secs * 100000 / $insts" | bc || echo -)
    printf '%-13s %-6s %5d %6d %7d %8d %7d %6d %6d %6d %6d %6d %6d %9d %9d %9s  %s\n' "$lib" "$a" "${#cubs[@]}" "$funcs" "$insts" "$refused" \
      "$ident" "$inferd" "$valid" "$kept" "$fewer" "$equal" "$more" "$live" "$lrows" "$per" "${byform%, }"
    [[ -n "${BEFORE:-}" ]] && echo "  before ($BEFORE): $(grep -c BEFORE-REFUSED "$T/b") of ${#cubs[@]} cubins refused whole"
  done
done
