#!/usr/bin/env bash
# real-suite.sh - the `real` suite: GPU kernels of public libraries that Debian 12 ships as source
# packages, imported with `regsweep corpus import` (docs/import.md). Not used by CI.
#
#   scripts/real-suite.sh [--out real.h5] [--dir DIR] [--max-files N] [--nv-targets T,..]
#                         [--amd-targets T,..] [-j N] [--regsweep BIN] [--src LIB=TREE]... [LIB...]
#
# LIB: magma (CUDA magmablas kernels, sm_75-sm_90), magma-hip (its HIP port, hipified; not in the
# default list: wants a tree of its own, --src magma-hip=TREE), clblast (OpenCL, gfx908-gfx1201), ggml
# (OpenCL, gfx940/gfx942; not in the default list: not a Debian 12 package, --src ggml=TREE), rocprim,
# rocrand, rocsparse (HIP, device only, gfx940 by default: docs/import.md). Default: all five.
# Sources: `apt-get source` into DIR/src (deb-src lines for bookworm main/contrib are added to
# apt's sources when missing); a library already extracted under DIR/src/LIB is used as it is;
# --src LIB=TREE takes LIB's tree from TREE instead (e.g. a `git archive` of Debian's version,
# for a mirror without source tarballs). What a library's CMake would generate (version and
# export headers) is written into its tree when missing. Each library is its own family in one
# corpus; everything is resumable (the import's work directory DIR/work/LIB keeps every compiled
# unit, a re-run imports only what is missing).
set -euo pipefail
out=real.h5 dir=real-suite max=0 nvt=sm_75,sm_80,sm_86,sm_89,sm_90 amdt=gfx940 jobs=2 bin=build/regsweep
amd_cl=gfx908,gfx90a,gfx940,gfx1030,gfx1100,gfx942,gfx950,gfx1200,gfx1201
ggml_t=gfx940,gfx942 # ggml: the MI300 pair, clang-16 and clang-22 with rocm-device-libs
libs=() srcs=()
here=$(cd "$(dirname "$0")" && pwd)
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --max-files) max=$2; shift 2 ;;
    --nv-targets) nvt=$2; shift 2 ;;
    --amd-targets) amdt=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    --regsweep) bin=$2; shift 2 ;;
    --src) case $2 in *=?*) srcs+=("$2") ;; *) echo "real-suite: --src wants LIB=TREE" >&2; exit 2 ;; esac; shift 2 ;;
    -h|--help) sed -n 2,17p "$0"; exit 0 ;;
    -*) echo "real-suite: unknown option $1" >&2; exit 2 ;;
    *) libs+=("$1"); shift ;;
  esac
done
[ ${#libs[@]} -gt 0 ] || libs=(magma clblast rocprim rocrand rocsparse)
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

magma_codegen() { # $1 MAGMA tree: its tools/codegen.py makes the s/d/c precisions from the z sources, once
  local m=$1
  if [ ! -f "$m/include/magma_s.h" ]; then
    (cd "$m/include" && python3 ../tools/codegen.py $(grep -l "@precisions" ./*.h | sed "s|./||") >/dev/null)
    (cd "$m/magmablas" && python3 ../tools/codegen.py $(grep -l "@precisions" ./*.cu ./*.cuh ./*.h | sed "s|./||") >/dev/null)
    (cd "$m/control" && python3 ../tools/codegen.py $(grep -l "@precisions" ./*.h | sed "s|./||") >/dev/null || true)
  fi
}

recipe_magma() { # magmablas: every precision generated (tools/codegen.py), one CUDA line per file
  local m=$1 r=$dir/recipes/magma.tsv
  [ -f "$m/include/magma_config.h" ] ||
    printf '#ifndef MAGMA_CONFIG_H\n#define MAGMA_CONFIG_H\n#define MAGMA_HAVE_CUDA\n#define MAGMA_CUDA_ARCH_MIN 750\n#endif\n' > "$m/include/magma_config.h"
  magma_codegen "$m"
  { echo "# magmablas (MAGMA $(basename "$m")): source, language, flags, targets"
    # smallest files first: --max-files N takes the N quickest to compile (deterministic)
    (cd "$m/magmablas" && ls -Sr ./*.cu | sed 's|./||' | pick) | while read -r f; do
      printf '%s\tcuda\t-I%s/include -I%s/control -I%s/magmablas -DADD_ -DNDEBUG -O3\t%s\n' "$m/magmablas/$f" "$m" "$m" "$m" "$nvt"
    done; } > "$r"
  echo "$r"
}

recipe_magma_hip() { # MAGMA's HIP port: magmablas/*.cu through its tools/hipify-perl (make.gen.hipMAGMA) after
  # every precision is generated, one HIP line per magmablas_hip file, smallest first
  local m=$1 r=$dir/recipes/magma_hip.tsv c=$1/include/magma_config.h
  [ -f "$c" ] || printf '#ifndef MAGMA_CONFIG_H\n#define MAGMA_CONFIG_H\n#define MAGMA_HAVE_HIP\n#endif\n' > "$c"
  grep -q MAGMA_HAVE_HIP "$c" || { echo "real-suite: magma-hip: $c is not a HIP config (a tree configured for CUDA? use a copy)" >&2; return 1; }
  magma_codegen "$m"
  # hipify is slow (minutes): make redoes only what is missing
  (cd "$m" && nice make -s -f make.gen.hipMAGMA -j "$jobs" magmablas_hip >/dev/null) || return 1
  # magma_types.h includes hipblas.h and hipsparse.h, which Debian 12 lacks: stand-ins declaring
  # the host types its prototypes name (a device-only compile calls nothing of them)
  mkdir -p "$m/hipstub"
  [ -f "$m/hipstub/hipblas.h" ] || cat > "$m/hipstub/hipblas.h" <<'H'
// written by regsweep scripts/real-suite.sh: a stand-in for hipBLAS's header (Debian 12 lacks it),
// declarations only -- host types for MAGMA's prototypes; a device-only compile calls none of them
#ifndef HIPBLAS_H
#define HIPBLAS_H
typedef void *hipblasHandle_t;
typedef enum { HIPBLAS_STATUS_SUCCESS = 0, HIPBLAS_STATUS_NOT_SUPPORTED = 10 } hipblasStatus_t;
typedef enum { HIPBLAS_OP_N = 111, HIPBLAS_OP_T = 112, HIPBLAS_OP_C = 113 } hipblasOperation_t;
typedef enum { HIPBLAS_FILL_MODE_UPPER = 121, HIPBLAS_FILL_MODE_LOWER = 122, HIPBLAS_FILL_MODE_FULL = 123 } hipblasFillMode_t;
typedef enum { HIPBLAS_DIAG_NON_UNIT = 131, HIPBLAS_DIAG_UNIT = 132 } hipblasDiagType_t;
typedef enum { HIPBLAS_SIDE_LEFT = 141, HIPBLAS_SIDE_RIGHT = 142, HIPBLAS_SIDE_BOTH = 143 } hipblasSideMode_t;
#endif
H
  [ -f "$m/hipstub/hipsparse.h" ] || cat > "$m/hipstub/hipsparse.h" <<'H'
// written by regsweep scripts/real-suite.sh: a stand-in for hipSPARSE's header (Debian 12 lacks it),
// declarations only -- the handle type of MAGMA's queue prototypes
#ifndef HIPSPARSE_H
#define HIPSPARSE_H
typedef void *hipsparseHandle_t;
#endif
H
  { echo "# magmablas_hip (MAGMA $(basename "$m"), hipified; HIP, device only): source, language, flags, targets"
    (cd "$m/magmablas_hip" && ls -Sr ./*.hip.cpp | sed 's|./||' | pick) | while read -r f; do
      hipline "$m/magmablas_hip/$f" "-I$m/include -I$m/control -I$m/magmablas_hip -I$m/hipstub -DADD_ -DNDEBUG"
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

recipe_ggml() { # ggml's OpenCL backend (written for Adreno and Intel GPUs): every kernel file, with the
  # options ggml builds them with; the flash-attention files at one of ggml's head sizes (64, blocks
  # 64 x 32). Not a Debian 12 package: --src ggml=TREE (a git archive of ggml-org/ggml or llama.cpp)
  local t=$1 r=$dir/recipes/ggml.tsv K F="-cl-mad-enable -cl-unsafe-math-optimizations -cl-finite-math-only -cl-fast-relaxed-math"
  K=$t/src/ggml-opencl/kernels; [ -d "$K" ] || K=$t/ggml/src/ggml-opencl/kernels
  { echo "# ggml OpenCL kernels ($K): source, language, flags, targets"
    for f in $(cd "$K" && ls ./*.cl | sed 's|./||' | sort | pick); do
      case $f in
        flash_attn_*) printf '%s\topencl\t%s -DDK=64 -DDV=64 -DBLOCK_M=64 -DBLOCK_N=32\t%s\n' "$K/$f" "$F" "$ggml_t" ;;
        *) printf '%s\topencl\t%s\t%s\n' "$K/$f" "$F" "$ggml_t" ;;
      esac
    done; } > "$r"
  echo "$r"
}

hipline() { # $1 source, $2 include flags: one HIP recipe line. clang-22 (the LLVM-22 archs) makes
  # `x.template f` without an argument list an error by default; the 5.3 libraries have it
  local w=
  case ",$amdt," in *,gfx942,*|*,gfx950,*|*,gfx1200,*|*,gfx1201,*) w=" -Wno-error=missing-template-arg-list-after-template-kw" ;; esac
  printf '%s\thip\t%s%s -O3\t%s\n' "$1" "$2" "$w" "$amdt"
}

ver_of() { # $1 CMakeLists.txt: the project's version (rocm_setup_version / VERSION_STRING)
  grep -oE '(VERSION_STRING|rocm_setup_version\( *VERSION) *"[0-9.]+"' "$1" | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -1
}

cfg_sub() { # $1 .in file, $2 output, $3 project, $4 version: CMake's configure_file for @X_VERSION_*@
  [ -f "$2" ] && return 0
  local M m p; IFS=. read -r M m p <<<"$4"
  sed -e "s/@$3_VERSION_MAJOR@/$M/g;s/@$3_VERSION_MINOR@/$m/g;s/@$3_VERSION_PATCH@/$p/g;s/@$3_VERSION_TWEAK@/0/g" \
      -e "s/@$3_VERSION_NUMBER@/$((M * 100000 + m * 100 + p))/g" "$1" > "$2"
}

recipe_rocprim() { # rocPRIM is header templates: our scripts/real-suite/rocprim/*.hip call its device
  # algorithms (as its tests and benchmarks do), which instantiates the kernels they launch
  local t=$1 r=$dir/recipes/rocprim.tsv I=$1/rocprim/include
  cfg_sub "$I/rocprim/rocprim_version.hpp.in" "$I/rocprim/rocprim_version.hpp" rocprim "$(ver_of "$t/CMakeLists.txt")"
  { echo "# rocPRIM $(ver_of "$t/CMakeLists.txt") device algorithms (HIP, device only): source, language, flags, targets"
    for f in $(ls "$here"/real-suite/rocprim/*.hip | pick); do hipline "$f" "-I$I"; done; } > "$r"
  echo "$r"
}

recipe_rocrand() { # the library (every generator's kernels, rocrand.cpp), its device-API kernel tests
  # and benchmark (curand's left out)
  local t=$1 r=$dir/recipes/rocrand.tsv I=$1/library/include/rocrand
  cfg_sub "$I/rocrand_version.h.in" "$I/rocrand_version.h" rocrand "$(ver_of "$t/CMakeLists.txt")"
  sed -i 's/^@rocrand_ENABLE_INLINE_ASM@$/#if !defined(ROCRAND_ENABLE_INLINE_ASM) \&\& !defined(ROCRAND_DISABLE_INLINE_ASM)\n#define ROCRAND_ENABLE_INLINE_ASM\n#endif/' "$I/rocrand_version.h"
  local n ty
  for n in 32 64; do # generated from data the source tree lacks (tools/sobol*_generator); host-side
    # tables copied to the device at run time: a device-only compile needs their declarations only
    [ -f "$I/rocrand_sobol${n}_precomputed.h" ] && continue
    ty=int; [ $n = 64 ] && ty="long long int"
    printf '// written by regsweep scripts/real-suite.sh: declarations only (device-only compiles read no table)\n#ifndef ROCRAND_SOBOL%s_PRECOMPUTED_H_\n#define ROCRAND_SOBOL%s_PRECOMPUTED_H_\n#ifndef SOBOL_DIM\n#define SOBOL_DIM 20000\n#endif\n#define SOBOL%s_N %s\nextern const unsigned %s h_sobol%s_direction_vectors[SOBOL%s_N];\n#endif\n' \
      $n $n $n $((20000 * n)) "$ty" $n $n > "$I/rocrand_sobol${n}_precomputed.h"
  done
  { echo "# rocRAND $(ver_of "$t/CMakeLists.txt") (HIP, device only): source, language, flags, targets"
    (cd "$t" && { echo library/src/rocrand.cpp; grep -lE '__global__' test/*.cpp benchmark/benchmark_rocrand_*.cpp | sort; } | pick) |
      while read -r f; do hipline "$t/$f" "-I$t/library/include -I$I -I$t/library/src -I$t/test -I$t/benchmark"; done; } > "$r"
  echo "$r"
}

recipe_rocsparse() { # every library source with a kernel, smallest first (--max-files N: the N quickest)
  local t=$1 r=$dir/recipes/rocsparse.tsv I=$1/library/include P
  P=$(source_of rocprim) || return 1
  cfg_sub "$I/rocsparse-version.h.in" "$I/rocsparse-version.h" rocsparse "$(ver_of "$t/CMakeLists.txt")"
  cfg_sub "$P/rocprim/include/rocprim/rocprim_version.hpp.in" "$P/rocprim/include/rocprim/rocprim_version.hpp" rocprim \
    "$(ver_of "$P/CMakeLists.txt")"
  [ -f "$I/rocsparse-export.h" ] || printf '%s\n' '#ifndef ROCSPARSE_EXPORT_H' '#define ROCSPARSE_EXPORT_H' '#define ROCSPARSE_EXPORT' \
    '#define ROCSPARSE_NO_EXPORT' '#define ROCSPARSE_DEPRECATED __attribute__((__deprecated__))' \
    '#define ROCSPARSE_DEPRECATED_EXPORT ROCSPARSE_DEPRECATED' '#endif' > "$I/rocsparse-export.h"
  { echo "# rocSPARSE $(ver_of "$t/CMakeLists.txt") (HIP, device only): source, language, flags, targets"
    (cd "$t" && grep -rlE '__global__|__launch_bounds__' library/src --include='*.cpp' | xargs ls -Sr | pick) |
      while read -r f; do hipline "$t/$f" "-I$I -I$t/library/src/include -I$t/library/src -I$P/rocprim/include"; done; } > "$r"
  echo "$r"
}

for lib in "${libs[@]}"; do
  case "$lib" in
    magma) t=$(source_of magma) || continue; r=$(recipe_magma "$t") ;;
    magma-hip) t=$(source_of magma-hip) || continue; r=$(recipe_magma_hip "$t") || continue ;;
    clblast) t=$(source_of clblast) || continue; r=$(recipe_clblast "$t") ;;
    ggml) t=$(source_of ggml) || continue; r=$(recipe_ggml "$t") ;;
    rocprim) t=$(source_of rocprim) || continue; r=$(recipe_rocprim "$t") ;;
    rocrand) t=$(source_of rocrand) || continue; r=$(recipe_rocrand "$t") ;;
    rocsparse) t=$(source_of rocsparse) || continue; r=$(recipe_rocsparse "$t") || continue ;;
    *) echo "real-suite: unknown library '$lib' (magma, magma-hip, clblast, ggml, rocprim, rocrand, rocsparse)" >&2; exit 2 ;;
  esac
  echo "real-suite: $lib: $(grep -vc '^#' "$r") units ($r)"
  nice "$bin" corpus import --out "$out" "$r" --family "${lib//-/_}" --work "$dir/work/$lib" -j "$jobs"
done
"$bin" corpus info "$out"
