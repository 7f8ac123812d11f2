#!/usr/bin/env bash
# learn-sass-fields.sh -- regenerate sass/fields.c, the register fields of the SASS encoding per
# opcode form, from (cubin, completed listing) pairs of real ptxas 13 output, then check that
# every instruction of every pair re-encodes byte-identically through the new table.
#
# Usage: scripts/learn-sass-fields.sh [WORK_DIR...]
#   WORK_DIR: a `corpus build --work` directory (its nv/<family>/<variant>/sm_XX.cubin + .sass
#   pairs are used as they are); the PTX fixtures tests/fixtures/nv/*.ptx are always compiled for
#   sm_75 sm_80 sm_86 sm_89 sm_90 (sm_75-89 from the sm_89 PTX with `.target` changed) and the
#   kept fixture cubins (tests/fixtures/sass/*.cubin) used with their listings.
# Env: PTXAS (/usr/local/cuda/bin/ptxas), REGSWEEP (build/regsweep), NVDISASM (as regsweep finds it).
# After a rebuild, run it again: the check line must say 0 mismatches ("reproduced" = instructions).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PTXAS="${PTXAS:-/usr/local/cuda/bin/ptxas}"
REGSWEEP="${REGSWEEP:-build/regsweep}"
ND=()
[[ -n "${NVDISASM:-}" ]] && ND=(--nvdisasm "$NVDISASM")
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
pairs=()
for p in tests/fixtures/nv/*.sm_89.ptx; do
  k="$(basename "$p" .sm_89.ptx)"
  for t in sm_75 sm_80 sm_86 sm_89 sm_90; do
    src="$p"
    [[ $t == sm_90 ]] && src="tests/fixtures/nv/$k.sm_90.ptx"
    sed "s/^\.target.*/.target $t/" "$src" >"$TMP/$k.$t.ptx"
    "$PTXAS" -arch="$t" "$TMP/$k.$t.ptx" -o "$TMP/$k.$t.cubin"
    "$REGSWEEP" corpus disasm "$TMP/$k.$t.cubin" "${ND[@]}" -o "$TMP/$k.$t.sass" 2>/dev/null
    pairs+=("$TMP/$k.$t.cubin=$TMP/$k.$t.sass")
  done
done
for c in tests/fixtures/sass/*.cubin; do pairs+=("$c=${c%.cubin}.sass"); done
for w in "$@"; do
  while IFS= read -r c; do
    [[ -s "${c%.cubin}.sass" ]] && pairs+=("$c=${c%.cubin}.sass")
  done < <(find "$w" -name 'sm_*.cubin' -not -path '*.tmp.*' | sort)
done
"$REGSWEEP" lower learn -o sass/fields.c "${pairs[@]}"
echo "rebuild (cmake --build build) and check: $REGSWEEP lower check ... (run by this script's second pass)"
cmake --build build --target regsweep >/dev/null
"$REGSWEEP" lower check "${pairs[@]}" | tail -1
