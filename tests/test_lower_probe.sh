#!/usr/bin/env bash
# The cubin back end on real ptxas 13 output (tests/fixtures/sass-lower, README there):
# 1. hazards: two writes of one register under complementary guards (@!P1 LDG.E R4 / @P1 MOV R4)
#    are no race; the same with another predicate (@P0) is one.
# 2. the wrong field: pinned lowering of isetp.cu (ISETP.GE.OR.EX P0, PT, R5, c[..], P0, P1) is
#    byte-identical on sm_75, sm_86 and sm_90, and `lower check` (which probes every row it meets with
#    nvdisasm) passes: the table's ISETP 0xa0c 'PPRPP' row agrees with nvdisasm.
# 3. fields from nvdisasm alone: RS_LOWER_PROBE_ONLY=1 (no table) lowers free mode's recolouring of
#    guards.cu and isetp.cu through the probe's fields, and nvdisasm reads the cubin back as meant.
# 4. desc[URx], which nvdisasm 11.8 does not print: cpasync.cu's LDGSTS (form 0xfae 'RUR', no trusted
#    field in the table on sm_80-89) with its descriptor pair renamed lowers through the probe's field
#    (found through the bit that makes 11.8 print desc[URx], sm_80-89, or the address's UR offset,
#    sm_90; RS_LOWER_PROBE_ONLY=1, then with the table, which learned it), crosschecked; before, the
#    function kept ptxas's code (exit 1).
# 5. a refusal is as narrow as its cause: kept.cu's `waits` has NANOSLEEP, whose table row
#    RS_TEST_MASK_ROWS (a test facility) hides and -plr cannot give (a control instruction), so the
#    front end refuses that function alone; `regalloc --free -o` writes the cubin with the other two
#    re-encoded, `waits` as ptxas wrote it (named, with the reason), crosschecked, exit 1; pinned -o
#    stays byte-identical. Before, lowering refused the whole cubin ("no function _Z5waitsPiS_i").
# 6. fptrsync.cu (sm_90): `lower hazards` finds 0 on ptxas's listing (EXIT behind an in-flight LDC R1
#    is no race), and `regalloc --free -o` re-encodes both functions (BRA.CONV UR4 and BAR.SYNC
#    R13, R13 through the probe), crosschecked, exit 0; before, both kept ptxas's code.
# Needs nvdisasm (SKIPPED, 77, without it). RS_TEST_QUICK=1: sm_80 only, the probe-only lowering of
# guards.cu only, part 5 on sm_86 only, part 6 its hazard count only (each nvdisasm run is a second or two on a busy machine).
set -uo pipefail
bin=$(realpath "$1")
d=tests/fixtures/sass-lower
command -v nvdisasm >/dev/null || [ -x /opt/nvidia-cuda-11.8/usr/bin/nvdisasm ] || { echo "SKIPPED: no nvdisasm"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

# 1. complementary guards
sed 's/@P1 MOV R9, RZ/@P1 MOV R4, RZ/; s/@!P1 IMAD R9, R4, 0x3, RZ/@!P1 IMAD R4, R4, 0x3, RZ/; s/IMAD.IADD R9, R9, 0x1, R0/IMAD.IADD R9, R4, 0x1, R0/' \
  $d/guards.sm_80.sass > "$tmp/comp.sass"
cmp -s $d/guards.sm_80.sass "$tmp/comp.sass" && no "the recolouring of guards.sm_80.sass changed nothing"
out=$("$bin" lower hazards $d/guards.sm_80.cubin=$d/guards.sm_80.sass $d/guards.sm_80.cubin="$tmp/comp.sass" 2>&1)
grep -q '^hazards: 2 listings, 0 hazards' <<<"$out" || { echo "$out"; no "complementary guards counted as a race"; }
sed 's/@P1 MOV R4, RZ/@P0 MOV R4, RZ/' "$tmp/comp.sass" > "$tmp/race.sass"
out=$("$bin" lower hazards $d/guards.sm_80.cubin="$tmp/race.sass" 2>&1)
grep -q '/\*00c0\*/ MOV touches a register that /\*00b0\*/ LDG.E still writes' <<<"$out" ||
  { echo "$out"; no "@P0 MOV R4 behind @!P1 LDG.E R4 is not reported"; }

# 2. pinned lowering byte-identical, the table's rows against nvdisasm's probe
pairs=()
# one arch per encoding generation (sm_80 and sm_89 encode as sm_86 does; their fixtures are kept)
archs="75 86 90" probeonly="guards isetp"
[ -n "${RS_TEST_QUICK:-}" ] && archs=80 probeonly=guards
for a in $archs; do
  c=$d/isetp.sm_$a.cubin s=$d/isetp.sm_$a.sass
  pairs+=("$c=$s")
  out=$("$bin" lower $c $s $s -o "$tmp/p$a.cubin" 2>&1) || { echo "$out"; no "pinned lowering of isetp sm_$a"; continue; }
  cmp -s $c "$tmp/p$a.cubin" || no "pinned lowering of isetp sm_$a is not byte-identical"
done
out=$("$bin" lower check "${pairs[@]}" 2>&1) || { echo "$out"; no "lower check (with the probe) of isetp"; }
grep -q '^probe: .* 0 contradicted;' <<<"$out" || { echo "$out"; no "the probe contradicted a row"; }

# 3. the probe alone writes free mode's recolouring
for k in $probeonly; do
  out=$(RS_LOWER_PROBE_ONLY=1 "$bin" regalloc $d/$k.sm_80.cubin --listing $d/$k.sm_80.sass --free -o "$tmp/$k.cubin" 2>&1) ||
    { echo "$out"; no "probe-only lowering of $k sm_80"; continue; }
  grep -q '^probe: [1-9][0-9]* forms probed' <<<"$out" || { echo "$out"; no "$k: nothing probed"; }
  grep -q '^crosscheck (nvdisasm): .* 0 mismatches.*: ok' <<<"$out" || { echo "$out"; no "$k: crosscheck"; }
  grep -E '^(probe|crosscheck)' <<<"$out" | cut -c1-160
done
# 4. the descriptor's field from nvdisasm (the renamed pair: ULDC.64's UR4, sm_90 its second ULDC.64's UR6)
darchs="86 90" # sm_80 and sm_89 encode LDGSTS as sm_86 does (fixtures kept for all four)
[ -n "${RS_TEST_QUICK:-}" ] && darchs=86
for a in $darchs; do
  c=$d/cpasync.sm_$a.cubin s=$d/cpasync.sm_$a.sass
  if [ $a = 90 ]; then sed '/ULDC.64 UR6, c\[0x0\]\[0x208\]/,$ s/UR6\b/UR12/g' $s > "$tmp/d$a.sass"
  else sed 's/UR4\b/UR6/g' $s > "$tmp/d$a.sass"; fi
  grep -q 'LDGSTS.*desc\[UR\(6\|12\)\]' "$tmp/d$a.sass" || no "cpasync sm_$a: the descriptor was not renamed"
  # the probe alone (the table has the field since it learned from this fixture), then the table
  for po in 1 0; do
    out=$(RS_LOWER_PROBE_ONLY=$po "$bin" lower $c $s "$tmp/d$a.sass" -o "$tmp/d$a.cubin" 2>&1) ||
      { echo "$out"; no "cpasync sm_$a (probe only: $po): the renamed descriptor is not written"; continue; }
    [ $po = 0 ] || grep -q '^probe: .*fields found ([1-9][0-9]* desc\[\])' <<<"$out" ||
      { echo "$out"; no "cpasync sm_$a: no desc[] field probed"; }
    grep -q '^crosscheck (nvdisasm): .* 0 mismatches.*: ok' <<<"$out" || { echo "$out"; no "cpasync sm_$a: crosscheck"; }
    grep -q '^kept: ' <<<"$out" && no "cpasync sm_$a: a function kept ptxas's code"
    grep -E '^probe' <<<"$out" | cut -c1-160
  done
done
# 5. a function the front end refuses keeps ptxas's bytes; the rest is written
karchs="86 90"
[ -n "${RS_TEST_QUICK:-}" ] && karchs=86
sections() { # FILE: "name sha" for every .text and .nv.info section (the ELF section table)
  python3 - "$1" <<'PY'
import hashlib, struct, sys
b = open(sys.argv[1], 'rb').read()
off, = struct.unpack_from('<Q', b, 0x28); es, n, si = struct.unpack_from('<HHH', b, 0x3a)
sh = [struct.unpack_from('<IIQQQQIIQQ', b, off + i * es) for i in range(n)]
for s in sh:
    name = b[sh[si][4] + s[0]:b.index(b'\0', sh[si][4] + s[0])].decode()
    if name.startswith(('.text.', '.nv.info.')): print(name, hashlib.sha1(b[s[4]:s[4] + s[5]]).hexdigest())
PY
}
for a in $karchs; do
  c=$d/kept.sm_$a.cubin s=$d/kept.sm_$a.sass
  out=$(RS_TEST_MASK_ROWS=NANOSLEEP "$bin" regalloc $c --listing $s --free -o "$tmp/k$a.cubin" 2>&1); rc=$?
  [ $rc = 1 ] || no "kept sm_$a: exit $rc (1 expected: a function refused and kept)"
  grep -q '^kept: _Z5waitsPiS_i: ptxas.s code and register count: /\*[0-9a-f]*\*/: refused by the front end (form NANOSLEEP, operands imm)' <<<"$out" ||
    no "kept sm_$a: waits is not named as kept with the front end's reason"
  grep -q '^lower: .*re-encoded ([0-9]* register fields) in 2 functions' <<<"$out" || no "kept sm_$a: the other two functions not re-encoded"
  grep -q '^crosscheck (nvdisasm): 3 functions, .* 0 mismatches.*register counts 3/3 as meant.*: ok' <<<"$out" ||
    no "kept sm_$a: crosscheck"
  [ -f "$tmp/k$a.cubin" ] || { echo "$out"; no "kept sm_$a: no cubin written"; continue; }
  sections $c >"$tmp/k$a.before"; sections "$tmp/k$a.cubin" >"$tmp/k$a.after"
  [ "$(grep -c . "$tmp/k$a.before")" = 6 ] || no "kept sm_$a: 6 per-function sections expected in the fixture"
  changed=$(diff "$tmp/k$a.before" "$tmp/k$a.after" | sed -n 's/^> \([^ ]*\) .*/\1/p' | sort | tr '\n' ' ')
  [ "$changed" = ".text._Z4axpyPfPKffi .text._Z4dot3PKfS0_Pfi " ] ||
    { echo "$out"; no "kept sm_$a: sections changed: '$changed' (the two re-encoded .text only expected)"; }
  [ $a = 86 ] || continue # pinned on one architecture (each run is several nvdisasm runs)
  out=$(RS_TEST_MASK_ROWS=NANOSLEEP "$bin" regalloc $c --listing $s --pinned -o "$tmp/kp$a.cubin" 2>&1)
  cmp -s $c "$tmp/kp$a.cubin" || { echo "$out"; no "kept sm_$a: pinned -o with a refused function is not byte-identical"; }
  grep -E '^(lower|kept)' <<<"$out" | cut -c1-160
done
# 6. a call through a pointer on sm_90: EXIT behind LDC R1, BRA.CONV UR, one field printed twice
c=$d/fptrsync.sm_90.cubin s=$d/fptrsync.sm_90.sass
out=$("$bin" lower hazards $c=$s 2>&1)
grep -q '^hazards: 1 listings, 0 hazards' <<<"$out" || { echo "$out"; no "fptrsync sm_90: hazards on ptxas's own listing"; }
if [ -z "${RS_TEST_QUICK:-}" ]; then
  out=$("$bin" regalloc $c --listing $s --free -o "$tmp/fs.cubin" 2>&1); rc=$?
  [ $rc = 0 ] || { echo "$out"; no "fptrsync sm_90: exit $rc (0 expected: every function written)"; }
  grep -q '^lower: .*re-encoded ([0-9]* register fields) in 2 functions' <<<"$out" || no "fptrsync sm_90: not both functions re-encoded"
  grep -q '^crosscheck (nvdisasm): 2 functions, .* 0 mismatches.*: ok' <<<"$out" || no "fptrsync sm_90: crosscheck"
  grep -E '^(lower|probe|kept)' <<<"$out" | cut -c1-160
fi
exit $fail
