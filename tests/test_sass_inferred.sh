#!/usr/bin/env bash
# test_sass_inferred.sh -- issue 42: a form the opcode table lacks is read with the row nvdisasm's
# own life ranges give (sass/infer.c), on real ptxas 13 output, no nvdisasm run: the completed
# `-plr` listings of our kernels (tests/fixtures/sass-forms/*.plr.sass.gz, `corpus disasm --plr`
# of forms42*.cu for sm_80 and sm_90). RS_TEST_MASK_ROWS (a test facility) hides 19 of the
# table's rows (IMAD, IMAD.WIDE, IADD3, ISETP, LOP3.LUT, FFMA, SHF, MOV, S2R, LDG.E, STG.E, the
# issue's forms ...), so that every instruction of those forms is read with an inferred row:
#  1. every function pinned identical and free valid (re-lift + verifier), exactly as with the
#     table (forms42b sm_90's uswitch stays refused by its dropped jump-table label), and each
#     line names its inferred rows; `inspect` marks the same functions;
#  2. a control instruction is never inferred: ACQBULK/PREEXIT hidden refuse `pdl` by name, with
#     infer.c's reason, and the listing's other functions go on (exit 1);
#  3. instances that disagree: one IMAD.WIDE row of -plr edited here (R3 of `IMAD.WIDE R2, R0,
#     R5, c[..]` shown live-through instead of written: a test-made corruption of nvdisasm's
#     output) leaves no role assignment fitting every instance: the form stays refused by name
#     ("instances disagree"), only in the functions that have it;
#     A wrong row that pinned cannot see: HMUL2's one instance edited so that its source R3 shows
#     as written (a test-made corruption): inferred `d1 d1 s1`, pinned still reproduces the
#     listing, but the function's liveness is not -plr's (R3 live before it): refused by name;
#  4. without the mask nothing is inferred (the table reads everything);
#  6. a form found first in the wild: dmax.cu (ours: fmax/fmin of doubles) makes ptxas write
#     DSETP.MAX.AND / DSETP.MIN.AND (sm_80, sm_90), which the table lacked until the PTX-ISA
#     generator (scripts/ptxgen.py) reached min/max.f64; the table now reads them (nothing
#     inferred), and with its DSETP row hidden both are inferred (d1 d1 s2 .. s1, as the table's
#     row), the function pinned identical (and -plr-equal) and free valid;
#  7. `inspect --live --check-plr` (the Done-when check of issue 42 as a command): the listing's own
#     -plr columns against our liveness, every function equal (with the table, and with the 19
#     rows inferred, each line naming them); a read of HMUL2 R13, R3, R0 blanked in -plr's row (a
#     test-made corruption: R0 dead there by -plr) makes hset differ at that row, named, the other
#     five equal, exit 1; a listing without -plr columns is bad input (exit 2);
#  8. a listing whose function uses R100+ carries a wider -plr header (`// |   # 0123...`):
#     fa168.sm_80 (the mini corpus's flash_attn_fwd.cu, ours, HD=64 BC=16 THREADS=64 RPT=2 CAUSAL=1
#     UNROLL_C=1: 168 R) with MOV hidden infers MOV from its own columns, pinned identical (the
#     binary before took it for a listing without -plr columns and refused the function);
#  9. a corpus row read with an inferred row: fa168 (MOV hidden) built into a corpus keeps MOV's
#     row in its params (inferred_forms="MOV/2=d1 s1"), `regalloc CORPUS --pinned` reads it back
#     from there, identical and marked, `corpus info` counts it; without -plr columns: refused;
#  5. free mode keeps ptxas's colouring of a function it cannot colour validly: RS_TEST_FREE_BREAK
#     (a test facility: puts two interfering values of `joins` on one register) makes the check
#     refuse that colouring; the function keeps ptxas's registers with one line saying why, the
#     summary counts it, exit 1, the other five stay recoloured and valid, and the written listing
#     has `joins` exactly as the input (and `cpasync` recoloured).
set -u
CLI="${1:?usage: test_sass_inferred.sh path/to/regsweep}"
F=tests/fixtures/sass-forms
MASK=HSET2,HMUL2,B2R.RESULT,MOVM.16.MT88,F2FP.UNPACK_B,UIMAD.X,UIMAD.WIDE,IADD3,ISETP,LOP3.LUT,FFMA,SHF,IMAD.WIDE,SYNCS.CCTL.IV,S2R,MOV,LDG.E,STG.E,IMAD
fail=0
check() { if eval "$2"; then :; else echo "FAIL: $1" >&2; fail=1; fi; }
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT

ninf=0
for z in "$F"/forms42*.plr.sass.gz; do
  b=$(basename "$z" .gz)
  gzip -dc "$z" >"$T/$b"
  f="$T/$b"
  n=$(grep -c '\.section	\.text\.' "$f")
  RS_TEST_MASK_ROWS=$MASK "$CLI" regalloc "$f" --pinned >"$T/p" 2>&1; rp=$?
  RS_TEST_MASK_ROWS=$MASK "$CLI" regalloc "$f" --free >"$T/f" 2>&1; rf=$?
  "$CLI" regalloc "$f" --pinned >"$T/p0" 2>&1
  ip=$(grep -c ': identical (' "$T/p"); vf=$(grep -c 'contributor sets equivalent.*verifier: pass' "$T/f")
  mp=$(grep -c ': identical (.*inferred rows (nvdisasm -plr): ' "$T/p")
  mf=$(grep -c 'verifier: pass.*inferred rows (nvdisasm -plr): ' "$T/f")
  ninf=$((ninf + mp))
  want=$n wantrc=0
  if [[ "$b" == forms42b.sm_90.* ]]; then want=$((n - 1)) wantrc=1; fi
  check "$b: pinned with inferred rows (rc $rp, $ip of $want identical): $(grep -v ': identical' "$T/p" | head -c 600)" \
    "[[ $rp == $wantrc && $ip == $want ]]"
  check "$b: free with inferred rows (rc $rf, $vf of $want valid): $(grep -v 'verifier: pass' "$T/f" | head -c 600)" \
    "[[ $rf == $wantrc && $vf == $want ]]"
  check "$b: every function read marks its inferred rows ($mp pinned, $mf free of $want)" "[[ $mp == $want && $mf == $want ]]"
  check "$b: without the mask nothing is inferred" "! grep -q 'inferred rows' '$T/p0' && [[ \$(grep -c ': identical (' '$T/p0') == $want ]]"
done
echo "inferred: $ninf functions pinned identical with inferred rows"
check "at least 30 functions read with inferred rows ($ninf)" "[[ $ninf -ge 30 ]]"

# inspect marks the functions read with inferred rows (text and JSON)
RS_TEST_MASK_ROWS=HSET2 "$CLI" inspect "$T/forms42.sm_80.plr.sass" >"$T/i" 2>&1; ri=$?
check "inspect: hset read with HSET2 rows inferred (rc $ri)" \
  "[[ $ri == 0 ]] && grep -q '^  inferred rows (nvdisasm -plr): HSET2.BF.LE.AND/4 HSET2.BF.GT.AND/4' '$T/i' && [[ \$(grep -c 'inferred rows' '$T/i') == 1 ]]"
RS_TEST_MASK_ROWS=HSET2 "$CLI" inspect "$T/forms42.sm_80.plr.sass" --json >"$T/j" 2>&1
check "inspect --json: inferred_rows" "grep -q '\"inferred_rows\":\"HSET2.BF.LE.AND/4 HSET2.BF.GT.AND/4\"' '$T/j'"

# 2. control instructions: never inferred
RS_TEST_MASK_ROWS=ACQBULK,PREEXIT "$CLI" regalloc "$T/forms42.sm_90.plr.sass" --pinned >"$T/c" 2>&1; rc=$?
check "ACQBULK/PREEXIT hidden: pdl refused by name, not inferred (rc $rc): $(head -c 600 "$T/c")" \
  "[[ $rc == 1 ]] && grep -q 'refused _Z3pdlPKfPfi .*form ACQBULK (no operands):.*not inferred from nvdisasm -plr.*a control instruction' '$T/c' && [[ \$(grep -c ': identical (' '$T/c') == 5 ]]"

# 3. instances that disagree (one -plr row edited here)
awk '!done && /IMAD.WIDE R2, R0, R5, c\[0x0\]\[0x160\]/ { if (sub(/v:\^\^ v/, "v:^: v")) done = 1 } { print }' \
  "$T/forms42.sm_80.plr.sass" >"$T/bad.sass"
check "the edit changed one row" "[[ \$(diff '$T/forms42.sm_80.plr.sass' '$T/bad.sass' | grep -c '^>') == 1 ]]"
RS_TEST_MASK_ROWS=IMAD.WIDE "$CLI" regalloc "$T/bad.sass" --pinned >"$T/d" 2>&1; rd=$?
nd=$(grep -c 'refused .*form IMAD.WIDE (.*instances disagree' "$T/d")
check "disagreeing IMAD.WIDE instances: refused by name ($nd functions, rc $rd): $(head -c 600 "$T/d")" \
  "[[ $rd == 1 && $nd -ge 1 ]] && grep -q '_Z3cgkPKiPi: identical (.*inferred rows (nvdisasm -plr): IMAD.WIDE.U32/4' '$T/d'"
awk '!done && /HMUL2 R13, R3, R0 ;/ { if (sub(/v: v    ::   \^/, "v: ^    ::   ^")) done = 1 } { print }' \
  "$T/forms42.sm_80.plr.sass" >"$T/bad2.sass"
check "the HMUL2 edit changed one row" "[[ \$(diff '$T/forms42.sm_80.plr.sass' '$T/bad2.sass' | grep -c '^>') == 1 ]]"
RS_TEST_MASK_ROWS=HMUL2 "$CLI" regalloc "$T/bad2.sass" --pinned >"$T/h" 2>&1; rh=$?
check "a wrong inferred HMUL2 row: hset refused by the liveness check (rc $rh): $(head -c 600 "$T/h")" \
  "[[ $rh == 1 ]] && grep -q 'refused _Z4hsetPK7__half2S1_PS_i: inferred: with the inferred row(s) HMUL2/3 its liveness is not nvdisasm -plr.s: /\*0120\*/: R3 live by nvdisasm -plr, dead by ours' '$T/h' && [[ \$(grep -c ': identical (' '$T/h') == 5 ]]"

# 6. DSETP.MAX.AND / DSETP.MIN.AND (dmax.cu): read by the table; inferred with its row hidden
for sm in sm_80 sm_90; do
  gzip -dc "$F/dmax.$sm.plr.sass.gz" >"$T/dmax.$sm.sass"
  "$CLI" regalloc "$T/dmax.$sm.sass" --pinned >"$T/p" 2>&1; rp=$?
  check "dmax $sm: the table reads DSETP.MAX.AND (rc $rp): $(head -c 500 "$T/p")" \
    "[[ $rp == 0 ]] && grep -q '_Z4dmaxPKdS0_Pdi: identical (' '$T/p' && ! grep -q 'inferred' '$T/p'"
  RS_TEST_MASK_ROWS=DSETP "$CLI" corpus forms "$T/dmax.$sm.sass" >"$T/cf" 2>&1
  check "dmax $sm: DSETP.MAX.AND unknown with the row hidden" "grep -q \"^DSETP.MAX.AND .*form 'DSETP.MAX.AND': its table row DSETP is masked\" '$T/cf'"
  RS_TEST_MASK_ROWS=DSETP "$CLI" regalloc "$T/dmax.$sm.sass" --pinned >"$T/p" 2>&1; rp=$?
  RS_TEST_MASK_ROWS=DSETP "$CLI" regalloc "$T/dmax.$sm.sass" --free >"$T/f" 2>&1; rf=$?
  check "dmax $sm: pinned identical with DSETP.MAX.AND/MIN.AND inferred (rc $rp): $(head -c 500 "$T/p")" \
    "[[ $rp == 0 ]] && grep -q '_Z4dmaxPKdS0_Pdi: identical (.*inferred rows (nvdisasm -plr): .*DSETP.MAX.AND/5' '$T/p' && grep -q 'DSETP.MIN.AND/5' '$T/p'"
  check "dmax $sm: free valid (rc $rf): $(head -c 500 "$T/f")" \
    "[[ $rf == 0 ]] && grep -q '_Z4dmaxPKdS0_Pdi: R: .*contributor sets equivalent.*verifier: pass.*inferred rows (nvdisasm -plr): ' '$T/f'"
  RS_TEST_MASK_ROWS=DSETP "$CLI" corpus forms --inferred "$T/dmax.$sm.sass" >"$T/ci" 2>&1
  check "dmax $sm: the inferred rows printed" "grep -q '{\"DSETP.MIN.AND\", \"\", \"d1 d1 s2 s1 s1\", 0}, /\* inferred from nvdisasm -plr' '$T/ci' && grep -q '{\"DSETP.MAX.AND\", \"\", \"d1 d1 s2 s[24] s1\", 0}' '$T/ci'"
done

# 5. free mode keeps ptxas's colouring where it cannot colour validly
RS_TEST_FREE_BREAK=_Z5joinsPKiPii "$CLI" regalloc "$T/forms42.sm_80.plr.sass" --free -o "$T/out.sass" >"$T/k" 2>&1; rk=$?
check "kept: joins keeps ptxas's colouring, named with why, counted (rc $rk): $(head -c 800 "$T/k")" \
  "[[ $rk == 1 ]] && grep -q \"_Z5joinsPKiPii: R: 14 -> 14 registers.*ptxas's own colouring kept (free mode could not colour it validly: the write-back joins values\" '$T/k' && grep -q '6 functions kept ptxas.s colouring' '$T/k' && grep -q ': 1 of 6 functions kept' '$T/k' && [[ \$(grep -c 'contributor sets equivalent.*verifier: pass' '$T/k') == 6 ]]"
sect() { awk -v f="$2" '/^\t\.section\t/ { on = index($0, ".text." f ",") > 0 } on' "$1"; }
check "kept: the written listing has joins as the input" \
  "[[ \$(sect '$T/out.sass' _Z5joinsPKiPii | wc -l) -gt 40 ]] && [[ \$(sect '$T/out.sass' _Z5joinsPKiPii | md5sum) == \$(sect '$T/forms42.sm_80.plr.sass' _Z5joinsPKiPii | md5sum) ]] && [[ \$(sect '$T/out.sass' _Z7cpasyncPKfPfi | md5sum) != \$(sect '$T/forms42.sm_80.plr.sass' _Z7cpasyncPKfPfi | md5sum) ]]"
# 7. inspect --live --check-plr: our liveness against the listing's own -plr columns
"$CLI" inspect "$T/forms42.sm_80.plr.sass" --live --check-plr >"$T/c1" 2>&1; rc1=$?
check "check-plr: 6 of 6 functions equal (rc $rc1): $(tail -c 300 "$T/c1")" \
  "[[ $rc1 == 0 ]] && [[ \$(grep -c '^live = nvdisasm -plr: .*: [0-9]* rows$' '$T/c1') == 6 ]] && grep -q ': 6 of 6 functions read: live = nvdisasm -plr on every row' '$T/c1'"
RS_TEST_MASK_ROWS=$MASK "$CLI" inspect "$T/forms42.sm_80.plr.sass" --live --check-plr >"$T/c2" 2>&1; rc2=$?
check "check-plr: with 19 rows inferred, equal and marked (rc $rc2): $(tail -c 300 "$T/c2")" \
  "[[ $rc2 == 0 ]] && [[ \$(grep -c '^live = nvdisasm -plr: .* rows; inferred rows (nvdisasm -plr): ' '$T/c2') == 6 ]]"
awk '!done && /HMUL2 R13, R3, R0 ;/ { i = index($0, "// |"); r = substr($0, i); if (sub(/v/, " ", r)) done = 1; $0 = substr($0, 1, i - 1) r } { print }' \
  "$T/forms42.sm_80.plr.sass" >"$T/bad3.sass"
"$CLI" inspect "$T/bad3.sass" --check-plr >"$T/c3" 2>&1; rc3=$?
check "check-plr: a blanked -plr read named at its row (rc $rc3): $(head -c 400 "$T/c3")" \
  "[[ \$(diff '$T/forms42.sm_80.plr.sass' '$T/bad3.sass' | grep -c '^>') == 1 ]] && [[ $rc3 == 1 ]] && grep -q '^live != nvdisasm -plr: _Z4hsetPK7__half2S1_PS_i: /\*0130\*/: R0 dead by nvdisasm -plr, live by ours' '$T/c3' && grep -q ': 5 of 6 functions read' '$T/c3'"
sed 's|//.*||' "$T/forms42.sm_80.plr.sass" >"$T/noplr.sass"
"$CLI" inspect "$T/noplr.sass" --check-plr >"$T/c4" 2>&1; rc4=$?
check "check-plr: a listing without -plr columns is bad input (rc $rc4): $(head -c 300 "$T/c4")" \
  "[[ $rc4 == 2 ]] && grep -q 'no nvdisasm -plr columns' '$T/c4'"
# 8. -plr columns of a function using R100+ (a three-digit count: `// |   # 0123`)
gzip -dc tests/fixtures/sass-forms/fa168.sm_80.plr.sass.gz >"$T/fa168.sass"
RS_TEST_MASK_ROWS=MOV "$CLI" regalloc "$T/fa168.sass" --pinned >"$T/w" 2>&1; rw=$?
check "fa168 (168 R): MOV inferred from the listing's own -plr columns, pinned identical (rc $rw): $(head -c 300 "$T/w")" \
  "[[ $rw == 0 ]] && grep -q '^regalloc(pinned): flash_attn_fwd: identical (.*inferred rows (nvdisasm -plr): MOV/2' '$T/w'"
# 9. a corpus row read with an inferred row: fa168's -plr listing as a cached `corpus build` work
# directory (no compiler runs; form ptx fails for want of its .ptx), MOV hidden: the row is kept
# with MOV's row in its params, read back from there (pinned identical, marked), counted by info;
# the same listing without its -plr columns is refused by name, as before
if [[ -x /usr/local/cuda/bin/nvcc || -n "${NVCC:-}" ]]; then
  mkdir -p "$T/cw/nv/fa/hd64" "$T/ck" "$T/dw/nv/fa/hd64"
  printf 'fa\tnv\tflash_attn_fwd.cu\tattention\tHD=64\n' >"$T/cg.tsv"
  : >"$T/ck/flash_attn_fwd.cu"
  cp "$T/fa168.sass" "$T/cw/nv/fa/hd64/sm_80.sass"
  sed 's|//.*||' "$T/fa168.sass" >"$T/dw/nv/fa/hd64/sm_80.sass"
  cb() { RS_TEST_MASK_ROWS=MOV "$CLI" corpus build --out "$T/$1.h5" --grid "$T/cg.tsv" --targets sm_80 --work "$T/$2" --kernels "$T/ck" -j1 >"$T/$1.log" 2>&1; }
  cb c cw; rb=$?
  "$CLI" corpus list "$T/c.h5" --params >"$T/cl" 2>&1
  check "corpus: fa168 kept with MOV inferred, its row in the params (rc $rb): $(cat "$T/cl" "$T/c.log" | head -c 600)" \
    "[[ $rb == 0 ]] && grep -q \$'^fa/hd64/sm_80/sass\\t.*\\ttruth\\t-DHD=64 inferred_forms=\"MOV/2=d1 s1\"\$' '$T/cl'"
  RS_TEST_MASK_ROWS=MOV "$CLI" regalloc "$T/c.h5" --pinned >"$T/cp" 2>&1; rcp=$?
  check "corpus: pinned identical with the params' MOV row, marked (rc $rcp): $(head -c 600 "$T/cp")" \
    "[[ $rcp == 0 ]] && grep -q '^regalloc(pinned): flash_attn_fwd: identical (834 values.*; inferred rows (nvdisasm -plr): MOV/2\$' '$T/cp' && grep -q '^instance fa/hd64/sm_80/sass: identical; inferred forms (nvdisasm -plr): MOV/2, ' '$T/cp' && grep -q ': 1 sass instances, 0 failures, 0 refused' '$T/cp'"
  "$CLI" corpus info "$T/c.h5" >"$T/ci9" 2>&1
  check "corpus info counts it: $(head -c 300 "$T/ci9")" \
    "grep -q '^inferred forms (nvdisasm -plr, params inferred_forms): 1 instances (MOV/2)\$' '$T/ci9'"
  cb d dw; rb2=$?
  "$CLI" corpus list "$T/d.h5" >"$T/dl" 2>&1
  check "corpus: without -plr columns MOV is refused by name (rc $rb2): $(head -c 400 "$T/dl")" \
    "[[ $rb2 == 0 ]] && ! grep -q '/sass' '$T/dl' && grep -q \"^FAILED fa/hd64/sm_80.*sass: refused MOV: .*form 'MOV': its table row MOV is masked\" '$T/dl'"
else
  echo "SKIPPED part 9 (corpus rows with inferred rows): no nvcc for corpus build"
fi
# 10. the same from the compiler on: `corpus build` of our reduce.cu for sm_80 with MOV hidden lists
# the cubin, finds the form unknown (`corpus forms`), lists it again with -plr columns and keeps the
# row with MOV inferred (corpus/compile.c), and `report` of a sweep over it says so; one nvcc + ptxas run
if [[ -x /usr/local/cuda/bin/nvcc || -n "${NVCC:-}" ]]; then
  printf 'reduce\tnv\treduce.cu\treduce\tBLOCK=128\n' >"$T/rg.tsv"
  RS_TEST_MASK_ROWS=MOV "$CLI" corpus build --out "$T/r.h5" --grid "$T/rg.tsv" --targets sm_80 --work "$T/rw" -j1 >"$T/r.log" 2>&1; rr=$?
  "$CLI" corpus list "$T/r.h5" --params >"$T/rl" 2>&1
  check "corpus build: reduce sm_80 kept with MOV inferred from a -plr listing (rc $rr): $(cat "$T/rl" "$T/r.log" | head -c 600)" \
    "[[ $rr == 0 ]] && grep -q \$'^reduce/block128/sm_80/sass\\t.*\\ttruth\\t-DBLOCK=128 inferred_forms=\"MOV/2=d1 s1\"\$' '$T/rl' && grep -q '// |  1  ^' '$T/rw/nv/reduce/block128/sm_80.sass'"
  # a sweep over it reads the row with its stored MOV row; the report says so
  # (Open MPI's plugins leak at exit: see test_sweep.sh)
  RS_TEST_MASK_ROWS=MOV ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" "$CLI" sweep --corpus "$T/r.h5" --model builtin:chaitin --samples 2 --out "$T/rrun" >"$T/rs.log" 2>&1; rs=$?
  RS_TEST_MASK_ROWS=MOV "$CLI" report "$T/rrun" >"$T/rrep" 2>&1
  check "sweep + report over it (rc $rs): $(tail -c 400 "$T/rs.log")" \
    "[[ $rs == 0 ]] && grep -q '^Inferred forms: 1 of 2 instances were read with instruction forms inferred from nvdisasm -plr' '$T/rrep'"
else
  echo "SKIPPED part 10 (corpus build lists again with -plr): no nvcc"
fi
[[ $fail == 0 ]] && echo "test_sass_inferred: ok"
exit $fail
