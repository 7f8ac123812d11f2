#!/usr/bin/env bash
# learn-sass-fields.sh -- regenerate cubin/fields.c, the register fields of the SASS encoding per
# opcode form, from (cubin, completed listing) pairs of real ptxas 13 output, then check that
# every instruction of every pair re-encodes byte-identically through the new table.
#
# Usage: scripts/learn-sass-fields.sh [DIR...]
#   DIR: any tree of sm_XX.cubin files (a `corpus build --work` directory, a real-suite work dir
#   such as /work/rc-real/work/magma with its units/*/ and v/nv/*/*/, multi-kernel cubins too):
#   each cubin's completed listing is the .sass beside it, else `regsweep corpus disasm` writes
#   one into the cache. Always used: the PTX fixtures tests/fixtures/nv/*.ptx compiled for
#   sm_75 sm_80 sm_86 sm_89 sm_90 (sm_75-89 from the sm_89 PTX with `.target` changed), the kept
#   fixture cubins (tests/fixtures/sass/*.cubin) with their listings, and the CUDA sources
#   tests/fixtures/sass-real/*.cu and tests/fixtures/sass-tex/*.cu compiled as
#   scripts/gen-sass-real.sh does (`nvcc -cubin -O3`).
#
# Merge (the default): the last table learned from scratch, cubin/fields.c at BASE_COMMIT
#   (2a5cea2: 1,533 cubins, MAGMA 2.6.2's real-suite units and variants among them, which are not
#   kept and take hours to rebuild), is the base of `regsweep lower learn --merge`: the new pairs
#   (tests/fixtures/sass-tex, sass-real sources added or changed since BASE_COMMIT, every DIR; the
#   other fixtures were among the base's 1,533) are
#   learned and merged into it, so no form or trusted field of the base is lost, and a new sample
#   that contradicts a trusted field stops the run naming the form. FRESH=1 learns from every pair
#   above alone instead (what the base lacks is then lost). Either way the check runs over every
#   pair.
# Env: PTXAS (/usr/local/cuda/bin/ptxas), NVCC (/usr/local/cuda/bin/nvcc), REGSWEEP
#   (build/regsweep), NVDISASM (as regsweep finds it), CACHE (build/learn-fields: compiled
#   fixture cubins and listings written for DIR cubins; a rerun reuses what is newer than its
#   source, so an interrupted run resumes), BASE_COMMIT (2a5cea2), BASE_PAIRS (the base's pair
#   count where its header lacks it: 1533 for 2a5cea2), FRESH (unset).
# Probe (PROBE=1, the default now): `lower learn --probe` asks nvdisasm where each form's fields
#   lie (cubin/probe.c: one sample per form, bits flipped, decoded in one batch per architecture):
#   the probe's field stands over a tie, a narrowing or an untrusted token, and a base field it
#   contradicts is replaced (ISETP 0xa0c 'PPRPP': operand 0 at bit 68 by the samples' tie, 81 by
#   nvdisasm). PROBE=0 learns from the samples alone.
# Quick (QUICK=1): no fixture compiled; the pairs are the kept fixture cubins (tests/fixtures/sass,
#   tests/fixtures/sass-lower) and every X.cubin under each DIR with X.sass beside it (any name:
#   scripts/build-real-cubins.sh's output), merged into BASE_FILE (default: cubin/fields.c as it is
#   now), then `lower check` (which probes every row it meets) over the same pairs.
# After a rebuild, run it again: the check line must say 0 mismatches ("reproduced" = instructions).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PTXAS="${PTXAS:-/usr/local/cuda/bin/ptxas}"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
CACHE="${CACHE:-build/learn-fields}"
REGSWEEP="${REGSWEEP:-build/regsweep}"
BASE_COMMIT="${BASE_COMMIT:-2a5cea2}"
[[ $BASE_COMMIT == 2a5cea2 ]] && BASE_PAIRS="${BASE_PAIRS:-1533}"
ND=()
[[ -n "${NVDISASM:-}" ]] && ND=(--nvdisasm "$NVDISASM")
PROBEARG=()
[[ "${PROBE:-1}" == 1 ]] && PROBEARG=(--probe)
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
pairs=()
if [[ -n "${QUICK:-}" ]]; then
  for c in tests/fixtures/sass/*.cubin tests/fixtures/sass-lower/*.cubin; do pairs+=("$c=${c%.cubin}.sass"); done
  for w in "$@"; do
    while IFS= read -r c; do
      [[ -s "${c%.cubin}.sass" ]] && pairs+=("$c=${c%.cubin}.sass")
    done < <(find "$w" -name '*.cubin' | sort)
  done
  base="${BASE_FILE:-cubin/fields.c}"
  cp "$base" "$TMP/base.c"
  echo "learn-sass-fields: quick: ${#pairs[@]} pairs merged into $base ${PROBEARG[*]}" >&2
  "$REGSWEEP" lower learn --merge "$TMP/base.c" "${PROBEARG[@]}" -o cubin/fields.c "${pairs[@]}"
  cmake --build build --target regsweep >/dev/null
  "$REGSWEEP" lower check "${ND[@]}" "${pairs[@]}" | tail -2
  exit 0
fi
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
# listing for cubin $1 into $2 unless a newer one is there (cache: resumable)
disasm() {
  [[ -s "$2" && "$2" -nt "$1" ]] && return 0
  mkdir -p "$(dirname "$2")"
  "$REGSWEEP" corpus disasm "$1" "${ND[@]}" -o "$2.part" && mv "$2.part" "$2"
}
newpairs=() # what the base table was not learned from
for d in sass-real sass-tex; do
  mkdir -p "$CACHE/$d"
  for src in tests/fixtures/$d/*.cu; do
    k="$(basename "$src" .cu)"
    for t in sm_75 sm_80 sm_86 sm_89 sm_90; do
      c="$CACHE/$d/$k.$t.cubin"
      if ! [[ -s "$c" && "$c" -nt "$src" ]]; then
        "$NVCC" -cubin -O3 -arch="$t" "$src" -o "$c.part" && mv "$c.part" "$c"
      fi
      disasm "$c" "${c%.cubin}.sass"
      pairs+=("$c=${c%.cubin}.sass")
      # new to the base: sass-tex, and a sass-real source added or changed since BASE_COMMIT
      if [[ $d == sass-tex ]] || ! git cat-file -e "$BASE_COMMIT:$src" 2>/dev/null ||
        ! git diff --quiet "$BASE_COMMIT" -- "$src"; then
        newpairs+=("$c=${c%.cubin}.sass")
      fi
    done
  done
done
for w in "$@"; do
  [[ -d "$w" ]] || { echo "learn-sass-fields: $w: not a directory" >&2; exit 2; }
  wa="$(cd "$w" && pwd)"
  while IFS= read -r c; do
    l="${c%.cubin}.sass"
    if ! [[ -s "$l" ]]; then
      l="$CACHE/dirs$wa/${c#"$wa"/}"
      l="${l%.cubin}.sass"
      disasm "$c" "$l" || { echo "learn-sass-fields: $c: no listing, skipped" >&2; continue; }
    fi
    pairs+=("$c=$l")
    newpairs+=("$c=$l")
  done < <(find "$wa" -name 'sm_[0-9]*.cubin' -not -path '*.tmp.*' | sort)
done
echo "learn-sass-fields: ${#pairs[@]} (cubin, listing) pairs" >&2
if [[ -n "${FRESH:-}" ]]; then
  "$REGSWEEP" lower learn "${PROBEARG[@]}" -o cubin/fields.c "${pairs[@]}"
else
  base="$CACHE/fields-$BASE_COMMIT.c"
  # the base's header names its pair count where learn wrote one; 2a5cea2's predates that line
  git show "$BASE_COMMIT:cubin/fields.c" >"$base" 2>/dev/null || git show "$BASE_COMMIT:sass/fields.c" >"$base"
  if [[ -n "${BASE_PAIRS:-}" ]] && ! grep -q '^ \* Learned from ' "$base"; then
    sed -i "s|^ \* edit by hand; docs/lower.md. \*/| * edit by hand; docs/lower.md.\n * Learned from $BASE_PAIRS (cubin, listing) pairs: its commit says so (BASE_PAIRS). */|" "$base"
  fi
  echo "learn-sass-fields: ${#newpairs[@]} new pairs merged into cubin/fields.c at $BASE_COMMIT" >&2
  "$REGSWEEP" lower learn --merge "$base" "${PROBEARG[@]}" -o cubin/fields.c "${newpairs[@]}"
fi
echo "rebuild (cmake --build build) and check: $REGSWEEP lower check ... (run by this script's second pass)"
cmake --build build --target regsweep >/dev/null
"$REGSWEEP" lower check "${pairs[@]}" | tail -1
