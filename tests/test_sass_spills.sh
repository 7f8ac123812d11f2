#!/usr/bin/env bash
# Spill slots as values of free mode (sass/spills.h, docs/lower.md "Spill slots"), on real ptxas
# output: register-capped variants of our own flash_attn_fwd.cu (tests/fixtures/sass-spills,
# scripts/build-spill-fixtures.sh). Needs nvdisasm (exit 77 without it).
#  1. HD=96 capped at 128 (sm_80): every spill goes (5 stores, 6 loads -> 0, 0), never more R, the
#     re-lift check through the copies passes; --no-spills leaves them (no spills line).
#  2. HD=64 RPT=2 capped at 168 (sm_86, sm_90): every spill goes, at most 168 R.
#  3. HD=128 capped at 128 (sm_80): some slots promoted, lowered into the cubin (MOVs/NOPs written
#     from scratch with their control bits, 0 hazards), nvdisasm reads back what was meant, and
#     nvdisasm's listing of it has exactly the stores and loads the line says are left.
#  4. the check is not blind: a rewritten load reading another register is refused by `lower`
#     (exit 1, no cubin), and so is a rewritten store whose value no load reads back.
set -uo pipefail
cli="$1"
nd="${NVDISASM:-$(command -v nvdisasm || echo /opt/nvidia-cuda-11.8/usr/bin/nvdisasm)}"
[ -x "$nd" ] || { echo "test_sass_spills: SKIPPED: no nvdisasm"; exit 77; }
F=tests/fixtures/sass-spills
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; cat "$t/log" 2>/dev/null | cut -c1-600; exit 1; }
line() { grep '^regalloc(free): flash_attn_fwd' "$t/log"; }

# 1
"$cli" regalloc $F/fa_hd96_r128.sm_80.cubin --free --nvdisasm "$nd" >"$t/log" 2>&1 || fail "hd96: regalloc --free"
line | grep -q "spills: 5 stores, 6 loads -> 0, 0 (frame 8 -> 8 bytes), 2 of 2 promotable slot values in registers, [0-9]* NOPs; 0 accesses not promotable" || fail "hd96: spills"
line | grep -q "contributor sets equivalent ([0-9]* uses), verifier: pass" || fail "hd96: check"
after=$(line | sed -E 's/.*R: 128 -> ([0-9]+) registers.*/\1/')
[ -n "$after" ] && [ "$after" -le 128 ] || fail "hd96: more registers than ptxas ($after)"
"$cli" regalloc $F/fa_hd96_r128.sm_80.cubin --free --no-spills --nvdisasm "$nd" >"$t/log" 2>&1 || fail "hd96: --no-spills"
line | grep -q "spills:" && fail "hd96: --no-spills printed spills"

# 2
for a in 86 90; do
  "$cli" regalloc $F/fa_hd64x2_r168.sm_$a.cubin --free --nvdisasm "$nd" >"$t/log" 2>&1 || fail "hd64x2 sm_$a"
  line | grep -qE "spills: [0-9]+ stores, [0-9]+ loads -> 0, 0 \(frame" || fail "hd64x2 sm_$a: spills left"
  line | grep -qE "R: 168 -> 1([0-5][0-9]|6[0-8]) registers" || fail "hd64x2 sm_$a: registers"
  line | grep -q "contributor sets equivalent" || fail "hd64x2 sm_$a: check"
done

# 3
c=$F/fa_hd128_r128.sm_80.cubin
"$cli" regalloc $c --free -o "$t/n.cubin" --nvdisasm "$nd" >"$t/log" 2>&1 || fail "hd128: lowering"
left=$(line | sed -nE 's/.*spills: 103 stores, 103 loads -> ([0-9]+), ([0-9]+) .*/\1 \2/p')
[ -n "$left" ] && [ "$left" != "103 103" ] || fail "hd128: no slot promoted"
grep -qE "[1-9][0-9]* spill accesses rewritten \([0-9]+ MOV, [0-9]+ NOP; 0 hazards" "$t/log" || fail "hd128: rewritten"
grep -q "crosscheck (nvdisasm): 1 functions, [0-9]* instructions, 0 mismatches.*: ok" "$t/log" || fail "hd128: crosscheck"
"$cli" corpus disasm "$t/n.cubin" -o "$t/n.sass" --nvdisasm "$nd" >/dev/null 2>&1 || fail "hd128: disasm"
[ "$(grep -cE ' STL[ .]' "$t/n.sass") $(grep -cE ' LDL[ .]' "$t/n.sass")" = "$left" ] || fail "hd128: nvdisasm lists other STL/LDL counts than $left"

# 4
"$cli" corpus disasm $c -o "$t/o.sass" --nvdisasm "$nd" >/dev/null 2>&1 || fail "disasm"
"$cli" regalloc "$t/o.sass" --scoreboards $c --free -o "$t/w.sass" >"$t/log" 2>&1 || fail "hd128: listing"
"$cli" lower $c "$t/o.sass" "$t/w.sass" -o "$t/ok.cubin" --nvdisasm "$nd" >"$t/log" 2>&1 || fail "hd128: lower the written listing"
# a promoted load (LDL in o, MOV in w) made to read another register
ln=$(paste -d'|' "$t/o.sass" "$t/w.sass" | grep -nE 'LDL[^|]*\|.* MOV R[0-9]+, R[0-9]+ ;' | head -1 | cut -d: -f1)
[ -n "$ln" ] || fail "no promoted load in the written listing"
src=$(sed -n "${ln}p" "$t/w.sass" | sed -E 's/.*MOV R[0-9]+, R([0-9]+) ;.*/\1/')
sed -E "${ln}s/(MOV R[0-9]+, )R$src ;/\1R$(( (src + 1) % 100 )) ;/" "$t/w.sass" >"$t/bad.sass"
"$cli" lower $c "$t/o.sass" "$t/bad.sass" -o "$t/bad.cubin" --nvdisasm "$nd" >"$t/log" 2>&1
[ $? = 1 ] || fail "a load reading another register was not refused"
grep -q "not a rewrite of" "$t/log" || fail "refusal reason"
[ -e "$t/bad.cubin" ] && fail "a cubin was written"
# a promoted store whose MOV writes another register (its loads then read a stale one)
ln=$(paste -d'|' "$t/o.sass" "$t/w.sass" | grep -nE 'STL[^|]*\|.* MOV R[0-9]+, R' | head -1 | cut -d: -f1)
[ -n "$ln" ] || fail "no promoted store"
dst=$(sed -n "${ln}p" "$t/w.sass" | sed -E 's/.*MOV R([0-9]+), .*/\1/')
sed -E "${ln}s/MOV R$dst, /MOV R$(( (dst + 7) % 100 )), /" "$t/w.sass" >"$t/bad2.sass"
"$cli" lower $c "$t/o.sass" "$t/bad2.sass" -o "$t/bad2.cubin" --nvdisasm "$nd" >"$t/log" 2>&1
[ $? = 1 ] || fail "a store to another register was not refused"
# 5
c=$F/fa_dstat64x2_r168.sm_80.cubin
"$cli" regalloc $c --free -o "$t/d.cubin" --nvdisasm "$nd" >"$t/log" 2>&1 || fail "dstat: lowering"
line | grep -q "spills: 7 stores, 6 loads -> 0, 0 (frame 24 -> 24 bytes), 5 of 5 promotable slot values in registers" || fail "dstat: spills"
line | grep -qE "R: 168 -> 1([0-5][0-9]|6[0-8]) registers" || fail "dstat: registers"
line | grep -q "contributor sets equivalent ([0-9]* uses), verifier: pass" || fail "dstat: check"
grep -q "crosscheck (nvdisasm): 1 functions, [0-9]* instructions, 0 mismatches.*: ok" "$t/log" || fail "dstat: crosscheck"
"$cli" corpus disasm "$t/d.cubin" -o "$t/d.sass" --nvdisasm "$nd" >/dev/null 2>&1 || fail "dstat: disasm"
grep -qE ' (STL|LDL)[ .]' "$t/d.sass" && fail "dstat: nvdisasm still lists STL/LDL"
[ "$(grep -cE 'IMAD.WIDE.U32 R[0-9]+, RZ, RZ, R[0-9Z]+ ;' "$t/d.sass")" -ge 3 ] || fail "dstat: no 64-bit copies read back"
"$cli" corpus disasm $c -o "$t/do.sass" --nvdisasm "$nd" >/dev/null 2>&1 || fail "dstat: disasm orig"
"$cli" regalloc "$t/do.sass" --scoreboards $c --free -o "$t/dw.sass" >"$t/log" 2>&1 || fail "dstat: listing"
grep -qE 'IMAD.WIDE.U32 R[0-9]+, RZ, RZ, R[0-9]+ ;' "$t/dw.sass" || fail "dstat: no pair copy in the written listing"
"$cli" lower $c "$t/do.sass" "$t/dw.sass" -o "$t/dok.cubin" --nvdisasm "$nd" >"$t/log" 2>&1 || fail "dstat: lower the written listing"
ln=$(paste -d'|' "$t/do.sass" "$t/dw.sass" | grep -nE 'LDL[^|]*\|.* IMAD.WIDE.U32 R[0-9]+, RZ, RZ, R[0-9]+ ;' | head -1 | cut -d: -f1)
[ -n "$ln" ] || fail "dstat: no promoted 64-bit load"
src=$(sed -n "${ln}p" "$t/dw.sass" | sed -E 's/.*RZ, RZ, R([0-9]+) ;.*/\1/')
sed -E "${ln}s/(RZ, RZ, )R$src ;/\1R$(( (src + 2) % 160 )) ;/" "$t/dw.sass" >"$t/dbad.sass"
"$cli" lower $c "$t/do.sass" "$t/dbad.sass" -o "$t/dbad.cubin" --nvdisasm "$nd" >"$t/log" 2>&1
[ $? = 1 ] || fail "dstat: a pair copy reading another pair was not refused"
grep -q "not a rewrite of.*reads differ" "$t/log" || fail "dstat: refusal reason"
[ -e "$t/dbad.cubin" ] && fail "dstat: a cubin was written"
# 6 (session 13) sm_90: 64-bit spills of our own fa_dstat at .maxnreg 168 (compute_90 PTX): every
# spill goes, fewer registers, lowered and crosschecked; ptxas's other prologue form on sm_90
# (VIADD R1, R1, 0xfffffff8 as in FlashAttention-2's sm_90 kernels) reads as the same frame; the
# "no room" bound never names a slot value that went into a register.
c=$F/fa_dstat64x2_r168.sm_90.cubin
"$cli" regalloc $c --free -o "$t/d9.cubin" --nvdisasm "$nd" >"$t/log" 2>&1 || fail "dstat sm_90: lowering"
line | grep -q "spills: 13 stores, 11 loads -> 0, 0 (frame 48 -> 48 bytes)" || fail "dstat sm_90: spills"
line | grep -q "slot words: 11 promotable, 11 in registers, 0 of 0 kept have no room" || fail "dstat sm_90: slot words"
line | grep -qE "R: 168 -> 1([0-5][0-9]|6[0-8]) registers" || fail "dstat sm_90: registers"
line | grep -q "contributor sets equivalent ([0-9]* uses), verifier: pass" || fail "dstat sm_90: check"
grep -q "crosscheck (nvdisasm): 1 functions, [0-9]* instructions, 0 mismatches.*: ok" "$t/log" || fail "dstat sm_90: crosscheck"
c=$F/fa_hd64x2_r168.sm_90.cubin
"$cli" corpus disasm $c -o "$t/v.sass" --nvdisasm "$nd" >/dev/null 2>&1 || fail "sm_90: disasm"
grep -q "IADD3 R1, R1, -0x8, RZ ;" "$t/v.sass" || fail "sm_90: prologue"
sed -i -E 's/IADD3 R1, R1, -0x8, RZ ;/VIADD R1, R1, 0xfffffff8 ;/' "$t/v.sass"
"$cli" regalloc "$t/v.sass" --scoreboards $c --free >"$t/log" 2>&1 || fail "sm_90 VIADD prologue: regalloc"
line | grep -q "spills: 6 stores, 6 loads -> 0, 0 (frame 8 -> 8 bytes)" || fail "sm_90 VIADD prologue: frame"
if [ -z "${RS_TEST_QUICK:-}" ]; then
  c=$F/fa_hd128_r128.sm_80.cubin
  "$cli" regalloc $c --free --nvdisasm "$nd" >"$t/log" 2>&1 || fail "hd128: regalloc"
  line | grep -qE "slot words: 49 promotable, ([0-9]+) in registers, 25 of [0-9]+ kept have no room" || fail "hd128: no room"
  c=$F/fa_dstat64x2_r160.sm_80.cubin # slots with room kept by the greedy placement: the joint colouring places them
  "$cli" regalloc $c --free --nvdisasm "$nd" >"$t/log" 2>&1 || fail "dstat r160: regalloc"
  line | grep -q "spills: 25 stores, 20 loads -> 1, 1 " || fail "dstat r160: joint colouring"
  line | grep -q "contributor sets equivalent ([0-9]* uses), verifier: pass" || fail "dstat r160: check"
fi
grep -q "said to have no room are in registers" "$t/log" && fail "a slot value with no room went into a register"
echo "test_sass_spills: ok"
