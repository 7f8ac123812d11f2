#!/usr/bin/env bash
# `regsweep corpus import` on real compiler output (tests/fixtures/import/README.md):
#  - a recipe (OpenCL for gfx90a+gfx1100, CUDA for sm_80+sm_90, one CUDA file that does not
#    compile): instances per target and form, exact truths, the failure named with its kernel set;
#  - resume: a second run compiles nothing and gives the same rows; a removed unit alone recompiles;
#    a listing refused when its unit compiled (T.sass.FAILED) is disassembled again;
#  - compiler outputs into the existing corpus (.ll, .ptx, a cubin, the three MIR stages): the
#    first family's rows kept, the cubin's rows dropped as duplicates of the PTX's sm_80 rows;
#  - re-importing a family replaces its rows; bad recipe lines and files are refused by name.
set -euo pipefail
bin=$(realpath "$1")
command -v clang-14 >/dev/null && command -v llc-16 >/dev/null || { echo "SKIP: clang-14/llc-16 missing"; exit 77; }
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$nvcc" ] || { echo "SKIP: nvcc missing (CUDA toolkit)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$1"; then :; else echo "FAIL: $2"; fail=$((fail + 1)); fi; }
fx=tests/fixtures/import
C="$tmp/C.h5"

"$bin" corpus import --out "$C" "$fx/recipe.tsv" --family mylib -j2 > "$tmp/1.log" 2>&1 || { cat "$tmp/1.log"; exit 1; }
if grep -q "form sass skipped" "$tmp/1.log"; then echo "SKIP: no nvdisasm (form sass)"; exit 77; fi
"$bin" corpus list "$C" > "$tmp/1.list"
cat "$tmp/1.log"
check 'grep -q "3 units (3 compiled, 0 cached), 4 kernels -> 16 instances" "$tmp/1.log"' "16 instances from 4 kernels"
for k in saxpy block_sum; do
  for t in gfx90a gfx1100; do
    for f in prera postsplit; do
      check 'grep -q "^mylib/vecops.$k/$t/$f	.*truth$" "$tmp/1.list"' "OpenCL $k $t $f with exact truth"
    done
  done
done
for k in stencil3 dot_partial; do
  for t in sm_80 sm_90; do
    check 'grep -q "^mylib/stencil.$k/$t/sass	.*truth$" "$tmp/1.list"' "CUDA $k $t sass with exact truth"
    check 'grep -q "^mylib/stencil.$k/$t/ptx	" "$tmp/1.list"' "CUDA $k $t ptx row"
  done
done
check 'grep -q "^FAILED mylib/broken/sm_80	nvcc .*undefined_symbol" "$tmp/1.list"' "broken.cu named as a build failure"
check '[ "$(grep -c ^FAILED "$tmp/1.list")" -eq 1 ]' "one failure only"
"$bin" corpus info "$C" > "$tmp/info"
check 'grep -q "^| mylib | gfx1100 | prera | 2 | 2 |" "$tmp/info"' "corpus info shows the imported family"

# resume: nothing compiled, same rows; then one unit removed: only it compiles
"$bin" corpus import --out "$C" "$fx/recipe.tsv" --family mylib -j2 > "$tmp/2.log" 2>&1
"$bin" corpus list "$C" > "$tmp/2.list"
check 'grep -q "(0 compiled, 3 cached)" "$tmp/2.log"' "second run compiles nothing: $(grep units "$tmp/2.log")"
check 'diff -q <(sort "$tmp/1.list") <(sort "$tmp/2.list") >/dev/null' "second run gives the same rows"
rm -rf "$C.work"/units/vecops-*
"$bin" corpus import --out "$C" "$fx/recipe.tsv" --family mylib -j2 > "$tmp/3.log" 2>&1
check 'grep -q "(1 compiled, 2 cached)" "$tmp/3.log"' "a removed unit alone recompiles"
# a listing our disassembler refused when the unit compiled is disassembled again by this run
su=$(ls -d "$C.work"/units/stencil-* | head -1)
mv "$su/sm_80.sass" "$tmp/sm_80.sass.orig"
echo "regsweep corpus disasm: sm_80.cubin: a refusal of an older regsweep" > "$su/sm_80.sass.FAILED"
"$bin" corpus import --out "$C" "$fx/recipe.tsv" --family mylib -j2 > "$tmp/3b.log" 2>&1
"$bin" corpus list "$C" > "$tmp/3b.list"
check 'grep -q "1 SASS listings refused when their unit compiled were disassembled now" "$tmp/3b.log"' "refused listing redone: $(grep -i sass "$tmp/3b.log")"
check '[ ! -e "$su/sm_80.sass.FAILED" ] && cmp -s "$su/sm_80.sass" "$tmp/sm_80.sass.orig"' "the redone listing is the one the job wrote"
check 'diff -q <(sort "$tmp/1.list") <(sort "$tmp/3b.list") >/dev/null' "and the rows are those of the first run"

# compiler outputs into the existing corpus, another family
"$bin" corpus import --out "$C" "$fx/scale.ll" "$fx/axpb.ptx" "$fx/axpb.sm_80.cubin" \
  tests/fixtures/amd/conv2d_k5_o2.prera.mir --family files --targets gfx90a,gfx908,sm_80 -j2 > "$tmp/4.log" 2>&1 || cat "$tmp/4.log"
"$bin" corpus list "$C" > "$tmp/4.list"
cat "$tmp/4.log"
check 'grep -q "kept 16 rows of other families" "$tmp/4.log"' "existing rows kept"
check 'grep -q "(2 duplicates dropped)" "$tmp/4.log"' "the cubin's sass rows are the PTX's sm_80 ones"
for t in gfx90a gfx908; do
  check 'grep -q "^files/scale.scale_clamp/$t/prera	.*truth$" "$tmp/4.list"' ".ll compiled for $t (its target-cpu dropped)"
done
check 'grep -q "^files/conv2d_k5_o2.conv2d/gfx90a/postsplit	.*truth$" "$tmp/4.list"' "MIR stages imported with truth"
check '! grep -q "^files/conv2d_k5_o2.conv2d/gfx908" "$tmp/4.list"' "MIR stays on the architecture it was written for"
check 'grep -q "^files/axpb.axpb_half/sm_80/sass	.*truth$" "$tmp/4.list"' "PTX -> cubin -> sass with truth"
check 'grep -q "^files/axpb.axpb/sm_80/ptx	" "$tmp/4.list"' "PTX form row"
check '[ "$(grep -c "^mylib/" "$tmp/4.list")" -eq 16 ]' "the first family's 16 rows are all there"

# an ELF object (nvcc -c): its embedded cubin found, form sass; a non-CUDA ELF object refused
"$nvcc" -arch=sm_80 -c "$fx/axpb.cu" -o "$tmp/axpb.o"
"$bin" corpus import --out "$tmp/O.h5" "$tmp/axpb.o" --family obj > "$tmp/o.log" 2>&1 || cat "$tmp/o.log"
"$bin" corpus list "$tmp/O.h5" > "$tmp/o.list"
check '[ "$(grep -c "^obj/axpb.axpb.*/sm_80/sass	.*truth$" "$tmp/o.list")" -eq 2 ]' "cubin inside an ELF object: 2 kernels"
cc -c -x c /dev/null -o "$tmp/host.o"
check '! "$bin" corpus import --out "$tmp/X.h5" "$tmp/host.o" 2> "$tmp/e5"' "ELF object without cubin refused"
check 'grep -q "host.o: no uncompressed cubin found" "$tmp/e5"' "named: $(cat "$tmp/e5")"

# re-import of a family replaces its rows
"$bin" corpus import --out "$C" "$fx/vecops.cl" --family mylib --targets gfx90a -j2 > "$tmp/5.log" 2>&1
"$bin" corpus list "$C" > "$tmp/5.list"
check 'grep -q "replaced 16 of family mylib" "$tmp/5.log"' "re-import replaces the family: $(tail -2 "$tmp/5.log" | head -1)"
check '[ "$(grep -c "^mylib/" "$tmp/5.list")" -eq 4 ]' "4 mylib rows after re-import"
check 'grep -q "^files/" "$tmp/5.list"' "other family untouched"

# refused input, by name
check '! "$bin" corpus import --out "$tmp/X.h5" "$fx/bad-language.tsv" 2> "$tmp/e1"' "unknown language refused"
check 'grep -q "bad-language.tsv:3: unknown language .fortran." "$tmp/e1"' "its line named: $(cat "$tmp/e1")"
check '! "$bin" corpus import --out "$tmp/X.h5" "$fx/bad-target.tsv" 2> "$tmp/e2"' "target of the other vendor refused"
check 'grep -q "bad-target.tsv:1: target .sm_80. is not one opencl compiles for" "$tmp/e2"' "named: $(cat "$tmp/e2")"
check '! "$bin" corpus import --out "$tmp/X.h5" "$fx/README.md" 2> "$tmp/e3"' "unknown file kind refused"
check 'grep -q "README.md: unknown kind of input" "$tmp/e3"' "named: $(cat "$tmp/e3")"
check '! "$bin" corpus import --out "$tmp/X.h5" "$fx/vecops.cl" --targets gfx42 2> "$tmp/e4"' "unknown target refused"
check 'grep -q "gfx42" "$tmp/e4"' "named: $(cat "$tmp/e4")"
pad=$(for i in $(seq 1 110); do printf -- '-DPAD%03d=1 ' "$i"; done) # 1,210 characters of flags
printf '%s/vecops.cl\topencl\t%s%s-DTILE=32\tgfx90a\n' "$PWD/$fx" "$pad" "$pad" > "$tmp/long.tsv"
check '! "$bin" corpus import --out "$tmp/X.h5" "$tmp/long.tsv" 2> "$tmp/e6"' "flags longer than the limit refused"
check 'grep -q "long.tsv:1: flags are 2429 characters, at most 2047" "$tmp/e6"' "named: $(cat "$tmp/e6")"
check '[ ! -e "$tmp/X.h5" ]' "nothing written on refusal"
# a long flags field (MIOpen's solvers pass about 1 KB of -D) is passed whole: its last -D counts
# (a 400-byte field used to be cut, compiling something else); one compile, skipped under RS_TEST_QUICK
if [ -z "${RS_TEST_QUICK:-}" ]; then
  printf '%s/vecops.cl\topencl\t%s-DTILE=32\tgfx90a\n' "$PWD/$fx" "$pad" > "$tmp/long.tsv"
  "$bin" corpus import --out "$tmp/L.h5" "$tmp/long.tsv" --family long > "$tmp/l.log" 2>&1 || cat "$tmp/l.log"
  check 'grep -q "ldsSize: *128$" "$(ls "$tmp/L.h5.work"/units/vecops-*/gfx90a/final.mir)"' \
    "the last of 1,219 characters of flags (-DTILE=32: 128 bytes of LDS) reached clang: $(grep ldsSize "$tmp/L.h5.work"/units/vecops-*/gfx90a/final.mir)"
fi

[ "$fail" -eq 0 ] && echo "test_corpus_import: all checks passed"
exit $((fail > 0))
