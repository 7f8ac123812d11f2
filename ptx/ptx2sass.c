/* ptx2sass.c - the PTX <-> SASS correspondence, as data: what each instruction form computes,
 * in one small language (ptx/match.h), so that a PTX value and the SASS value ptxas made of it
 * get the same colour. Where ptxas substitutes one form for another, the SASS row says so
 * (`note`); the canonical forms absorb the rest: a shift by k is a multiply by 2^k, a compare
 * is kept up to its negation (ptxas inverts branch conditions), `x+0`, `x*1`, `x&true` are x.
 *
 * A row names the modifiers that change the value; others (.reuse, .FTZ, .rn, .CONSTANT,
 * .SYS, .nc ...) do not matter for matching. An instruction with no row is no guess: its values
 * get colours nothing else has, and match.c lists the opcode. */
#include "ptx/match.h"
#include <stdlib.h>
#include <string.h>

const rs_p2s_row rs_p2s_ptx[] = {
    /* wmma fragments per lane (sem_frag.c: the element -> LDSM/HMMA unit layout ptxas uses) */
    {"wmma.load.a wmma.load.b", 'i', "$0=@frag(wld)", "a fragment as LDSM.16.M88/MT88 units at its base (each lane's offset from SR_LANEID)"},
    {"wmma.load.c", 'f', "$0=@frag(wldc)", "a C fragment as LDG.E.64 pairs at its base (+32 bytes: columns 8-9, +32*ldm: rows 8-15)"},
    {"wmma.mma", 'f', "$0=@frag(wmma)", "m16n16k16 as two HMMA.16816.F32 (sm_80+) or four HMMA.1688.F32 (sm_75)"},
    /* integer arithmetic */
    {"add.s32 add.u32 add.s64 add.u64 add.s16 add.u16 add.cc.u32", 'i', "$0=add($1,$2)", NULL},
    {"sub.s32 sub.u32 sub.s64 sub.u64 sub.s16 sub.u16", 'i', "$0=add($1,ineg($2))", NULL},
    {"mul.lo", 'i', "$0=mul($1,$2)", NULL},
    {"mul.wide", 'i', "$0=mul(ext($1),ext($2))", "both factors extended, so the order ptxas gives them does not matter"},
    {"mad.lo", 'i', "$0=add(mul($1,$2),$3)", NULL},
    {"mul.hi", 'i', "$0=mulhi($1,$2)", NULL},
    {"shl", 'i', "$0=shl($1,$2)", NULL},
    {"shr.s32 shr.s64", 'i', "$0=shrs($1,$2)", NULL},
    {"shr", 'i', "$0=shru($1,$2)", NULL},
    {"and.pred", 'i', "$0=pand($1,$2)", NULL},
    {"or.pred", 'i', "$0=por($1,$2)", NULL},
    {"xor.pred", 'i', "$0=pxor($1,$2)", NULL},
    {"and", 'i', "$0=and($1,$2)", NULL},
    {"or", 'i', "$0=or($1,$2)", NULL},
    {"xor", 'i', "$0=xor($1,$2)", NULL},
    {"not", 'i', "$0=not($1)", NULL},
    {"neg.s32 neg.s64", 'i', "$0=ineg($1)", NULL},
    {"max.s32 max.s64", 'i', "$0=imax($1,$2)", NULL},
    {"min.s32 min.s64", 'i', "$0=imin($1,$2)", NULL},
    {"max.u32 max.u64", 'i', "$0=umax($1,$2)", NULL},
    {"min.u32 min.u64", 'i', "$0=umin($1,$2)", NULL},
    /* floating point */
    {"add.f32", 'f', "$0=fadd($1,$2)", NULL},
    {"sub.f32", 'f', "$0=fadd($1,fneg($2))", NULL},
    {"mul.f32", 'f', "$0=fmul($1,$2)", NULL},
    {"fma.f32 mad.f32", 'f', "$0=ffma($1,$2,$3)", NULL},
    {"neg.f32", 'f', "$0=fneg($1)", NULL},
    {"abs.f32", 'f', "$0=fabs($1)", NULL},
    {"max.f32", 'f', "$0=fmax($1,$2)", NULL},
    {"min.f32", 'f', "$0=fmin($1,$2)", NULL},
    {"add.f64", 'd', "$0=dadd($1,$2)", NULL},
    {"sub.f64", 'd', "$0=dadd($1,fneg($2))", NULL},
    {"mul.f64", 'd', "$0=dmul($1,$2)", NULL},
    {"fma.f64", 'd', "$0=dfma($1,$2,$3)", NULL},
    {"ex2.approx.ftz", 'f', "$0=mufu.ex2($1)", NULL},
    {"rcp.approx.ftz", 'f', "$0=mufu.rcp($1)", NULL},
    {"rsqrt.approx.ftz", 'f', "$0=mufu.rsq($1)", NULL},
    {"sqrt.approx.ftz", 'f', "$0=mufu.sqrt($1)", NULL},
    {"lg2.approx.ftz", 'f', "$0=mufu.lg2($1)", NULL},
    {"sin.approx.ftz", 'f', "$0=mufu.sin($1)", NULL},
    {"cos.approx.ftz", 'f', "$0=mufu.cos($1)", NULL},
    {"ex2.approx.f32", 'f', "$0=mufu.ex2($1)", "without .ftz: MUFU.EX2 inside a denormal fix-up (rs_p2s_sass_mufu)"},
    {"rcp.rn.f32", 'f', "$0=rcp.rn($1)", "MUFU.RCP + a Newton step, or a slow-path call (rs_p2s_sass_mufu)"},
    /* conversions */
    {"cvt.s64.s32 cvt.u64.u32", 'i', "$0=ext($1)", NULL},
    {"cvt.u32.u64 cvt.s32.s64", 'i', "$0=@low($1)",
     "a 64-bit value truncated: SASS reads its low register, no instruction"},
    {"cvt.rn.f32.s32", 'i', "$0=i2f.s($1)", NULL},
    {"cvt.rn.f32.u32", 'i', "$0=i2f.u($1)", NULL},
    {"cvt.rzi.s32.f32", 'f', "$0=f2i.s.trunc($1)", NULL},
    {"cvt.rn.f16.f32", 'f', "$0=f2h($1)", NULL},
    {"cvt.f32.f16", 'f', "$0=h2f($1)", NULL},
    {"cvt.f64.f32", 'f', "$0=f2d($1)", NULL},
    {"cvt.rn.f32.f64", 'd', "$0=d2f($1)", NULL},
    {"cvta.to", 'i', "$0=copy($1)", "an address-space conversion SASS does not need (LDG takes the global address)"},
    /* compare and select */
    {"setp.f32", 'f', "$0=@cmp($1,$2)", NULL},
    {"setp.f64", 'd', "$0=@cmp($1,$2)", NULL},
    {"setp", 'i', "$0=@cmp($1,$2)", NULL},
    {"selp.f32", 'f', "$0=sel($3,$1,$2)", NULL},
    {"selp", 'i', "$0=sel($3,$1,$2)", NULL},
    /* moves */
    {"mov.f32", 'f', "$0=copy($1)", NULL},
    {"mov.f64", 'd', "$0=copy($1)", NULL},
    {"mov", 'i', "$0=copy($1)", NULL},
    /* memory: the value of a load is the load of its address (width from the destination) */
    {"ld.param", 'i', "$0=@param($1)", "kernel parameters: SASS reads constant bank 0 in place"},
    {"ld.global.u8 ld.global.s8 ld.global.b8", 'i', "$0=ld8.g($1)", NULL},
    {"ld.shared.u8 ld.shared.s8 ld.shared.b8", 'i', "$0=ld8.s($1)", NULL},
    {"ld.local.u8 ld.local.s8 ld.local.b8", 'i', "$0=ld8.l($1)", NULL},
    {"ld.u8 ld.s8 ld.b8", 'i', "$0=ld8($1)", NULL},
    /* 16 bits: a half of the 32-bit unit at address & ~3 (ptxas merges 16-bit neighbours too) */
    {"ld.global.u16 ld.global.s16 ld.global.b16 ld.global.f16", 'i', "$0=@half16(ld.g,$1)", NULL},
    {"ld.shared.u16 ld.shared.s16 ld.shared.b16 ld.shared.f16", 'i', "$0=@half16(ld.s,$1)", NULL},
    {"ld.local.u16 ld.local.s16 ld.local.b16 ld.local.f16", 'i', "$0=@half16(ld.l,$1)", NULL},
    {"ld.u16 ld.s16 ld.b16 ld.f16", 'i', "$0=@half16(ld,$1)", NULL},
    /* 32-bit units and wider: one load per unit at address + 4k (ptxas merges neighbours) */
    {"ld.global", 'i', "$0=@units(ld.g,$1)", NULL},
    {"ld.shared", 'i', "$0=@units(ld.s,$1)", NULL},
    {"ld.local", 'i', "$0=@units(ld.l,$1)", NULL},
    {"ld.const", 'i', "$0=ld.c($1)", NULL},
    {"ld", 'i', "$0=@units(ld,$1)", NULL},
    {"shfl.sync.down", 'i', "$0.0=shfl.down($1,$2,$3);$0.1=shflp.down($1,$2,$3)", NULL},
    {"shfl.sync.up", 'i', "$0.0=shfl.up($1,$2,$3);$0.1=shflp.up($1,$2,$3)", NULL},
    {"shfl.sync.bfly", 'i', "$0.0=shfl.bfly($1,$2,$3);$0.1=shflp.bfly($1,$2,$3)", NULL},
    {"shfl.sync.idx", 'i', "$0.0=shfl.idx($1,$2,$3);$0.1=shflp.idx($1,$2,$3)", NULL},
    /* stores define no register, but what and where they store match */
    {"st.global.f32", 'f', "_=st.g($0,$1)", NULL},
    {"st.shared.f32", 'f', "_=st.s($0,$1)", NULL},
    {"st.global", 'i', "_=st.g($0,$1)", NULL},
    {"st.shared", 'i', "_=st.s($0,$1)", NULL},
    {"st.local", 'i', "_=st.l($0,$1)", NULL},
    {"st", 'i', "_=st($0,$1)", NULL},
    /* no value */
    {"bar barrier bra ret exit membar fence red", 'i', "-", NULL},
};
const size_t rs_p2s_nptx = sizeof rs_p2s_ptx / sizeof *rs_p2s_ptx;

const rs_p2s_row rs_p2s_sass[] = {
    {"LDSM.16.M88.4 LDSM.16.MT88.4 LDSM.16.M88.2 LDSM.16.MT88.2", 'i', "$0=@frag(ldsm)", "wmma.load.a/b: one lane's part of a fragment, its address minus the lane's offset"},
    {"HMMA.16816.F32 HMMA.1688.F32", 'f', "$0=@frag(hmma)", "wmma.mma: one half (or one k step) of the m16n16k16 product"},
    /* moves and constants */
    {"MOV", 'i', "$0=copy($1)", NULL},
    {"MOV32I", 'i', "$0=copy($1)", NULL},
    {"UMOV", 'i', "$0=copy($1)", NULL},
    {"IMAD.MOV.U32 IMAD.MOV", 'i', "$0=add(mul($1,$2),$3)", "mov lowered to IMAD (x*0+c)"},
    {"CS2R/2", 'i', "$0=copy($1)", "a 64-bit zero (two constant moves in one)"},
    {"HFMA2.MMA/5", 'h', "$0=@hconst($1,$2,$3,$4)", "a 32-bit constant built as two f16 halves"},
    {"S2R S2UR", 'i', "$0=copy($1)", NULL},
    {"LDC.64 ULDC.64", 'i', "$0=@cbunits($1)",
     "two constant bank words into a register pair: each register its own word (two 32-bit "
     "parameters, c[0x0][0x178] and c[0x0][0x17c]), the pair read together the 64-bit word"},
    {"LDC LDC.64", 'i', "$0=copy($1)", "constant bank read into a register"},
    {"ULDC ULDC.64", 'i', "$0=copy($1)", NULL},
    /* integer arithmetic */
    {"IADD3/4 UIADD3/4", 'i', "$0=add(add($1,$2),$3)", "two adds fused (x+y+z)"},
    {"IADD3/5 UIADD3/5", 'i', "$0=@lo(add(add(@x($2),@x($3)),@x($4)),$1)", "the low half of a 64-bit add (carry out)"},
    {"IADD3.X UIADD3.X IMAD.X", 'i', "$0=@hi()", "the high half of a 64-bit add (carry in)"},
    {"VIADD/3", 'i', "$0=add($1,$2)", NULL},
    {"IMAD.WIDE IMAD.WIDE.U32 UIMAD.WIDE UIMAD.WIDE.U32", 'i', "$0=add(mul(ext($1),ext($2)),$3)",
     "mul.wide + add.s64 fused (a 64-bit address)"},
    {"IMAD.SHL.U32 IMAD.SHL", 'i', "$0=add(mul($1,$2),$3)", "shl lowered to IMAD (x*2^k)"},
    {"IMAD.IADD", 'i', "$0=add(mul($1,$2),$3)", "add lowered to IMAD (x*1+y)"},
    {"IMAD.HI.U32 IMAD.HI", 'i', "$0=@imadhi($1,$2,$3)",
     "mul.hi, or mul.hi + add fused: the addend is the pair Rc:Rc+1 (x*M + (r1 << 32), with Rc = 0 "
     "and Rc+1 = r1: the signed division by a constant), which sass/optable.c reads as one unit; so "
     "an RZ addend is mul.hi, and Rc = 0 with Rc+1 the register of $1 is mul.hi($1,$2) + $1"},
    {"IMAD IMAD.U32 UIMAD", 'i', "$0=add(mul($1,$2),$3)", "mul.lo/mad.lo, or a fused multiply-add of two PTX instructions"},
    {"LEA.HI.X LEA.HI.X.SX32 ULEA.HI.X ULEA.HI.X.SX32", 'i', "$0=@hi()", "the high half of LEA's 64-bit shift-add (below)"},
    {"LEA.HI.SX32/4 ULEA.HI.SX32/4", 'i', "$0=add(shrs($1,@sub32($3)),$2)",
     "shr.s + add fused (the quotient of a signed division by a constant: q + (x >> k))"},
    {"LEA.HI/5 ULEA.HI/5", 'i', "$0=add(shru($1,@sub32($4)),$2)", "shr.u + add fused (the sign fix of a signed division)"},
    {"LEA/4 ULEA/4", 'i', "$0=add(shl($1,$3),$2)", "shl + add fused"},
    {"LEA/5 ULEA/5", 'i', "$0=@lo(@leasx(add(mul(@x($2),@pow2($4)),@w($3)),$2,$3,$4),$1)",
     "mul.wide by 2^k + add.s64 as a shift (the paper's mul.wide -> shift), low half"},
    {"SHF.L.U64.HI USHF.L.U64.HI", 'i', "$0=@hi64(mul(@w($1),@pow2($2)))",
     "shl.b64 (or mul.lo.s64 by 2^k) as two 32-bit shifts: the high half; the low half is the shift "
     "of the same register by the same amount (rs_p2s_sass_pair)"},
    {"SHF.L.U32 USHF.L.U32", 'i', "$0=shl($1,$2)", NULL},
    {"SHF.R.S32.HI USHF.R.S32.HI", 'i', "$0=shrs($3,$2)", NULL},
    {"SHF.R.U32.HI USHF.R.U32.HI", 'i', "$0=shru($3,$2)", NULL},
    {"LOP3.LUT/6 ULOP3.LUT/6", 'i', "$0=@lop3($1,$2,$3,$4)", NULL},
    {"LOP3.LUT/7", 'i', "$0=@cmpz(@lop3($2,$3,$4,$5));$1=@lop3($2,$3,$4,$5)",
     "and/or + setp.ne/eq 0 fused (a predicate result)"},
    {"IMNMX/4", 'i', "$0=@minmax.s($1,$2,$3)", NULL},
    {"VIMNMX/4", 'i', "$0=@minmax.s($1,$2,$3)", NULL},
    {"IMNMX.U32/4 VIMNMX.U32/4", 'i', "$0=@minmax.u($1,$2,$3)", NULL},
    /* floating point */
    {"FADD", 'f', "$0=fadd($1,$2)", NULL},
    {"FMUL", 'f', "$0=fmul($1,$2)", NULL},
    {"FFMA", 'f', "$0=ffma($1,$2,$3)", NULL},
    {"FMNMX", 'f', "$0=@minmax.f($1,$2,$3)", NULL},
    {"DADD", 'd', "$0=dadd($1,$2)", NULL},
    {"DMUL", 'd', "$0=dmul($1,$2)", NULL},
    {"DFMA", 'd', "$0=dfma($1,$2,$3)", NULL},
    {"MUFU.EX2", 'f', "$0=mufu.ex2($1)", NULL},
    {"MUFU.RCP", 'f', "$0=mufu.rcp($1)", NULL},
    {"MUFU.RSQ", 'f', "$0=mufu.rsq($1)", NULL},
    {"MUFU.SQRT", 'f', "$0=mufu.sqrt($1)", NULL},
    {"MUFU.LG2", 'f', "$0=mufu.lg2($1)", NULL},
    {"MUFU.SIN", 'f', "$0=mufu.sin($1)", NULL},
    {"MUFU.COS", 'f', "$0=mufu.cos($1)", NULL},
    {"I2F.U32", 'i', "$0=i2f.u($1)", NULL},
    {"I2F I2F.S32", 'i', "$0=i2f.s($1)", NULL},
    {"F2I.TRUNC.NTZ", 'f', "$0=f2i.s.trunc($1)", NULL},
    {"F2F.F16.F32", 'f', "$0=f2h($1)", NULL},
    {"F2F.F64.F32", 'f', "$0=f2d($1)", NULL},
    {"F2F.F32.F64", 'd', "$0=d2f($1)", NULL},
    {"HADD2.F32", 'f', "$0=@h2f($1,$2)", "cvt.f32.f16 as an f16 add of -0 into f32"},
    /* compare and select: dests P, PT; the combining predicate last */
    {"ISETP.AND", 'i', "$0=pand(@cmp($2,$3),$4)", "setp, or setp + and.pred fused (the combining predicate)"},
    {"ISETP.OR", 'i', "$0=por(@cmp($2,$3),$4)", "setp + or.pred fused"},
    {"ISETP.XOR", 'i', "$0=pxor(@cmp($2,$3),$4)", "setp + xor.pred fused"},
    {"FSETP.AND", 'f', "$0=pand(@cmp($2,$3),$4)", "setp, or setp + and.pred fused"},
    {"FSETP.OR", 'f', "$0=por(@cmp($2,$3),$4)", "setp + or.pred fused"},
    {"FSETP.XOR", 'f', "$0=pxor(@cmp($2,$3),$4)", "setp + xor.pred fused"},
    {"DSETP.AND", 'd', "$0=pand(@cmp($2,$3),$4)", NULL},
    {"DSETP.OR", 'd', "$0=por(@cmp($2,$3),$4)", NULL},
    {"DSETP.XOR", 'd', "$0=pxor(@cmp($2,$3),$4)", NULL},
    {"SEL", 'i', "$0=sel($3,$1,$2)", NULL},
    {"FSEL", 'f', "$0=sel($3,$1,$2)", NULL},
    /* memory */
    {"LDG.U8 LDG.S8", 'i', "$0=ld8.g($1)", NULL},
    {"LDS.U8 LDS.S8", 'i', "$0=ld8.s($1)", NULL},
    {"LDL.U8 LDL.S8", 'i', "$0=ld8.l($1)", NULL},
    {"LD.U8 LD.S8", 'i', "$0=ld8($1)", NULL},
    {"LDG.U16 LDG.S16", 'i', "$0=@half16(ld.g,$1)", NULL},
    {"LDS.U16 LDS.S16", 'i', "$0=@half16(ld.s,$1)", NULL},
    {"LDL.U16 LDL.S16", 'i', "$0=@half16(ld.l,$1)", NULL},
    {"LD.U16 LD.S16", 'i', "$0=@half16(ld,$1)", NULL},
    {"LDG", 'i', "$0=@units(ld.g,$1)", "neighbouring PTX loads merged into one wide load (LDG.E.128)"},
    {"LDS", 'i', "$0=@units(ld.s,$1)", "neighbouring ld.shared merged into LDS.64 / LDS.128"},
    {"LDL", 'i', "$0=@units(ld.l,$1)", NULL},
    {"LD", 'i', "$0=@units(ld,$1)", NULL},
    {"SHFL.DOWN", 'i', "$1=shfl.down($2,$3,$4);$0=shflp.down($2,$3,$4)", NULL},
    {"SHFL.UP", 'i', "$1=shfl.up($2,$3,$4);$0=shflp.up($2,$3,$4)", NULL},
    {"SHFL.BFLY", 'i', "$1=shfl.bfly($2,$3,$4);$0=shflp.bfly($2,$3,$4)", NULL},
    {"SHFL.IDX", 'i', "$1=shfl.idx($2,$3,$4);$0=shflp.idx($2,$3,$4)", NULL},
    {"STG", 'i', "_=st.g($0,$1)", NULL},
    {"STS", 'i', "_=st.s($0,$1)", NULL},
    {"STL", 'i', "_=st.l($0,$1)", NULL},
    {"ST", 'i', "_=st($0,$1)", NULL},
    /* no value */
    {"BAR BRA EXIT RET NOP BSSY BSYNC WARPSYNC MEMBAR RED CALL YIELD DEPBAR ERRBAR CCTL", 'i', "-",
     NULL},
};
const size_t rs_p2s_nsass = sizeof rs_p2s_sass / sizeof *rs_p2s_sass;

/* Rows that replace an instruction's own row when a partner instruction makes it one half of a
 * 64-bit value (sem.c pairs them: same source register with the same reaching defs, same shift). */
const rs_p2s_row rs_p2s_sass_pair[] = {
    {"IMAD.SHL.U32 IMAD.SHL", 'i', "$0=@lo64(mul(@w($1),$2))",
     "the low half of shl.b64 by k (x*2^k), paired with SHF.L.U64.HI of the same register and k"},
    {"SHF.L.U32 USHF.L.U32", 'i', "$0=@lo64(mul(@w($1),@pow2($2)))",
     "the low half of shl.b64 by k, paired with SHF.L.U64.HI of the same register and k"},
};
const size_t rs_p2s_nsass_pair = sizeof rs_p2s_sass_pair / sizeof *rs_p2s_sass_pair;

/* mul.lo.s64 (and mul.lo.s64 + add.s64) as four SASS instructions, found by their shape in
 * ptx/sem_pattern.c: x.lo * y.lo wide, the cross products x.hi * y.lo and x.lo * y.hi, and the high
 * add; @pair(lo,hi) is a 64-bit value from two registers that need not be adjacent, @xhi / @yhi
 * the operands the cross products read as the factors' high halves (0 when there is no such cross
 * product: ptxas knew that half is zero), @pat the pattern's value. */
const rs_p2s_row rs_p2s_sass_mul64[] = {
    {"IMAD.WIDE.U32 UIMAD.WIDE.U32", 'i', "$0=@lo64(add(mul(@pair($1,@xhi),@pair($2,@yhi)),$3))",
     "mul.lo.s64 x, y (+ add.s64 z): x.lo * y.lo (+ z) wide; its low register is the product's low half, "
     "its high register a partial sum"},
    {"IADD3/4 UIADD3/4 IMAD.IADD", 'i', "$0=@hi64(@pat)",
     "the product's high half: the wide product's high register plus the cross products"},
    {"IMAD UIMAD", 'i', "-", "a cross product x.hi * y.lo or x.lo * y.hi: part of the product, no PTX value"},
};
const size_t rs_p2s_nsass_mul64 = sizeof rs_p2s_sass_mul64 / sizeof *rs_p2s_sass_mul64;

/* MUFU with the instructions ptxas wraps around it for the IEEE forms (ptx/sem_pattern.c finds
 * them); the pattern names no opcode, these are the rows it gives each instruction. */
const rs_p2s_row rs_p2s_sass_mufu[] = {
    {"FMUL", 'f', "$0=copy($1)",
     "ex2.approx.f32 without .ftz: @!P0 FMUL x, x, 0.5 before MUFU.EX2 and @!P0 FMUL y, y, y after it "
     "(inputs below -126): ex2(x/2)^2 = ex2(x), so both are the value they read"},
    {"MUFU.RCP", 'f', "$0=@pin(rcp.rn($1))",
     "rcp.rn.f32: MUFU.RCP r, x is an approximation; the Newton step's FFMA (or the slow path's "
     "result) is rcp.rn(x)"},
    {"FFMA FADD MOV", 'f', "$0=@pat", "rcp.rn.f32's result: the last FFMA of the Newton step, or MOV r, R0 after CALL ...rcp_rn_f32_slowpath"},
    {"FFMA FADD", 'f', "-", "rcp.rn.f32's Newton step: e = r*x - 1, n = -e (intermediate, no PTX value)"},
};
const size_t rs_p2s_nsass_mufu = sizeof rs_p2s_sass_mufu / sizeof *rs_p2s_sass_mufu;

/* A fill of a spilled value (ptx/sem_pattern.c): LDL Ry, [R1+k] of a slot one STL [R1+k], Rx
 * writes is a copy of the value the STL read (@spilled). */
const rs_p2s_row rs_p2s_sass_spill[] = {
    {"LDL LDL.LU", 'i', "$0=@spilled", "a register spilled to the stack frame by ptxas (STL) and filled back (LDL)"},
};
const size_t rs_p2s_nsass_spill = sizeof rs_p2s_sass_spill / sizeof *rs_p2s_sass_spill;

/* Does the opcode (base + '.'-separated modifiers) carry the tokens of alternative a, in order?
 * (In order: cvt.u64.u32 is an extension, cvt.u32.u64 a truncation.) The first row that matches
 * wins, so a table lists LEA.HI before LEA. */
static bool alt_matches(const char *a, size_t alen, const char *op) {
  size_t oplen = strlen(op), bl = 0;
  while (bl < oplen && op[bl] != '.') bl++;
  size_t k = 0;
  while (k < alen && a[k] != '.') k++;
  if (k != bl || memcmp(a, op, bl)) return false;
  size_t j = bl; /* where the search for the next token resumes in op */
  while (k < alen) {
    size_t i = ++k;
    while (k < alen && a[k] != '.') k++;
    size_t tl = k - i;
    bool found = false;
    while (j < oplen && !found) {
      size_t s = ++j;
      while (j < oplen && op[j] != '.') j++;
      found = j - s == tl && !memcmp(op + s, a + i, tl);
    }
    if (!found) return false;
  }
  return true;
}

const rs_p2s_row *rs_p2s_find(const rs_p2s_row *t, size_t n, const char *op, uint32_t nops) {
  for (size_t r = 0; r < n; r++) {
    const char *p = t[r].pattern;
    while (*p) {
      while (*p == ' ') p++;
      const char *q = p;
      while (*q && *q != ' ') q++;
      const char *slash = memchr(p, '/', (size_t)(q - p));
      size_t alen = (size_t)((slash ? slash : q) - p);
      bool ok = alen && alt_matches(p, alen, op);
      if (ok && slash && (uint32_t)strtoul(slash + 1, NULL, 10) != nops) ok = false;
      if (ok) return &t[r];
      p = q;
    }
  }
  return NULL;
}

uint32_t rs_p2s_param_base(const rs_target *t) { return !strcmp(t->name, "sm_90") ? 0x210 : 0x160; }
