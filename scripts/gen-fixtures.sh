#!/usr/bin/env bash
# gen-fixtures.sh -- regenerate every compiler-output test fixture from corpus/kernels/.
#
# Usage: scripts/gen-fixtures.sh            (from anywhere; works relative to the repo root)
# Env:   CLANG (clang-14)  LLC (llc-14)  NVCC (/usr/local/cuda/bin/nvcc)  PTXAS (next to NVCC)
#
# Variants come from corpus/recipes/fixtures.tsv (vendor, name, source, -D macros).
#
# AMD (gfx90a, LLVM 14), per variant NAME, into tests/fixtures/amd/:
#   clang-14 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -O2 MACROS \
#            -emit-llvm -c corpus/kernels/SRC -o NAME.bc          (temporary)
#   NAME.prera.mir     llc-14 -march=amdgcn -mcpu=gfx90a -O2 -stop-before=greedy
#                      (all registers virtual)
#   NAME.postsplit.mir llc-14 ... -stop-after=greedy,1
#                      (SGPRs physical after the 1st greedy + virtregrewriter; VGPR/AGPR virtual)
#   NAME.final.mir     llc-14 ... -stop-after=virtregrewriter,1   (fully allocated)
#   NAME.s             llc-14 ... -filetype=asm                    (.vgpr_count, .sgpr_count, ...)
#   Note on the instance syntax (checked with llc-14): "pass,N" counts instances from 0, so
#   greedy,0 / virtregrewriter,0 are the SGPR round and greedy,1 / virtregrewriter,1 the VGPR/AGPR
#   round.  An instance number past the last one (greedy,2) does NOT fail: llc silently runs the
#   whole pipeline, so the script checks the output shape below.
#   The bitcode is fed to llc on stdin so the embedded IR reads "; ModuleID = '<stdin>'" and the
#   fixtures do not depend on a temporary path; clang is run from the repo root with a relative
#   source path for the same reason.
#
# NVIDIA, per variant NAME and target T in sm_89 sm_90, into tests/fixtures/nv/:
#   NAME.T.ptx         nvcc -arch=T -ptx MACROS corpus/kernels/SRC -o NAME.T.ptx
#   NAME.T.ptxas.txt   stderr of: ptxas -v -arch=T NAME.T.ptx -o /dev/null
#
# Also rewrites tests/fixtures/README.md (fixture list, macros, line counts, commands, versions).
# Idempotent: every output is rewritten from scratch, stale fixtures of these families removed.
# Reruns are byte-identical except the "ptxas info : Compile time = N ms" line of *.ptxas.txt
# (wall-clock time, printed by CUDA 13 ptxas -v; kept because fixtures are raw output).
# Fails loudly (non-zero exit, message on stderr) if any compile fails or an output looks wrong.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

CLANG="${CLANG:-clang-14}"
LLC="${LLC:-llc-14}"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
PTXAS="${PTXAS:-$(dirname "$NVCC")/ptxas}"
RECIPES="corpus/recipes/fixtures.tsv"
AMD_OUT="tests/fixtures/amd"
NV_OUT="tests/fixtures/nv"
NV_TARGETS=(sm_89 sm_90)

CLANG_FLAGS=(-x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -O2)
LLC_FLAGS=(-march=amdgcn -mcpu=gfx90a -O2)

die() { echo "gen-fixtures: ERROR: $*" >&2; exit 1; }

for tool in "$CLANG" "$LLC" "$NVCC" "$PTXAS"; do
  command -v "$tool" >/dev/null 2>&1 || die "tool not found: $tool"
done
[[ -f "$RECIPES" ]] || die "missing $RECIPES"

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

mkdir -p "$AMD_OUT" "$NV_OUT"
# (the hand-made *-trimmed.mir fixture and its README section are kept; see the README)
find "$AMD_OUT" -maxdepth 1 \( -name '*.mir' -o -name '*.s' \) ! -name '*-trimmed.mir' -delete
rm -f "$NV_OUT"/*.ptx "$NV_OUT"/*.ptxas.txt
sed -n '/^## The one trimmed fixture/,$p' tests/fixtures/README.md >"$TMP/README.keep" 2>/dev/null || true

# body of a MIR file (from the "body:" line to the end) into $TMP/NAME.STAGE.body.
# (Written to a file, not piped into grep -q: with pipefail, grep -q closing the pipe early
#  would make the producer die of SIGPIPE and the check fail spuriously.)
mir_body() { sed -n '/^body:/,$p' "$AMD_OUT/$1.$2.mir" >"$TMP/$1.$2.body"; }

check_amd() {  # NAME
  local n="$1" f ids id
  for f in prera postsplit final; do
    grep -q '^body:' "$AMD_OUT/$n.$f.mir" || die "$n.$f.mir has no body:"
    mir_body "$n" "$f"
  done
  grep -qE '%[0-9]+:' "$TMP/$n.prera.body" || die "$n.prera.mir has no virtual registers"
  if grep -qE '%[0-9]+' "$TMP/$n.final.body"; then
    die "$n.final.mir still has virtual registers in its body"
  fi
  # postsplit: no virtual register of a scalar class may still be used; vector ones must remain
  ids="$(grep -oE '\{ id: [0-9]+, class: (sgpr|sreg)[a-z_0-9]*' "$AMD_OUT/$n.postsplit.mir" \
         | grep -oE 'id: [0-9]+' | grep -oE '[0-9]+' || true)"
  for id in $ids; do
    if grep -qE "%$id([^0-9]|\$)" "$TMP/$n.postsplit.body"; then
      die "$n.postsplit.mir still uses scalar virtual register %$id"
    fi
  done
  if grep -qE '%[0-9]+:(sgpr|sreg)' "$TMP/$n.postsplit.body"; then
    die "$n.postsplit.mir defines a scalar virtual register"
  fi
  grep -qE '%[0-9]+' "$TMP/$n.postsplit.body" \
    || die "$n.postsplit.mir has no virtual (vector) registers left: wrong stop point?"
  if grep -qE '\b(SI_CALL|S_SWAPPC_B64)\b' "$AMD_OUT/$n.final.mir"; then
    die "$n.final.mir contains a call (missing builtin lowering?)"
  fi
  grep -q '\.vgpr_count' "$AMD_OUT/$n.s" || die "$n.s has no .vgpr_count"
}

declare -a AMD_ROWS=() NV_ROWS=()

while IFS=$'\t' read -r vendor name src macros; do
  [[ -z "${vendor// }" || "$vendor" == \#* ]] && continue
  [[ -f "corpus/kernels/$src" ]] || die "$name: missing source corpus/kernels/$src"
  read -r -a mflags <<<"$macros"
  case "$vendor" in
    amd)
      echo "amd  $name"
      "$CLANG" "${CLANG_FLAGS[@]}" "${mflags[@]}" -emit-llvm -c "corpus/kernels/$src" \
        -o "$TMP/$name.bc" || die "$name: clang failed"
      "$LLC" "${LLC_FLAGS[@]}" -stop-before=greedy - -o "$AMD_OUT/$name.prera.mir" \
        <"$TMP/$name.bc" || die "$name: llc -stop-before=greedy failed"
      "$LLC" "${LLC_FLAGS[@]}" -stop-after=greedy,1 - -o "$AMD_OUT/$name.postsplit.mir" \
        <"$TMP/$name.bc" || die "$name: llc -stop-after=greedy,1 failed"
      "$LLC" "${LLC_FLAGS[@]}" -stop-after=virtregrewriter,1 - -o "$AMD_OUT/$name.final.mir" \
        <"$TMP/$name.bc" || die "$name: llc -stop-after=virtregrewriter,1 failed"
      "$LLC" "${LLC_FLAGS[@]}" -filetype=asm - -o "$AMD_OUT/$name.s" \
        <"$TMP/$name.bc" || die "$name: llc -filetype=asm failed"
      check_amd "$name"
      AMD_ROWS+=("$name"$'\t'"$src"$'\t'"$macros")
      ;;
    nv)
      for t in "${NV_TARGETS[@]}"; do
        echo "nv   $name.$t"
        "$NVCC" -arch="$t" -ptx "${mflags[@]}" "corpus/kernels/$src" -o "$NV_OUT/$name.$t.ptx" \
          || die "$name.$t: nvcc failed"
        "$PTXAS" -v -arch="$t" "$NV_OUT/$name.$t.ptx" -o /dev/null \
          2>"$NV_OUT/$name.$t.ptxas.txt" || { cat "$NV_OUT/$name.$t.ptxas.txt" >&2; die "$name.$t: ptxas failed"; }
        grep -q 'Used [0-9]* registers' "$NV_OUT/$name.$t.ptxas.txt" \
          || die "$name.$t.ptxas.txt has no register count"
        grep -q '^\.entry\|^\.visible \.entry' "$NV_OUT/$name.$t.ptx" || die "$name.$t.ptx has no entry"
      done
      NV_ROWS+=("$name"$'\t'"$src"$'\t'"$macros")
      ;;
    *) die "unknown vendor '$vendor' in $RECIPES" ;;
  esac
done <"$RECIPES"

# ---------------------------------------------------------------- README
lc() { wc -l <"$1" | tr -d ' '; }
asm_field() { grep -m1 -E "^\s+\.$2:" "$1" | awk '{print $2}'; }     # metadata, e.g. vgpr_count
asm_note() { grep -m1 -E "^; $2: " "$1" | awk '{print $3}'; }          # llc comment, e.g. NumAgprs
{
  echo "# Compiler-output fixtures"
  echo
  echo "Generated by \`scripts/gen-fixtures.sh\` from \`corpus/kernels/\` with the variants in"
  echo "\`corpus/recipes/fixtures.tsv\`. Do not edit by hand: rerun the script. Raw compiler output,"
  echo "nothing stripped."
  echo
  echo "Tools: \`$("$CLANG" --version | head -1)\`; \`$("$LLC" --version | grep -m1 -i 'llvm version' | sed 's/^ *//')\`;"
  echo "\`$("$NVCC" --version | tail -1)\`; ptxas \`$("$PTXAS" --version | tail -1)\`."
  echo
  echo "## AMD gfx90a (tests/fixtures/amd/)"
  echo
  echo "Commands (run from the repo root; the bitcode goes to llc on stdin):"
  echo
  echo '```'
  echo "clang-14 ${CLANG_FLAGS[*]} MACROS -emit-llvm -c corpus/kernels/SRC -o NAME.bc"
  echo "llc-14 ${LLC_FLAGS[*]} -stop-before=greedy           - < NAME.bc > NAME.prera.mir      # all virtual"
  echo "llc-14 ${LLC_FLAGS[*]} -stop-after=greedy,1          - < NAME.bc > NAME.postsplit.mir  # SGPRs physical, VGPR/AGPR virtual"
  echo "llc-14 ${LLC_FLAGS[*]} -stop-after=virtregrewriter,1 - < NAME.bc > NAME.final.mir      # fully allocated"
  echo "llc-14 ${LLC_FLAGS[*]} -filetype=asm                 - < NAME.bc > NAME.s"
  echo '```'
  echo
  echo "Instance numbers in \`pass,N\` count from 0 in llc-14 (\`greedy,0\` = SGPR round,"
  echo "\`greedy,1\` = VGPR/AGPR round); an out-of-range instance is silently ignored."
  echo
  echo "Register columns come from NAME.s: \`.vgpr_count\`/\`.sgpr_count\` (metadata; vgpr_count ="
  echo "alignTo(VGPRs,4)+AGPRs) and llc's \`; NumVgprs/NumAgprs/ScratchSize/Occupancy\` comments."
  echo
  echo "| NAME | source | macros | lines prera / postsplit / final / .s | .vgpr_count (VGPR+AGPR) | .sgpr_count | scratch | occupancy |"
  echo "|---|---|---|---|---|---|---|---|"
  for row in "${AMD_ROWS[@]}"; do
    IFS=$'\t' read -r n s m <<<"$row"
    echo "| \`$n\` | $s | \`$m\` | $(lc "$AMD_OUT/$n.prera.mir") / $(lc "$AMD_OUT/$n.postsplit.mir") / $(lc "$AMD_OUT/$n.final.mir") / $(lc "$AMD_OUT/$n.s") | $(asm_field "$AMD_OUT/$n.s" vgpr_count) ($(asm_note "$AMD_OUT/$n.s" NumVgprs)+$(asm_note "$AMD_OUT/$n.s" NumAgprs)) | $(asm_field "$AMD_OUT/$n.s" sgpr_count) | $(asm_note "$AMD_OUT/$n.s" ScratchSize) | $(asm_note "$AMD_OUT/$n.s" Occupancy) |"
  done
  echo
  echo "## NVIDIA sm_89 / sm_90 (tests/fixtures/nv/)"
  echo
  echo '```'
  echo "nvcc -arch=T -ptx MACROS corpus/kernels/SRC -o NAME.T.ptx"
  echo "ptxas -v -arch=T NAME.T.ptx -o /dev/null 2> NAME.T.ptxas.txt"
  echo '```'
  echo
  echo "The \`Compile time = N ms\` line of each \`.ptxas.txt\` is wall-clock time and changes on"
  echo "every run; everything else is reproducible."
  echo
  echo "| NAME | source | macros | T | lines .ptx | ptxas: registers, spill stores/loads |"
  echo "|---|---|---|---|---|---|"
  for row in "${NV_ROWS[@]}"; do
    IFS=$'\t' read -r n s m <<<"$row"
    for t in "${NV_TARGETS[@]}"; do
      local_regs="$(grep -oE 'Used [0-9]+ registers' "$NV_OUT/$n.$t.ptxas.txt" | head -1)"
      local_spill="$(grep -oE '[0-9]+ bytes spill stores, [0-9]+ bytes spill loads' "$NV_OUT/$n.$t.ptxas.txt" | head -1)"
      echo "| \`$n\` | $s | \`$m\` | $t | $(lc "$NV_OUT/$n.$t.ptx") | $local_regs; $local_spill |"
    done
  done
  if [[ -s "$TMP/README.keep" ]]; then echo; cat "$TMP/README.keep"; fi
} >tests/fixtures/README.md

total_bytes="$(cat "$AMD_OUT"/* "$NV_OUT"/* | wc -c)"
echo "gen-fixtures: ${#AMD_ROWS[@]} AMD + ${#NV_ROWS[@]} NV variants, $total_bytes bytes total"
(( total_bytes < 12 * 1024 * 1024 )) || die "fixtures exceed 12 MiB ($total_bytes bytes): trim fixtures.tsv"

# archs: the other AMD architectures (gfx908/gfx1030 with LLVM 14, gfx940/gfx1100 with LLVM 16)
bash "$ROOT/scripts/gen-arch-fixtures.sh"
