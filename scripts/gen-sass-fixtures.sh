#!/usr/bin/env bash
# gen-sass-fixtures.sh -- regenerate tests/fixtures/sass/ (SASS listings and nvdisasm's own
# liveness tables) from the PTX fixtures tests/fixtures/nv/*.ptx.
#
# Usage: scripts/gen-sass-fixtures.sh      (after building: it uses build/regsweep)
# Env:   PTXAS (/usr/local/cuda/bin/ptxas, CUDA 13)  NVDISASM (PATH, else CUDA 11.8's in
#        /opt/nvidia-cuda-11.8, which scripts/install-deps.sh extracts)  REGSWEEP (build/regsweep)
#
# Per kernel NAME and target T in sm_75 sm_80 sm_86 sm_89 sm_90, into tests/fixtures/sass/:
#   ptxas -v -arch=T NAME.T.ptx -o NAME.T.cubin 2> NAME.T.ptxas-v.txt
#        (sm_90 from tests/fixtures/nv/NAME.sm_90.ptx; the others from NAME.sm_89.ptx with its
#         `.target` line changed to T: ptxas 13 allocates for the target, the PTX is the same)
#   NAME.T.sass  regsweep corpus disasm NAME.T.cubin   (nvdisasm -c, header rewritten, holes
#                filled, desc[URx] written: the completed listing the corpus stores)
#   NAME.T.lrm   nvdisasm -c -lrm count   (live counts per file in nvdisasm's column order)
#   NAME.T.plr   nvdisasm -c -lrm narrow  (nvdisasm's -plr table: one column per register, ^ def,
#                v use, x use+redef, : live through), for the listings in PLR_FOR only (size)
# Both tables are nvdisasm 11.8's output on the header-rewritten cubin, so on sm_90 they have
# its holes (the dropped instructions are missing rows). To keep the fixtures a few MB, the
# instruction text of table rows is cut (it is in NAME.T.sass, same address) and trailing
# blanks are stripped: a row is "        /*ADDR*/ // |  counts/columns |".
# calib.sm_80 is the same PTX for sm_80 (descriptors of RED/ATOMG/LD/ST there).
# Cubins are temporary except the few tests/test_sass_tools.c reads (KEEP_CUBINS below).
# calib.sm_90.ptx is hand-written PTX whose stores fix every field of the sm_90
# instructions 11.8 drops (VIADD, VIMNMX, VIADDMNMX; docs/sass.md): its listing, tables and
# cubin are generated the same way.
# Reruns are byte-identical except the "Compile time = N ms" line of *.ptxas-v.txt.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PTXAS="${PTXAS:-/usr/local/cuda/bin/ptxas}"
REGSWEEP="${REGSWEEP:-build/regsweep}"
if [[ -z "${NVDISASM:-}" ]]; then
  NVDISASM="$(command -v nvdisasm || true)"
  [[ -n "$NVDISASM" ]] || NVDISASM=/opt/nvidia-cuda-11.8/usr/bin/nvdisasm
fi
OUT=tests/fixtures/sass
TARGETS=(sm_75 sm_80 sm_86 sm_89 sm_90)
KEEP_CUBINS=(sgemm_t4x4.sm_89 sgemm_t4x4.sm_90 calib.sm_90)
PLR_FOR=(sgemm_t4x4.sm_75 sgemm_t4x4.sm_80 sgemm_t4x4.sm_86 sgemm_t4x4.sm_89 sgemm_t4x4.sm_90
         wmma_w2x2_r2x2.sm_89 wmma_w2x2_r2x2.sm_90 fa_hd64_bc32_half.sm_89 fa_hd64_bc32_half.sm_90
         calib.sm_90)
# cut the instruction text of a table row, keep address and columns; strip trailing blanks
table() { sed -E -e 's#^( +/\*[0-9a-f]+\*/) .*(// \|)#\1 \2#' -e 's/ *$//'; }
die() { echo "gen-sass-fixtures: ERROR: $*" >&2; exit 1; }
for t in "$PTXAS" "$NVDISASM" "$REGSWEEP"; do [[ -x "$t" ]] || die "not executable: $t"; done
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"
rm -f "$OUT"/*.sass "$OUT"/*.plr "$OUT"/*.lrm "$OUT"/*.ptxas-v.txt "$OUT"/*.cubin

one() {  # PTX NAME.T T
  local ptx="$1" id="$2" t="$3" cub="$TMP/$2.cubin"
  "$PTXAS" -v -arch="$t" "$ptx" -o "$cub" 2>"$OUT/$id.ptxas-v.txt" || { cat "$OUT/$id.ptxas-v.txt" >&2; die "$id: ptxas failed"; }
  grep -q 'Used [0-9]* registers' "$OUT/$id.ptxas-v.txt" || die "$id: no register count from ptxas -v"
  "$REGSWEEP" corpus disasm "$cub" --nvdisasm "$NVDISASM" -o "$OUT/$id.sass" 2>"$TMP/log" || { cat "$TMP/log" >&2; die "$id: disasm failed"; }
  sed "s|$TMP/||" "$TMP/log" | sed 's/ (nvdisasm.*//' | tee -a "$TMP/summary"
  "$REGSWEEP" corpus disasm "$cub" --rewrite "$TMP/$id.old.cubin"
  "$NVDISASM" -c -lrm count "$TMP/$id.old.cubin" | table >"$OUT/$id.lrm"
  for k in "${PLR_FOR[@]}"; do [[ "$k" != "$id" ]] || "$NVDISASM" -c -lrm narrow "$TMP/$id.old.cubin" | table >"$OUT/$id.plr"; done
  for k in "${KEEP_CUBINS[@]}"; do [[ "$k" != "$id" ]] || cp "$cub" "$OUT/$id.cubin"; done
}

for src in tests/fixtures/nv/*.sm_89.ptx; do
  name="$(basename "$src" .sm_89.ptx)"
  for t in "${TARGETS[@]}"; do
    if [[ "$t" == sm_90 ]]; then
      one "tests/fixtures/nv/$name.sm_90.ptx" "$name.$t" "$t"
    else
      sed "s/^\.target sm_89\$/.target $t/" "$src" >"$TMP/$name.$t.ptx"
      grep -q "^\.target $t\$" "$TMP/$name.$t.ptx" || die "$src: no '.target sm_89' line"
      one "$TMP/$name.$t.ptx" "$name.$t" "$t"
    fi
  done
done
one "$OUT/calib.sm_90.ptx" calib.sm_90 sm_90
# the same kernels for sm_80 (no VIADD there: IMNMX/IADD3; RED, not REDG): descriptor fixtures
sed 's/^\.target sm_90$/.target sm_80/' "$OUT/calib.sm_90.ptx" >"$TMP/calib.sm_80.ptx"
one "$TMP/calib.sm_80.ptx" calib.sm_80 sm_80

total="$(find "$OUT" -maxdepth 1 -type f -exec cat {} + | wc -c)"
echo "gen-sass-fixtures: $(ls "$OUT"/*.sass | wc -l) listings, $total bytes"
(( total < 5 * 1024 * 1024 )) || die "fixtures exceed 5 MiB ($total bytes): trim PLR_FOR"
cp "$TMP/summary" "$OUT/SUMMARY.txt"
