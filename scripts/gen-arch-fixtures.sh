#!/usr/bin/env bash
# gen-arch-fixtures.sh -- regenerate the fixtures of the AMD architectures beyond gfx90a
# (gfx908 and gfx1030 with LLVM 14, gfx940 and gfx1100 with LLVM 16, gfx942, gfx950, gfx1200 and
# gfx1201 with LLVM 22) from corpus/kernels/.
#
# Usage: scripts/gen-arch-fixtures.sh     (scripts/gen-fixtures.sh calls it too)
# Variants: corpus/recipes/fixtures-archs.tsv (arch, llc version, name, source, macros).
# Per variant, into tests/fixtures/ARCH/ (same commands as the gfx90a fixtures):
#   clang-V -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=ARCH -nogpulib -O2 MACROS -emit-llvm -c SRC
#   NAME.prera.mir      llc-V -march=amdgcn -mcpu=ARCH -O2 -stop-before=greedy
#   NAME.postsplit.mir  llc-V ... -stop-after=greedy,N-1           (SGPRs physical, vectors virtual)
#   NAME.final.mir      llc-V ... -stop-after=virtregrewriter,N-1  (fully allocated)
#   NAME.s              llc-V ... -filetype=asm                    (.vgpr_count, ; Occupancy ...)
# N, the greedy/virtregrewriter rounds, is read from llc's -debug-pass=Structure: 2 for llc-14 and
# llc-16 (SGPRs, then VGPRs/AGPRs), 3 for llc-22 (SGPRs, whole-wave-mode values, then per-lane
# VGPRs/AGPRs); any other shape stops the script with the passes it saw (mir/rounds.c is the
# same rule in C). clang-22 emits every OpenCL kernel twice, the kernel and a callable copy
# __clang_ocl_kern_imp_NAME: -mllvm -amdgpu-internalize-symbols (LLVM's own AMDGPU internalize +
# globaldce, which keeps entry points) leaves only the kernel. The wave size is part of the
# bitcode (-mwavefrontsize64), so llc needs no flag.
# Also writes tests/fixtures/ARCHS.md (the table). Fails loudly on any compile failure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RECIPES="corpus/recipes/fixtures-archs.tsv"
die() { echo "gen-arch-fixtures: ERROR: $*" >&2; exit 1; }
for tool in clang-14 llc-14 clang-16 llc-16 clang-22 llc-22; do
  command -v "$tool" >/dev/null 2>&1 || die "tool not found: $tool (scripts/install-deps.sh)"
done
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
declare -a ROWS=()
cleaned=" "
while IFS=$'\t' read -r arch ver name src macros; do
  [[ -z "${arch// }" || "$arch" == \#* ]] && continue
  out="tests/fixtures/$arch"
  if [[ "$cleaned" != *" $arch "* ]]; then
    mkdir -p "$out"
    rm -f "$out"/*.mir "$out"/*.s
    cleaned+="$arch "
  fi
  read -r -a mflags <<<"$macros"
  echo "$arch llc-$ver $name"
  cflags=()
  (( ver >= 22 )) && cflags=(-mllvm -amdgpu-internalize-symbols)
  "clang-$ver" -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu="$arch" -nogpulib -O2 "${cflags[@]}" "${mflags[@]}" \
    -emit-llvm -c "corpus/kernels/$src" -o "$TMP/$name.bc" || die "$arch $name: clang-$ver failed"
  if "llvm-dis-$ver" "$TMP/$name.bc" -o - | grep -q '^define.*@__clang_ocl_kern_imp_'; then die "$arch $name: kernel stub copy left"; fi
  LLC=("llc-$ver" -march=amdgcn -mcpu="$arch" -O2)
  # the allocation rounds: the stop points are the last round's greedy / virtregrewriter
  seen="$("${LLC[@]}" -debug-pass=Structure -o /dev/null - <"$TMP/$name.bc" 2>&1 |
          sed -n 's/^ *//; /^Greedy Register Allocator$\|^Virtual Register Rewriter$\|^SI lower SGPR spill instructions$\|^SI Lower WWM Copies$\|Register Allocator$/p' || true)"
  shape="$(sed 's/^Greedy.*/G/; s/^Virtual.*/V/; s/^SI lower SGPR.*/L/; s/^SI Lower WWM.*/W/; s/.*Register Allocator$/X/' <<<"$seen" | tr -d '\n')"
  case "$shape" in
    GVLGV) rounds=2 ;; GVLGWVGV) rounds=3 ;;
    *) die "$arch $name: llc-$ver's allocation rounds are not SGPR,vector or SGPR,WWM,vector: $(tr '\n' ';' <<<"$seen")" ;;
  esac
  last=$((rounds - 1))
  "${LLC[@]}" -stop-before=greedy - -o "$out/$name.prera.mir" <"$TMP/$name.bc" || die "$arch $name: llc prera"
  "${LLC[@]}" -stop-after=greedy,$last - -o "$out/$name.postsplit.mir" <"$TMP/$name.bc" || die "$arch $name: llc postsplit"
  "${LLC[@]}" -stop-after=virtregrewriter,$last - -o "$out/$name.final.mir" <"$TMP/$name.bc" || die "$arch $name: llc final"
  "${LLC[@]}" -filetype=asm - -o "$out/$name.s" <"$TMP/$name.bc" || die "$arch $name: llc asm"
  sed -n '/^body:/,$p' "$out/$name.final.mir" >"$TMP/body"
  if grep -qE '%[0-9]+' "$TMP/body"; then die "$arch $name: final.mir still has virtual registers"; fi
  sed -n '/^body:/,$p' "$out/$name.postsplit.mir" >"$TMP/body"
  grep -qE '%[0-9]+' "$TMP/body" || die "$arch $name: postsplit.mir has no virtual registers: wrong stop point?"
  if grep -qE '%[0-9]+:(sgpr|sreg)' "$TMP/body"; then die "$arch $name: postsplit.mir defines a scalar virtual register"; fi
  grep -q '\.vgpr_count' "$out/$name.s" || die "$arch $name: no .vgpr_count"
  if grep -q '__clang_ocl_kern_imp_' "$out/$name.s"; then die "$arch $name: the kernel stub copy reached the assembly"; fi
  ROWS+=("$arch"$'\t'"$ver"$'\t'"$name"$'\t'"$src"$'\t'"$macros")
done <"$RECIPES"

note() { grep -m1 -E "^; $2: " "$1" | awk '{print $3}'; }
field() { grep -m1 -E "^\s+\.$2:" "$1" | awk '{print $2}'; }
{
  echo "# Fixtures of the AMD architectures beyond gfx90a"
  echo
  echo "Generated by \`scripts/gen-arch-fixtures.sh\` from \`corpus/recipes/fixtures-archs.tsv\`; raw"
  echo "compiler output. Tools: \`$(clang-14 --version | head -1)\`, \`$(clang-16 --version | head -1)\`,"
  echo "\`$(clang-22 --version | head -1)\` (with \`-mllvm -amdgpu-internalize-symbols\`)."
  echo "Columns from NAME.s (llc's \`; NumVgprs/NumAgprs/NumSgprs/Occupancy\` comments, llc-22's"
  echo "\`; TotalNumSgprs\`, \`.wavefront_size\`)."
  echo
  echo "| arch | llc | NAME | macros | lines final | wave | VGPRs | AGPRs | SGPRs | occupancy |"
  echo "|---|---|---|---|---:|---:|---:|---:|---:|---:|"
  for row in "${ROWS[@]}"; do
    IFS=$'\t' read -r a v n s m <<<"$row"
    f="tests/fixtures/$a/$n"
    echo "| $a | $v | \`$n\` | \`$m\` | $(wc -l <"$f.final.mir") | $(field "$f.s" wavefront_size) | $(note "$f.s" NumVgprs) | $(note "$f.s" NumAgprs) | $(note "$f.s" NumSgprs)$(note "$f.s" TotalNumSgprs) | $(note "$f.s" Occupancy) |"
  done
} >tests/fixtures/ARCHS.md
bytes="$(cat tests/fixtures/{gfx908,gfx940,gfx1030,gfx1100,gfx942,gfx950,gfx1200,gfx1201}/* | wc -c)"
echo "gen-arch-fixtures: ${#ROWS[@]} variants, $bytes bytes"
# 16 MiB (8 before the llc-22 archs): the gfx1100 attention fixture (about 1 MB) is the one real case at hand of a spill that
# replaced a COPY, which the prera truth must see (corpus/truth.c)
(( bytes < 16 * 1024 * 1024 )) || die "arch fixtures exceed 16 MiB ($bytes bytes): trim $RECIPES"
