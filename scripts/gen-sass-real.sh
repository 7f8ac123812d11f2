#!/usr/bin/env bash
# gen-sass-real.sh -- regenerate tests/fixtures/sass-real/ from the CUDA kernels there (*.cu,
# written for regsweep's tests: cp.async, cuda::barrier, cooperative groups, warp votes,
# reductions and matches, atomics of every kind, histograms, layernorm, softmax, transposes,
# fp64 reductions, an FDTD stencil, Monte Carlo, textures and surfaces, three-input min/max).
#
# Usage: scripts/gen-sass-real.sh      (after building: it uses build/regsweep)
# Env:   NVCC (/usr/local/cuda/bin/nvcc, CUDA 13)  NVDISASM (PATH, else CUDA 11.8's in
#        /opt/nvidia-cuda-11.8)  REGSWEEP (build/regsweep)
#
# Per source NAME.cu and target T in sm_75 sm_80 sm_86 sm_89 sm_90:
#   nvcc -cubin -O3 -arch=T -Xptxas -v   -> NAME.T.ptxas-v.txt (the cubin is temporary)
#   NAME.T.sass  regsweep corpus disasm (the completed listing, as the corpus stores it)
#   NAME.T.lrm   nvdisasm -c -lrm count on the header-rewritten cubin, rows cut to address and
#                counts as scripts/gen-sass-fixtures.sh does
#   NAME.T.texplr  nvdisasm -c -plr -lrm narrow: the column headers and the rows of texture and
#                surface instructions only (their tuple widths are checked against it), when
#                the listing has any
#   NAME.T.formplr  the same, for the forms MAGMA 2.6.2 showed the table lacked (F2F.F32.F64,
#                ULEA.HI.SX32, generic ATOM.E.CAS and its LD.E/ST.E fallback), when it has any
# and FORMS.txt: `regsweep corpus forms` over the cubins (the coverage these kernels give).
# Reruns are identical except the "Compile time" lines of *.ptxas-v.txt.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
REGSWEEP="${REGSWEEP:-build/regsweep}"
if [[ -z "${NVDISASM:-}" ]]; then
  NVDISASM="$(command -v nvdisasm || true)"
  [[ -n "$NVDISASM" ]] || NVDISASM=/opt/nvidia-cuda-11.8/usr/bin/nvdisasm
fi
OUT=tests/fixtures/sass-real
TARGETS=(sm_75 sm_80 sm_86 sm_89 sm_90)
table() { sed -E -e 's#^( +/\*[0-9a-f]+\*/) .*(// \|)#\1 \2#' -e 's/ *$//'; }
# -plr rows of texture/surface instructions, with the section lines and column headers
texrows() {
  grep -E '^\s+\.section|^\s+// [+|]|/\*[0-9a-f]+\*/ +(@!?U?P[0-9T] +)?(TEX|TLD|TLD4|TXD|TXQ|TMML|SULD|SUST|SURED|SUATOM)[. ]' |
    sed -e 's/ *$//'
}
formrows() {
  grep -E '^\s+\.section|^\s+// [+|]|/\*[0-9a-f]+\*/ +(@!?U?P[0-9T] +)?(F2F\.F32\.F64|ULEA\.HI\.SX32|ATOM\.E\.CAS|LD\.E|ST\.E)[. ]' |
    sed -e 's/ *$//'
}
die() { echo "gen-sass-real: ERROR: $*" >&2; exit 1; }
for t in "$NVCC" "$NVDISASM" "$REGSWEEP"; do [[ -x "$t" ]] || die "not executable: $t"; done
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
rm -f "$OUT"/*.sass "$OUT"/*.lrm "$OUT"/*.texplr "$OUT"/*.formplr "$OUT"/*.ptxas-v.txt
for src in "$OUT"/*.cu; do
  name="$(basename "$src" .cu)"
  for t in "${TARGETS[@]}"; do
    id="$name.$t" cub="$TMP/$name.$t.cubin"
    "$NVCC" -cubin -O3 -arch="$t" -Xptxas -v "$src" -o "$cub" 2>"$OUT/$id.ptxas-v.txt" >/dev/null ||
      { cat "$OUT/$id.ptxas-v.txt" >&2; die "$id: nvcc failed"; }
    sed -i '/^nvcc warning/d' "$OUT/$id.ptxas-v.txt"
    "$REGSWEEP" corpus disasm "$cub" --nvdisasm "$NVDISASM" -o "$OUT/$id.sass" 2>"$TMP/log" ||
      { cat "$TMP/log" >&2; die "$id: disasm failed"; }
    "$REGSWEEP" corpus disasm "$cub" --rewrite "$TMP/$id.old.cubin"
    "$NVDISASM" -c -lrm count "$TMP/$id.old.cubin" | table >"$OUT/$id.lrm"
    "$NVDISASM" -c -plr -lrm narrow "$TMP/$id.old.cubin" | texrows >"$TMP/$id.texplr"
    if grep -q '/\*[0-9a-f]*\*/' "$TMP/$id.texplr"; then mv "$TMP/$id.texplr" "$OUT/$id.texplr"; fi
    "$NVDISASM" -c -plr -lrm narrow "$TMP/$id.old.cubin" | formrows >"$TMP/$id.formplr"
    if [[ $name == magma_forms ]]; then mv "$TMP/$id.formplr" "$OUT/$id.formplr"; fi
  done
done
"$REGSWEEP" corpus forms --nvdisasm "$NVDISASM" "$TMP"/*.sm_[0-9][0-9].cubin | sed "s|$TMP/||" >"$OUT/FORMS.txt" ||
  die "unknown forms: see $OUT/FORMS.txt"
tail -1 "$OUT/FORMS.txt"
