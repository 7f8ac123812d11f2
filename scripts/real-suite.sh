#!/usr/bin/env bash
# real-suite.sh - the `real` suite: GPU kernels of public libraries that Debian 12 ships as source
# packages, imported with `regsweep corpus import` (docs/import.md). Not used by CI.
#
#   scripts/real-suite.sh [--out real.h5] [--dir DIR] [--src LIB=TREE]... [--max-files N]
#                         [--nv-targets T,..] [--amd-targets T,..] [-j N] [--regsweep BIN] [LIB...]
#
# LIB: magma (CUDA magmablas kernels, sm_75-sm_90), clblast (OpenCL, gfx908-gfx1201), rocprim,
# rocsparse (HIP, device only, gfx940: docs/import.md says why only gfx940). Default: all four. Sources: `apt-get source` into
# DIR/src (deb-src lines for bookworm main/contrib are added to apt's sources when missing); a
# library already extracted under DIR/src/LIB (e.g. from the project's upstream git) is used as
# it is; --src LIB=TREE takes LIB's tree from TREE instead (e.g. a `git archive` of Debian's
# version). Each library is its own family in one corpus; everything is resumable (the import's work
# directory DIR/work/LIB keeps every compiled unit, a re-run imports only what is missing).
set -euo pipefail
out=real.h5 dir=real-suite max=0 nvt=sm_75,sm_80,sm_86,sm_89,sm_90 amdt=gfx940 jobs=2 bin=build/regsweep
amd_cl=gfx908,gfx90a,gfx940,gfx1030,gfx1100,gfx942,gfx950,gfx1200,gfx1201
libs=() srcs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --max-files) max=$2; shift 2 ;;
    --src) case $2 in *=?*) srcs+=("$2") ;; *) echo "real-suite: --src wants LIB=TREE" >&2; exit 2 ;; esac; shift 2 ;;
    --nv-targets) nvt=$2; shift 2 ;;
    --amd-targets) amdt=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    --regsweep) bin=$2; shift 2 ;;
    -h|--help) sed -n 2,16p "$0"; exit 0 ;;
    -*) echo "real-suite: unknown option $1" >&2; exit 2 ;;
    *) libs+=("$1"); shift ;;
  esac
done
[ ${#libs[@]} -gt 0 ] || libs=(magma clblast rocprim rocsparse)
mkdir -p "$dir/src" "$dir/recipes"
dir=$(realpath "$dir")
S=""; [ "$(id -u)" -eq 0 ] || S=sudo

debsrc() { # deb-src lines for bookworm main + contrib (magma is in contrib)
  apt-cache showsrc rocprim >/dev/null 2>&1 && return 0
  echo "real-suite: adding deb-src (bookworm main contrib) to /etc/apt/sources.list.d/regsweep-src.sources"
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main contrib non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    | $S tee /etc/apt/sources.list.d/regsweep-src.sources >/dev/null
  $S apt-get update -qq
}

source_of() { # $1 = Debian source package: its --src tree, else DIR/src/$1, extracted once
  local d="$dir/src/$1" s
  for s in ${srcs[@]+"${srcs[@]}"}; do
    [ "${s%%=*}" = "$1" ] || continue
    d=$(realpath "${s#*=}")
    [ -d "$d" ] && [ -n "$(ls -A "$d")" ] || { echo "real-suite: --src $s: no tree there" >&2; return 1; }
    echo "$d"; return 0
  done
  if [ -d "$d" ] && [ -n "$(ls -A "$d")" ]; then echo "$d"; return 0; fi
  debsrc
  mkdir -p "$dir/src/.apt-$1"
  if ! (cd "$dir/src/.apt-$1" && apt-get source -qq "$1" >&2); then
    echo "real-suite: apt-get source $1 failed (a mirror without source tarballs?); put the library's tree in $d" >&2
    return 1
  fi
  local x; x=$(find "$dir/src/.apt-$1" -mindepth 1 -maxdepth 1 -type d | head -1)
  mv "$x" "$d"; echo "$d"
}

pick() { if [ "$max" -gt 0 ]; then head -n "$max"; else cat; fi; }

recipe_magma() { # magmablas: every precision generated (tools/codegen.py), one CUDA line per file
  local m=$1 r=$dir/recipes/magma.tsv
  [ -f "$m/include/magma_config.h" ] ||
    printf '#ifndef MAGMA_CONFIG_H\n#define MAGMA_CONFIG_H\n#define MAGMA_HAVE_CUDA\n#define MAGMA_CUDA_ARCH_MIN 750\n#endif\n' > "$m/include/magma_config.h"
  if [ ! -f "$m/include/magma_s.h" ]; then
    (cd "$m/include" && python3 ../tools/codegen.py $(grep -l "@precisions" ./*.h | sed "s|./||") >/dev/null)
    (cd "$m/magmablas" && python3 ../tools/codegen.py $(grep -l "@precisions" ./*.cu ./*.cuh ./*.h | sed "s|./||") >/dev/null)
    (cd "$m/control" && python3 ../tools/codegen.py $(grep -l "@precisions" ./*.h | sed "s|./||") >/dev/null || true)
  fi
  { echo "# magmablas (MAGMA $(basename "$m")): source, language, flags, targets"
    # smallest files first: --max-files N takes the N quickest to compile (deterministic)
    (cd "$m/magmablas" && ls -Sr ./*.cu | sed 's|./||' | pick) | while read -r f; do
      printf '%s\tcuda\t-I%s/include -I%s/control -I%s/magmablas -DADD_ -DNDEBUG -O3\t%s\n' "$m/magmablas/$f" "$m" "$m" "$m" "$nvt"
    done; } > "$r"
  echo "$r"
}

recipe_clblast() { # CLBlast's OpenCL kernels: each kernel file with the common and level headers it is
  # compiled with at run time (its R"( )" wrappers dropped), real and complex, single and double, all AMD archs
  local c=$1 r=$dir/recipes/clblast.tsv u=$dir/src/clblast-units K=$1/src/kernels
  strip() { grep -v -E '^R"\($|^\)"$' "$1"; }
  mkdir -p "$u"
  for f in "$K"/level1/x*.opencl "$K"/level2/x*.opencl "$K"/level3/*.opencl; do
    local b l; b=$(basename "$f" .opencl); l=$(basename "$(dirname "$f")")
    case $b in level3|xgemm_part[234]|xgemm_direct_part[23]|invert_diagonal_blocks_part2|xgemm_batched|xgemm_direct_batched) continue ;; esac
    { strip "$K/common.opencl"; strip "$K/$l/$l.opencl"
      case $b in
        xgemm_part1) for p in 1 2 3 4; do strip "$K/level3/xgemm_part$p.opencl"; done; strip "$K/level3/xgemm_batched.opencl" ;;
        xgemm_direct_part1) for p in 1 2 3; do strip "$K/level3/xgemm_direct_part$p.opencl"; done
          strip "$K/level3/xgemm_direct_batched.opencl" ;;
        invert_diagonal_blocks_part1) strip "$f"; strip "$K/level3/invert_diagonal_blocks_part2.opencl" ;;
        *) strip "$f" ;;
      esac; } > "$u/$b.cl"
  done
  { echo "# CLBlast $(basename "$c") OpenCL kernels: source, language, flags, targets"
    for f in $(cd "$u" && ls ./*.cl | sed 's|./||' | sort | pick); do
      for p in 32 64 3232 6464; do printf '%s\topencl\t-DPRECISION=%s\t%s\n' "$u/$f" "$p" "$amd_cl"; done
    done; } > "$r"
  echo "$r"
}

recipe_hip() { # $1 lib, $2 tree, $3 find roots (HIP sources with kernels), $4 include flags
  local r=$dir/recipes/$1.tsv
  { echo "# $1 (HIP, device only): source, language, flags, targets"
    (cd "$2" && grep -rlE '__global__|ROCPRIM_KERNEL|__launch_bounds__' $3 --include='*.cpp' --include='*.hip' 2>/dev/null | sort | pick) |
      while read -r f; do printf '%s\thip\t%s -O3\t%s\n' "$2/$f" "$4" "$amdt"; done; } > "$r"
  echo "$r"
}

for lib in "${libs[@]}"; do
  case "$lib" in
    magma) t=$(source_of magma) || continue; r=$(recipe_magma "$t") ;;
    clblast) t=$(source_of clblast) || continue; r=$(recipe_clblast "$t") ;;
    rocprim) t=$(source_of rocprim) || continue
      r=$(recipe_hip rocprim "$t" "test/rocprim benchmark" "-I$t/rocprim/include -I$t/test -I$t/test/rocprim -I$t/benchmark -DROCPRIM_HIP_API=1") ;;
    rocsparse) t=$(source_of rocsparse) || continue
      r=$(recipe_hip rocsparse "$t" "library/src" "-I$t/library/include -I$t/library/src/include -I$t/library/src -I$dir/src/rocprim/rocprim/include") ;;
    *) echo "real-suite: unknown library '$lib' (magma, clblast, rocprim, rocsparse)" >&2; exit 2 ;;
  esac
  echo "real-suite: $lib: $(grep -vc '^#' "$r") units ($r)"
  nice "$bin" corpus import --out "$out" "$r" --family "$lib" --work "$dir/work/$lib" -j "$jobs"
done
"$bin" corpus info "$out"
