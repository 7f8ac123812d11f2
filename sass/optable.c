/* optable.c - what every SASS opcode form reads and writes, and how wide each operand is.
 *
 * Data, one row per form (sass.h explains the columns). A mnemonic matches a row when its base
 * and every modifier of the row's form are present and each other modifier is one the row
 * lists as optional; operand counts pick the variant. Anything else is an error naming it:
 * modifiers that change widths (.WIDE, .64, .128, .F64, .x4 ...) are never optional. Widths
 * measured on ptxas 13 output against nvdisasm -plr (shared/NVIDIA-SASS.md). */
#include "sass/sass.h"
#include <stdio.h>
#include <string.h>

/* Modifier sets that do not change what an operand is. */
#define CMP "F LT EQ LE GT NE GE NUM NAN LTU EQU LEU GTU NEU GEU T U32 S32 "
#define BOOL "AND OR XOR EX "
#define FRND "FTZ RN RM RP RZ SAT NTZ "
#define MEMQ "CONSTANT SYS GPU CTA SM STRONG WEAK MMIO VOLATILE PRIVATE EF EL LU EU NA ZFILL LTC64B LTC128B LTC256B U "
#define SUB32 "U8 S8 U16 S16 "
/* 64 and F64 are not here: they make the data operands pairs (rows of their own) */
#define ATOMOP "ADD MIN MAX INC DEC AND OR XOR EXCH SAFE F32 F16x2 BF16x2 FTZ RN S32 U32 "
/* surface accesses: memory order, scope, out-of-bounds mode; reductions: their operation */
#define SURF "STRONG WEAK CTA SM GPU SYS TRAP IGN "
#define SURED "ADD MIN MAX INC DEC AND OR XOR S32 U32 "
/* texture operand variants: [residency P,] results t u, coordinates a [, extras b], handle,
 * geometry [, component mask] (sass.h, texshape.c) */
#define TEXOPS \
  "t u a s2 s1 g|t u a b s2 s1 g|t u a s2 s1 g c|t u a b s2 s1 g c|P t u a s2 s1 g|P t u a b s2 s1 g|P t u a s2 s1 g c|" \
  "P t u a b s2 s1 g c"
/* with the handle in a register (.B, "bindless"; sm_75-89 when ptxas cannot see which texture):
 * no handle operands, the handle is the first register of Rb (texshape.c counts it an extra) */
#define TEXOPS_B "t u a b g|t u a b g c|P t u a b g|P t u a b g c"

#define B RS_SOP_BRANCH
#define X RS_SOP_EXIT
#define R RS_SOP_RET
#define C RS_SOP_CALL
#define D RS_SOP_DESC
#define S RS_SOP_SP
#define K RS_SOP_COPY
#define I RS_SOP_INDIRECT

const rs_sass_op rs_sass_optable[] = {
    /* ---- moves, constants, special registers ---- */
    {"MOV", "", "d1 s1|d1 s1 s1|d1 l", K}, /* MOV R6, `(.nv.unified.texrefDescSize): a symbol's value */
    {"MOV32I", "", "d1 s1", 0},
    {"UMOV", "", "d1 s1|d1 l", K},
    {"S2R", "", "d1 s1", 0},
    {"S2UR", "", "d1 s1", 0},
    {"CS2R", "", "d2 s1", 0},      /* CS2R R4, SRZ writes R4:R5 */
    {"CS2R.32", "", "d1 s1", 0},
    /* sm_90 waterfall loop around a texture/surface handle in a register (R2UR of each half,
     * `@P1 BRA.U.ANY` back): R2UR P0, UR6, R6 also writes P0, set where this thread's R6 is not
     * the value UR6 took; R2UR.OR P0, UR7, R7 ORs the second half's mismatch into it, so it reads
     * P0 too (-plr marks P0 '^' on both; they are always @P1-guarded, so P0 stays live through
     * them and the liveness is the same either way) */
    {"R2UR", "", "d1 s1|d1 d1 s1", 0},
    {"R2UR.OR", "", "x1 d1 s1", 0},
    {"LDC", SUB32 "S32", "d1 s1", 0},
    {"LDC.64", "", "d2 s1", 0},
    {"ULDC", SUB32 "S32", "d1 s1", 0},
    {"ULDC.64", "", "d2 s1", 0},
    {"SEL", "", "d1 s1 s1 s1", 0},
    {"FSEL", "", "d1 s1 s1 s1", 0},
    {"USEL", "", "d1 s1 s1 s1", 0},
    {"PRMT", "F4E B4E RC8 ECL ECR RC16", "d1 s1 s1 s1", 0},
    {"UPRMT", "", "d1 s1 s1 s1", 0},
    {"SHFL", "IDX UP DOWN BFLY", "d1 d1 s1 s1 s1", 0}, /* SHFL.BFLY PT, R3, R2, 0x1, 0x1f */
    {"VOTE", "ANY ALL EQ", "d1 s1|d1 s1 s1|d1 d1 s1 s1", 0}, /* VOTE.ALL P1, P0 */
    {"VOTEU", "ANY ALL EQ", "d1 s1|d1 s1 s1|d1 d1 s1 s1", 0}, /* VOTEU.ALL UP0, P0 */
    /* warp reductions and matches (sm_80+; __reduce_*_sync, __match_any_sync): REDUX.SUM.S32 UR4, R7 */
    {"REDUX", "SUM MIN MAX AND OR XOR S32 U32", "d1 s1", 0},
    {"MATCH.ANY", "", "d1 s1", 0},
    {"MATCH.ANY.U64", "", "d1 s2", 0},      /* MATCH.ANY.U64 R6, R6: a 64-bit key, a 32-bit mask */
    {"MATCH.ALL", "", "d1 s1|d1 d1 s1", 0}, /* MATCH.ALL P0, R3, R2 */
    {"MATCH.ALL.U64", "", "d1 s2|d1 d1 s2", 0},
    {"POPC", "", "d1 s1", 0},
    {"FLO", "U32 S32 SH", "d1 s1|d1 d1 s1", 0},
    {"BREV", "", "d1 s1", 0},
    {"UPOPC", "", "d1 s1", 0},
    {"UFLO", "U32 S32 SH", "d1 s1", 0},
    {"UBREV", "", "d1 s1", 0},
    {"SGXT", "U32 W", "d1 s1 s1", 0},
    {"BMSK", "W", "d1 s1 s1", 0},
    /* P2R Rd, PR, Rb, mask: role p is the predicate file PR read; it reads the P0..P6 whose bits
     * are set in the immediate mask, the last operand (the parser adds those reads). */
    {"P2R", "", "d1 p s1 s1", 0},
    /* R2P PR, Ra[.B1-3], mask: role q is PR written: P_k = bit k (of byte B) of Ra for each bit k
     * of the immediate mask, the other predicates unchanged (the parser adds those writes).
     * ptxas 13 emits it for a mask tested bit by bit (tests/fixtures/sass/r2p: R2P PR, R6.B1, 0x7f). */
    {"R2P", "", "q s1 s1", 0},
    /* the same over the uniform predicate file UPR (UP0-UP6): UP2UR UR41, UPR, URZ, 0x2 saves UP1
     * across a region in ggml's softmax (sm_80); -plr marks all of UP0-UP6 read at it, as at P2R
     * (sass/live.c's RS_PLR_R2P). UR2UP, which restores them, has no row: no instance measured */
    {"UP2UR", "", "d1 p s1 s1", 0},
    {"USGXT", "U32 W", "d1 s1 s1", 0},
    {"UBMSK", "W", "d1 s1 s1", 0},

    /* ---- integer ---- */
    {"IADD3", "", "d1 s1 s1 s1|d1 d1 s1 s1 s1|d1 d1 d1 s1 s1 s1", 0}, /* carry-outs P */
    {"IADD3.X", "", "d1 s1 s1 s1 s1 s1|d1 d1 s1 s1 s1 s1 s1", 0},     /* carry-ins read back */
    {"UIADD3", "", "d1 s1 s1 s1|d1 d1 s1 s1 s1|d1 d1 d1 s1 s1 s1", 0},
    {"UIADD3.X", "", "d1 s1 s1 s1 s1 s1|d1 d1 s1 s1 s1 s1 s1", 0},
    {"VIADD", "", "d1 s1 s1", 0},
    {"VIMNMX", "U32 S32 RELU", "d1 s1 s1 s1", 0},
    {"VIADDMNMX", "U32 S32 RELU", "d1 s1 s1 s1 s1", 0},
    {"VIMNMX3", "U32 S32 RELU", "d1 s1 s1 s1 s1", 0}, /* VIMNMX3 R9, R0, UR6, R7, !PT (sm_90, cubin/fill.c) */
    {"IMAD", "U32 S32 SHL MOV IADD", "d1 s1 s1 s1|d1 d1 s1 s1 s1", 0},
    /* IMAD.HI Rd, Ra, Rb, Rc = hi32(Ra * Rb + Rc+1:Rc): the addend is a pair (ptxas zeroes Rc to
     * add Rc+1 << 32, `MOV R2, RZ ; IMAD.HI.U32 R3, R3, R5, R2` of the 32-bit division); -plr
     * marks Rc+1 read on every IMAD.HI (mad.hi, __umulhi, __mulhi, __mul64hi, 32/64-bit division;
     * sm_75, sm_89) whose Rc+1 is no other operand; parsed widths: tests/test_sass_real.c */
    {"IMAD.HI", "U32 S32", "d1 s1 s1 s2|d1 d1 s1 s1 s2", 0}, /* IMAD.HI.U32 R10, P1, ...: carry-out */
    {"IMAD.X", "U32 S32", "d1 s1 s1 s1 s1", 0},
    {"IMAD.WIDE", "U32 S32", "d2 s1 s1 s2|d2 d1 s1 s1 s2", 0}, /* destination and addend pairs; P carry */
    {"IMAD.WIDE.X", "U32 S32", "d2 s1 s1 s2 s1", 0},
    {"UIMAD", "U32 S32 SHL MOV IADD", "d1 s1 s1 s1", 0}, /* UIMAD.HI never seen: unknown, not guessed */
    {"UIMAD.WIDE", "U32 S32", "d2 s1 s1 s2|d2 d1 s1 s1 s2", 0}, /* UP carry-out as IMAD.WIDE (5 operands) */
    /* UIMAD.X UR4, UR11, UR13, UR5, UP0 (__umul64hi of uniform values; -plr: UR4 written, UR11
     * UR13 UR5 UP0 read; sm_80, issue 42's forms42c.cu) */
    {"UIMAD.X", "U32 S32", "d1 s1 s1 s1 s1", 0},
    {"UIMAD.WIDE.X", "U32 S32", "d2 s1 s1 s2 s1", 0}, /* as IMAD.WIDE.X: not yet seen with -plr */
    {"LEA", "", "d1 s1 s1 s1|d1 d1 s1 s1 s1", 0},
    {"LEA.HI", "SX32", "d1 s1 s1 s1 s1|d1 d1 s1 s1 s1 s1", 0},
    {"LEA.HI.SX32", "", "d1 s1 s1 s1", 0}, /* LEA.HI.SX32 R7, R7, R0, 0x1b: no high-word source */
    {"LEA.HI.X", "SX32", "d1 s1 s1 s1 s1|d1 s1 s1 s1 s1 s1", 0},
    {"LEA.X", "", "d1 s1 s1 s1 s1", 0},
    {"ULEA", "", "d1 s1 s1 s1|d1 d1 s1 s1 s1", 0},
    {"ULEA.HI", "SX32", "d1 s1 s1 s1 s1|d1 d1 s1 s1 s1 s1", 0},
    /* ULEA.HI.SX32 UR5, UR5, 0xffffffff, 0x1b: no high-word source, as LEA.HI.SX32 (MAGMA
     * trsm_small_batched); the 5- and 6-operand forms of the row above stay valid */
    {"ULEA.HI.SX32", "", "d1 s1 s1 s1|d1 s1 s1 s1 s1|d1 d1 s1 s1 s1 s1", 0},
    {"ULEA.HI.X", "SX32", "d1 s1 s1 s1 s1|d1 s1 s1 s1 s1 s1", 0},
    {"SHF", "L R U32 S32 U64 S64 HI W", "d1 s1 s1 s1", 0},
    {"USHF", "L R U32 S32 U64 S64 HI W", "d1 s1 s1 s1", 0},
    /* LOP3.LUT P0, R, ...; .PAND: lop3.and with a predicate result and input (ptxgen, sm_75-90) */
    {"LOP3.LUT", "PAND", "d1 s1 s1 s1 s1 s1|d1 d1 s1 s1 s1 s1 s1", 0},
    {"ULOP3.LUT", "", "d1 s1 s1 s1 s1 s1|d1 d1 s1 s1 s1 s1 s1", 0},
    {"PLOP3.LUT", "", "d1 d1 s1 s1 s1 s1 s1", 0},
    {"UPLOP3.LUT", "", "d1 d1 s1 s1 s1 s1 s1", 0},
    {"ISETP", CMP BOOL, "d1 d1 s1 s1 s1|d1 d1 s1 s1 s1 s1", 0}, /* two predicate results */
    {"UISETP", CMP BOOL, "d1 d1 s1 s1 s1|d1 d1 s1 s1 s1 s1", 0},
    {"IMNMX", "U32 S32", "d1 s1 s1 s1", 0},
    {"IABS", "", "d1 s1", 0},
    /* dot products and sums of absolute differences (__dp4a, __dp2a_lo, __sad, __vabsdiffu4) */
    {"IDP.4A", "U8 S8", "d1 s1 s1 s1", 0},
    {"IDP.2A", "LO HI U16 S16 U8 S8", "d1 s1 s1 s1", 0},
    {"VABSDIFF", "U32 S32", "d1 s1 s1 s1", 0},
    {"VABSDIFF4", "U8 S8 ACC", "d1 s1 s1 s1", 0}, /* .ACC: vabsdiff4.add (ptxgen) */
    {"I2I", SUB32 "SAT S32 U32", "d1 s1", 0}, /* I2I.S8.S32.SAT: cvt.sat.s8.s32 (ptxgen) */

    /* ---- floating point ---- */
    {"FFMA", FRND, "d1 s1 s1 s1", 0},
    {"FMUL", FRND "D2 D4 D8 M2 M4 M8", "d1 s1 s1", 0},
    {"FADD", FRND, "d1 s1 s1", 0},
    {"FMNMX", "FTZ NAN", "d1 s1 s1 s1", 0},
    {"FSETP", CMP BOOL "FTZ", "d1 d1 s1 s1 s1", 0},
    /* FSET.BF.NEU.AND R5, R2, R3, PT: a comparison into a register, 1.0f or 0 ((float)(x != y);
     * MAGMA). Without .BF (all ones) ptxas 13 writes FSETP + SEL: never seen, not listed */
    {"FSET.BF", CMP BOOL "FTZ", "d1 s1 s1 s1", 0},
    {"FCHK", "DIVIDE", "d1 s1 s1", 0},
    {"FRND", FRND "FLOOR CEIL TRUNC", "d1 s1", 0},
    {"FRND.F64", FRND "FLOOR CEIL TRUNC", "d2 s2", 0}, /* cvt.rni/rzi/rmi/rpi.f64.f64 (ptxgen) */
    {"FSWZADD", "NDV", "d1 s1 s1 k|d1 s1 s1 s1", 0}, /* .NDV: texgradcube.cu's derivatives (sm_75-89) */
    {"MUFU", "EX2 LG2 RCP RSQ SIN COS SQRT TANH F16 BF16", "d1 s1", 0}, /* .F16/.BF16: ex2/tanh.approx on halves (ptxgen) */
    {"MUFU.RCP64H", "", "d1 s1", 0},
    {"MUFU.RSQ64H", "", "d1 s1", 0},
    {"DFMA", FRND, "d2 s2 s2 s2", 0}, /* doubles: every operand a pair (a UR source too) */
    {"DMUL", FRND, "d2 s2 s2", 0},
    {"DADD", FRND, "d2 s2 s2", 0},
    {"DSETP", CMP BOOL "MIN MAX", "d1 d1 s2 s2 s1", 0}, /* .MIN/.MAX: min/max.f64 against a constant (ptxgen) */
    {"HADD2", "F32 FTZ SAT F16 BF16 BF16_V2", "d1 s1 s1|d1 s1 s1 s1", 0}, /* HADD2 R7, R6.H0_H0, 1, 1: an immediate pair */
    {"HMUL2", "F32 FTZ SAT F16 BF16 BF16_V2", "d1 s1 s1|d1 s1 s1 s1", 0}, /* HMUL2 R7, R2, 0.25, 0.5: imm pair */
    {"HFMA2", "F32 FTZ SAT MMA RELU BF16_V2", "d1 s1 s1 s1|d1 s1 s1 s1 s1", 0}, /* imm pair: 2 ops */
    {"HMNMX2", "FTZ NAN BF16_V2", "d1 s1 s1 s1", 0},
    {"HSETP2", CMP BOOL "FTZ H_AND BF16_V2", "d1 d1 s1 s1 s1", 0},
    /* HSET2.BF.LE.AND R11, R0, R11, PT: per half 1.0 or 0 (__hle2; -plr: R11 written, R0 R11
     * read); the comparison and the combiner are families (CMP BOOL), not one row per spelling */
    {"HSET2", CMP BOOL "BF FTZ BF16_V2", "d1 s1 s1 s1", 0},
    {"F2F", FRND "F16 F32 BF16 TF32", "d1 s1", 0},
    {"F2F.F64.F32", "", "d2 s1", 0},
    {"F2F.F32.F64", FRND, "d1 s2", 0},
    /* halves from and to doubles (cvt.f16.f64, cvt.bf16.f64, cvt.f64.f16; ptxgen, -lrm count) */
    {"F2F.F16.F64", FRND, "d1 s2", 0},
    {"F2F.BF16.F64", FRND, "d1 s2", 0},
    {"F2F.F64.F16", FRND, "d2 s1", 0},
    /* .MERGE_C: one converted value into the low half, the high half from the third operand */
    {"F2FP", "PACK_AB MERGE_C F16 F32 BF16 RELU SATFINITE RZ", "d1 s1 s1", 0},
    {"F2FP.PACK_B", "TF32 F32 RELU RZ", "d1 s1", 0}, /* cvt.rn/rz.tf32.f32 on sm_90 (ptxgen) */
    /* fp8 pairs (sm_89+): F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C R5, R0, R5, RZ (two floats,
     * merged into the third); .F16.UNPACK_B_MERGE_C R, R, RZ (from a half2) */
    {"F2FP.PACK_AB_MERGE_C", "SATFINITE RELU E4M3 E5M2 F32", "d1 s1 s1 s1", 0},
    {"F2FP.UNPACK_B_MERGE_C", "SATFINITE RELU E4M3 E5M2 F16", "d1 s1 s1", 0},
    /* F2FP.F16.E4M3.UNPACK_B R7, R2: two fp8 of R2 into a half2 (sm_89+, __half2(__nv_fp8x2_e4m3);
     * -plr: R7 written, R2 read) */
    {"F2FP.UNPACK_B", "F16 BF16 E4M3 E5M2 RELU", "d1 s1", 0},
    {"F2I", FRND "TRUNC FLOOR CEIL U32 S32 U16 S16 U8 S8 F16 F32 BF16", "d1 s1", 0},
    {"F2I.F64", FRND "TRUNC FLOOR CEIL U32 S32 U16 S16 U8 S8", "d1 s2", 0},
    {"F2I.S64", FRND "TRUNC FLOOR CEIL F32 F16", "d2 s1", 0},
    {"F2I.U64", FRND "TRUNC FLOOR CEIL F32 F16", "d2 s1", 0},
    {"I2F", FRND "U32 S32 U16 S16 U8 S8 F16 F32 BF16", "d1 s1", 0},
    {"I2F.F64", FRND "U32 S32 U16 S16 U8 S8", "d2 s1", 0},
    {"I2F.S64", FRND "F32 F16", "d1 s2", 0},
    {"I2F.U64", FRND "F32 F16", "d1 s2", 0},
    {"I2F.F64.S64", FRND, "d2 s2", 0},
    {"I2F.F64.U64", FRND, "d2 s2", 0},
    {"F2I.F64.S64", FRND "TRUNC FLOOR CEIL", "d2 s2", 0},
    {"F2I.F64.U64", FRND "TRUNC FLOOR CEIL", "d2 s2", 0},
    {"I2FP.F32", "U32 S32 " FRND, "d1 s1", 0}, /* I2FP.F32.U32.RZ (__uint2float_rz) */
    {"F2IP", "U8 S8 F32 NTZ PACK_B TRUNC", "d1 s1 s1|d1 s1 s1 s1", 0}, /* F2IP.U8.F32.NTZ R0, RZ, R0, RZ: cvt.pack.sat (ptxgen) */
    {"I2IP", "S8 U8 S16 U16 S32 SAT", "d1 s1 s1 s1|d1 s1 s1", 0}, /* I2IP.S8.S32.SAT R5, R0, R5, R4: cvt.pack.sat.s8.s32.b32 (ptxgen) */

    /* ---- tensor cores: D A B C ---- */
    {"HMMA.16816.F32", "BF16", "d4 s4 s2 s4", 0},
    {"HMMA.16816.F16", "", "d2 s4 s2 s2", 0},
    {"HMMA.1688.F32", "BF16", "d4 s2 s1 s4", 0}, /* .BF16: m16n8k8 bf16 (ptxgen) */
    {"HMMA.1688.F16", "", "d2 s2 s1 s2", 0},
    {"HMMA.1688.F32.TF32", "", "d4 s4 s2 s4", 0},
    /* integer MMA: the A and B types (S8 U8, S4 U4) are a family, widths by shape and element size
     * (m16n8k32 8-bit and m16n8k64 4-bit read A 4, B 2; ptxgen, -lrm count) */
    {"IMMA.16832", "S8 U8 SAT", "d4 s4 s2 s4", 0},
    {"IMMA.16864", "S4 U4 SAT", "d4 s4 s2 s4", 0},
    {"IMMA.8816", "S8 U8 SAT", "d2 s1 s1 s2", 0},
    /* 1-bit MMA (mma .b1 .xor/.and .popc): m16n8k256 as IMMA.16864, m8n8k128 as IMMA.8816 */
    {"BMMA.168256", "AND XOR POPC", "d4 s4 s2 s4", 0},
    {"BMMA.88128", "AND XOR POPC", "d2 s1 s1 s2", 0},
    /* measured against -plr (tensor_cluster.cu, sm_80): m16n8k4 tf32 and m16n8k16 s8 read A 2, B 1 */
    {"HMMA.1684.F32.TF32", "", "d4 s2 s1 s4", 0},
    {"IMMA.16816", "S8 U8 SAT", "d4 s2 s1 s4", 0},
    {"DMMA.884", "", "d4 s2 s2 s4", 0},   /* C, D two doubles, A, B one (-plr: DMMA.884 R4, R4, R6, RZ marks R4-R7 x) */
    {"DMMA.8x8x4", "", "d4 s2 s2 s4", 0}, /* sm_90 spelling */

    /* ---- memory: the address register is a pair with .64 (or M); widths by size ---- */
    {"LDG.E", SUB32 MEMQ, "d1 m", D},
    {"LDG.E.64", MEMQ, "d2 m", D},
    {"LDG.E.128", MEMQ, "d4 m", D},
    {"STG.E", SUB32 MEMQ, "m s1", D},
    {"STG.E.64", MEMQ, "m s2", D},
    {"STG.E.128", MEMQ, "m s4", D},
    {"LD.E", SUB32 MEMQ, "d1 m", D},
    {"LD.E.64", MEMQ, "d2 m", D},
    {"LD.E.128", MEMQ, "d4 m", D},
    {"ST.E", SUB32 MEMQ, "m s1", D},
    {"ST.E.64", MEMQ, "m s2", D},
    {"ST.E.128", MEMQ, "m s4", D},
    {"RED.E", ATOMOP MEMQ, "m s1", D},
    {"RED.E.64", ATOMOP MEMQ, "m s2", D},
    {"RED.E.F64", ATOMOP MEMQ, "m s2", D}, /* RED.E.ADD.F64.RN: atomicAdd(double *) */
    /* min/max of signed 64-bit values: .S64 in place of .64 (red/atom.min.s64; ptxgen) */
    {"RED.E.S64", ATOMOP MEMQ, "m s2", D},
    {"REDG.E.S64", ATOMOP MEMQ, "m s2", D},
    {"ATOM.E.S64", ATOMOP MEMQ, "d2 m s2|d1 d2 m s2", D},
    {"ATOMG.E.S64", ATOMOP MEMQ, "d2 m s2|d1 d2 m s2", D},
    {"REDG.E", ATOMOP MEMQ, "m s1", D},
    {"REDG.E.64", ATOMOP MEMQ, "m s2", D},
    {"REDG.E.F64", ATOMOP MEMQ, "m s2", D},
    {"ATOM.E", ATOMOP MEMQ, "d1 m s1|d1 d1 m s1", D},   /* [PT,] R, [addr], R */
    {"ATOM.E.64", ATOMOP MEMQ, "d2 m s2|d1 d2 m s2", D}, /* ATOM.E.ADD.64 P0, R6, [R4], R12 */
    {"ATOM.E.F64", ATOMOP MEMQ, "d2 m s2|d1 d2 m s2", D},
    {"ATOMG.E", ATOMOP MEMQ, "d1 m s1|d1 d1 m s1", D},
    {"ATOMG.E.64", ATOMOP MEMQ, "d2 m s2|d1 d2 m s2", D},
    {"ATOMG.E.F64", ATOMOP MEMQ, "d2 m s2|d1 d2 m s2", D},
    /* ATOMG.E.CAS PT, R10, [R10], R12, R13: compare and swap values in two registers; -plr
     * marks the address a pair (R10:R11, printed without .64) and no descriptor read (fill.c) */
    {"ATOMG.E.CAS", "STRONG GPU SYS SM CTA", "d1 M s1 s1|d1 d1 M s1 s1", 0},
    {"ATOMG.E.CAS.64", "STRONG GPU SYS SM CTA", "d2 M s2 s2|d1 d2 M s2 s2", 0},
    /* generic CAS (MAGMA hemv/symv vbatched: atomicCAS on a generic double *): -plr on sm_75
     * and sm_80 marks P0, R6:R7 written, R4:R5 (address), R8:R9, R10:R11 read; no descriptor */
    {"ATOM.E.CAS", "32 STRONG GPU SYS SM CTA", "d1 M s1 s1|d1 d1 M s1 s1", 0},
    {"ATOM.E.CAS.64", "STRONG GPU SYS SM CTA", "d2 M s2 s2|d1 d2 M s2 s2", 0},
    /* QSPC.E.S P0, RZ, [R4]: is the generic 64-bit address shared (the ATOM.E fallback) */
    {"QSPC.E", "S G L D", "d1 d1 M", 0}, /* .D: isspacep.const? (ptxgen) */
    /* cp.async: LDGSTS.E [Rshared], desc[UR4][Rglobal.64]; the copy size is no register width */
    {"LDGSTS.E", "BYPASS LTC64B LTC128B LTC256B ZFILL 64 128 CONSTANT", "m m|m m s1", D},
    {"LDGDEPBAR", "", "", 0},
    {"ARRIVES.LDGSTSBAR.64", "TRANSCNT", "m", 0},
    {"LDS", SUB32 "U", "d1 m", 0},
    {"LDS.64", "U", "d2 m", 0},
    {"LDS.128", "U", "d4 m", 0},
    {"STS", SUB32, "m s1", 0},
    {"STS.64", "", "m s2", 0},
    {"STS.128", "", "m s4", 0},
    {"LDL", SUB32 MEMQ, "d1 m", 0},
    {"LDL.64", MEMQ, "d2 m", 0},
    {"LDL.128", MEMQ, "d4 m", 0},
    {"STL", SUB32 MEMQ, "m s1", 0},
    {"STL.64", MEMQ, "m s2", 0},
    {"STL.128", MEMQ, "m s4", 0},
    {"ATOMS", ATOMOP, "d1 m s1", 0},
    {"ATOMS.64", ATOMOP, "d2 m s2", 0},
    {"ATOMS.CAS", "", "d1 m s1 s1", 0},
    {"ATOMS.CAS.64", "", "d2 m s2 s2", 0},
    {"ATOMS.CAST.SPIN", "", "d1 m s1 s1", 0},
    {"ATOMS.CAST.SPIN.64", "", "d2 m s2 s2", 0},
    /* the generic (.E) spin compare-and-store of atom.cas.b16 (sm_75-89): ATOM.E.CAST.SPIN PT, R5,
     * [R2+0x100], R4, R5; the address a pair, no descriptor (as ATOM.E.CAS; ptxgen) */
    {"ATOM.E.CAST.SPIN", "", "d1 d1 M s1 s1", 0},
    {"ATOM.E.CAST.SPIN.64", "", "d1 d2 M s2 s2", 0}, /* R10 (pair: .EQ 1 and .EQ RZ), [R3], R8:R9, R10:R11 */
    {"ATOMS.POPC.INC.32", "", "d1 m", 0},        /* ATOMS.POPC.INC.32 RZ, [R2+UR4]: warp-aggregated +1 */
    {"ATOMS.ARRIVE.64", "", "d2 m", 0},          /* mbarrier arrive: the 64-bit token R4:R5 */
    /* mbarrier on sm_90 (cuda::barrier): SYNCS.ARRIVE.TRANS64.A1T0 R8, [UR4], RZ writes the token
     * pair; SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R9 reads its high half */
    {"SYNCS.ARRIVE.TRANS64", "A1T0 A0T1 A1TR A0TX RED OPTOUT", "d2 m s1", 0},
    {"SYNCS.PHASECHK.TRANS64", "TRYWAIT", "d1 m s1", 0},
    {"SYNCS.EXCH.64", "", "d2 m s2", 0},
    {"SYNCS.CCTL.IV", "", "m", 0}, /* mbarrier.inval: [UR6] read (sm_90, -plr) */
    /* stmatrix (sm_90): STSM.16.M88.4 [R0], R4 reads R4-R7 (ptxgen, -plr) */
    {"STSM.16.M88", "", "m s1", 0},
    {"STSM.16.M88.2", "", "m s2", 0},
    {"STSM.16.M88.4", "", "m s4", 0},
    {"STSM.16.MT88", "", "m s1", 0},
    {"STSM.16.MT88.2", "", "m s2", 0},
    {"STSM.16.MT88.4", "", "m s4", 0},
    /* to another CTA of the cluster (sm_90): STAS [R4.64], R2 (st.async), REDAS.ADD [R4.64], R2
     * (red.async); LDGMC.E.ADD.32.STRONG.SYS R9, [R4.64+URZ] (multimem.ld_reduce; ptxgen, -plr) */
    {"STAS", "", "m s1", 0},
    {"STAS.64", "", "m s2", 0},
    {"REDAS", "ADD MIN MAX INC DEC AND OR XOR", "m s1", 0},
    {"LDGMC.E", "ADD MIN MAX AND OR XOR 32 F32 F16x2 BF16x2 RN FTZ STRONG SYS GPU CTA WEAK", "d1 m", 0},
    /* bulk copies (cp.async.bulk, cp.reduce.async.bulk, prefetch; sm_90): UBLKRED.G.S.ADD [UR6],
     * [UR5], UR4 reads UR4-UR7: the global address a UR pair printed without .64 (M), the shared
     * one UR5, the size UR4 (-plr); the same shape for UBLKCP.G.S, UBLKPF.L2 [UR6], UR4 */
    {"UBLKCP.G.S", "", "M m s1", 0},
    /* UBLKCP.S.G [UR8], [UR6], UR4 (to shared, completing on an mbarrier): nvdisasm 11.8 prints
     * no -plr row for it (a hole corpus disasm fills), so its widths come from the code around
     * it: ptxas writes UR8 and UR9 (the shared address, the mbarrier's) and UR6 UR7 (the global
     * pair) right before it for it alone; -lrm counts on both sides agree (ptxgen check). Without
     * this row it would match UBLKCP.G.S's (modifiers match in any order) and miss UR7. */
    {"UBLKCP.S.G", "", "M M s1", 0},
    {"UBLKRED.G.S", "ADD MIN MAX INC DEC AND OR XOR F32 F16 BF16 S32 U32 U64 RN", "M m s1", 0},
    {"UBLKPF.L2", "", "M s1", 0},
    {"UTMACMDFLUSH", "", "", 0}, /* cp.async.bulk.commit_group: no operand */
    {"LDSM.16.M88", "", "d1 m", 0},
    {"LDSM.16.M88.2", "", "d2 m", 0},
    {"LDSM.16.M88.4", "", "d4 m", 0},
    {"LDSM.16.MT88", "", "d1 m", 0},
    {"LDSM.16.MT88.2", "", "d2 m", 0},
    {"LDSM.16.MT88.4", "", "d4 m", 0},

    /* ---- textures (TEX TLD TLD4 TXD TXQ): the widths of t u a b come from the geometry, the
     * component mask and the modifiers (texshape.c); the handle is a UR pair on sm_90 (-plr reads
     * both), two c[0x0] offsets before. TEX.LL P0, R42, R44, R4, R30, UR4, 0x0, 2D: a residency
     * predicate (sparse texture) first. */
    {"TEX", "SCR LL LZ AOFFI DC NDV F16 RN", TEXOPS, 0},
    {"TEX.B", "SCR LL LZ AOFFI DC NDV F16 RN", TEXOPS_B, 0}, /* TEX.B.LL R6, R4, R4, R24, ARRAY_CUBE */
    {"TLD", "SCR LL LZ AOFFI CL MS", TEXOPS, 0},
    {"TLD.B", "SCR LL LZ AOFFI CL MS", TEXOPS_B, 0},
    /* TLD4: ptxas 13 always prints the channel (R G B A); a second .B is the register handle */
    {"TLD4.R", "SCR AOFFI DC", TEXOPS, 0}, {"TLD4.G", "SCR AOFFI DC", TEXOPS, 0},
    {"TLD4.B", "SCR AOFFI DC", TEXOPS, 0}, {"TLD4.A", "SCR AOFFI DC", TEXOPS, 0},
    {"TLD4.R.B", "SCR AOFFI DC", TEXOPS_B, 0}, {"TLD4.G.B", "SCR AOFFI DC", TEXOPS_B, 0},
    {"TLD4.B.B", "SCR AOFFI DC", TEXOPS_B, 0}, {"TLD4.A.B", "SCR AOFFI DC", TEXOPS_B, 0},
    {"TXD", "AOFFI", TEXOPS, 0},
    {"TXD.B", "AOFFI", TEXOPS_B, 0},
    {"TXQ", "", "t u s1 k s2 s1 c", 0}, /* TXQ RZ, R6, R6, TEX_HEADER_DIMENSION, UR4, 0x0, 0x1: Ra the level */
    {"TXQ.B", "", "t u s2 k c", 0},     /* TXQ.B RZ, R0, R2, TEX_HEADER_DIMENSION, 0x1: R2 the level, R3 the handle */

    /* ---- surfaces: [Ra] a tuple of the geometry's coordinates (2D: x, y; 2D_ARRAY and 3D three),
     * data by size; the handle is one UR on sm_90 (-plr), c[0x0] offsets before. SUST.P
     * (formatted) stores four components, two with .RG, one with .R. */
    {"SULD.D.BA.1D", SUB32 SURF, "d1 m1 s1 s1|d1 m1 s1", 0}, {"SULD.D.BA.1D.64", SURF, "d2 m1 s1 s1|d2 m1 s1", 0},
    {"SULD.D.BA.1D.128", SURF, "d4 m1 s1 s1|d4 m1 s1", 0}, {"SULD.D.BA.1D_ARRAY", SUB32 SURF, "d1 m2 s1 s1|d1 m2 s1", 0},
    {"SULD.D.BA.1D_ARRAY.64", SURF, "d2 m2 s1 s1|d2 m2 s1", 0}, {"SULD.D.BA.1D_ARRAY.128", SURF, "d4 m2 s1 s1|d4 m2 s1", 0},
    {"SULD.D.BA.2D", SUB32 SURF, "d1 m2 s1 s1|d1 m2 s1", 0}, {"SULD.D.BA.2D.64", SURF, "d2 m2 s1 s1|d2 m2 s1", 0},
    {"SULD.D.BA.2D.128", SURF, "d4 m2 s1 s1|d4 m2 s1", 0}, {"SULD.D.BA.2D_ARRAY", SUB32 SURF, "d1 m3 s1 s1|d1 m3 s1", 0},
    {"SULD.D.BA.2D_ARRAY.64", SURF, "d2 m3 s1 s1|d2 m3 s1", 0}, {"SULD.D.BA.2D_ARRAY.128", SURF, "d4 m3 s1 s1|d4 m3 s1", 0},
    {"SULD.D.BA.3D", SUB32 SURF, "d1 m3 s1 s1|d1 m3 s1", 0}, {"SULD.D.BA.3D.64", SURF, "d2 m3 s1 s1|d2 m3 s1", 0},
    {"SULD.D.BA.3D.128", SURF, "d4 m3 s1 s1|d4 m3 s1", 0}, {"SUST.D.BA.1D", SUB32 SURF, "m1 s1 s1 s1|m1 s1 s1", 0},
    {"SUST.D.BA.1D.64", SURF, "m1 s2 s1 s1|m1 s2 s1", 0}, {"SUST.D.BA.1D.128", SURF, "m1 s4 s1 s1|m1 s4 s1", 0},
    {"SUST.D.BA.1D_ARRAY", SUB32 SURF, "m2 s1 s1 s1|m2 s1 s1", 0}, {"SUST.D.BA.1D_ARRAY.64", SURF, "m2 s2 s1 s1|m2 s2 s1", 0},
    {"SUST.D.BA.1D_ARRAY.128", SURF, "m2 s4 s1 s1|m2 s4 s1", 0}, {"SUST.D.BA.2D", SUB32 SURF, "m2 s1 s1 s1|m2 s1 s1", 0},
    {"SUST.D.BA.2D.64", SURF, "m2 s2 s1 s1|m2 s2 s1", 0}, {"SUST.D.BA.2D.128", SURF, "m2 s4 s1 s1|m2 s4 s1", 0},
    {"SUST.D.BA.2D_ARRAY", SUB32 SURF, "m3 s1 s1 s1|m3 s1 s1", 0}, {"SUST.D.BA.2D_ARRAY.64", SURF, "m3 s2 s1 s1|m3 s2 s1", 0},
    {"SUST.D.BA.2D_ARRAY.128", SURF, "m3 s4 s1 s1|m3 s4 s1", 0}, {"SUST.D.BA.3D", SUB32 SURF, "m3 s1 s1 s1|m3 s1 s1", 0},
    {"SUST.D.BA.3D.64", SURF, "m3 s2 s1 s1|m3 s2 s1", 0}, {"SUST.D.BA.3D.128", SURF, "m3 s4 s1 s1|m3 s4 s1", 0},
    {"SUST.P.1D", SURF, "m1 s4 s1 s1|m1 s4 s1", 0}, {"SUST.P.1D.RG", SURF, "m1 s2 s1 s1|m1 s2 s1", 0},
    {"SUST.P.1D.R", SURF, "m1 s1 s1 s1|m1 s1 s1", 0}, {"SUST.P.1D_ARRAY", SURF, "m2 s4 s1 s1|m2 s4 s1", 0},
    {"SUST.P.1D_ARRAY.RG", SURF, "m2 s2 s1 s1|m2 s2 s1", 0}, {"SUST.P.1D_ARRAY.R", SURF, "m2 s1 s1 s1|m2 s1 s1", 0},
    {"SUST.P.2D", SURF, "m2 s4 s1 s1|m2 s4 s1", 0}, {"SUST.P.2D.RG", SURF, "m2 s2 s1 s1|m2 s2 s1", 0},
    {"SUST.P.2D.R", SURF, "m2 s1 s1 s1|m2 s1 s1", 0}, {"SUST.P.2D_ARRAY", SURF, "m3 s4 s1 s1|m3 s4 s1", 0},
    {"SUST.P.2D_ARRAY.RG", SURF, "m3 s2 s1 s1|m3 s2 s1", 0}, {"SUST.P.2D_ARRAY.R", SURF, "m3 s1 s1 s1|m3 s1 s1", 0},
    {"SUST.P.3D", SURF, "m3 s4 s1 s1|m3 s4 s1", 0}, {"SUST.P.3D.RG", SURF, "m3 s2 s1 s1|m3 s2 s1", 0},
    {"SUST.P.3D.R", SURF, "m3 s1 s1 s1|m3 s1 s1", 0}, {"SURED.D.BA.1D", SURF SURED, "m1 s1 s1 s1|m1 s1 s1", 0},
    {"SURED.D.BA.1D.U64", SURF SURED, "m1 s2 s1 s1|m1 s2 s1", 0},
    {"SURED.D.BA.1D.MIN.S64", SURF, "m1 s2 s1 s1|m1 s2 s1", 0}, /* sured.b.min.s64: the only signed 64-bit one */ {"SURED.D.1D", SURF SURED, "m1 s1 s1 s1|m1 s1 s1", 0},
    {"SURED.D.BA.1D_ARRAY", SURF SURED, "m2 s1 s1 s1|m2 s1 s1", 0}, {"SURED.D.BA.1D_ARRAY.U64", SURF SURED, "m2 s2 s1 s1|m2 s2 s1", 0},
    {"SURED.D.1D_ARRAY", SURF SURED, "m2 s1 s1 s1|m2 s1 s1", 0}, {"SURED.D.BA.2D", SURF SURED, "m2 s1 s1 s1|m2 s1 s1", 0},
    {"SURED.D.BA.2D.U64", SURF SURED, "m2 s2 s1 s1|m2 s2 s1", 0}, {"SURED.D.2D", SURF SURED, "m2 s1 s1 s1|m2 s1 s1", 0},
    {"SURED.D.BA.2D_ARRAY", SURF SURED, "m3 s1 s1 s1|m3 s1 s1", 0}, {"SURED.D.BA.2D_ARRAY.U64", SURF SURED, "m3 s2 s1 s1|m3 s2 s1", 0},
    {"SURED.D.2D_ARRAY", SURF SURED, "m3 s1 s1 s1|m3 s1 s1", 0}, {"SURED.D.BA.3D", SURF SURED, "m3 s1 s1 s1|m3 s1 s1", 0},
    {"SURED.D.BA.3D.U64", SURF SURED, "m3 s2 s1 s1|m3 s2 s1", 0}, {"SURED.D.3D", SURF SURED, "m3 s1 s1 s1|m3 s1 s1", 0},

    /* ---- barriers and synchronisation (no register written) ---- */
    {"BAR", "SYNC ARV RED POPC AND OR DEFER_BLOCKING ALL", "s1|s1 s1", 0},
    {"MEMBAR", "SC CTA GPU SYS ALL", "", 0},
    {"DEPBAR", "LE", "s1 s1|s1 s1 s1", 0}, /* DEPBAR.LE SB0, 0x1[, {1}] */
    {"ERRBAR", "", "", 0},
    {"CGAERRBAR", "", "", 0},
    {"UCGABAR_ARV", "", "", 0}, /* thread-block cluster barrier (cluster.sync(), sm_90) */
    {"UCGABAR_WAIT", "", "", 0},
    {"FENCE.VIEW.ASYNC", "S G T", "", 0},
    {"CCTL", "IVALL E", "", 0},
    /* prefetch.L1/L2 [a], discard/applypriority.L2: CCTL.E.PF1 [R2+0x100] (a pair without .64, as
     * the .E accesses), CCTLL.PF1 [R0] a local address (ptxgen) */
    {"CCTL.E", "PF1 PF2 DML2 RML2", "m", D},
    {"CCTLL", "PF1 PF2", "m", 0},
    /* instructions with no register operand (programmatic dependent launch, sm_90:
     * cudaGridDependencySynchronize / cudaTriggerProgrammaticLaunchCompletion): no row needed
     * beyond their control-flow role, none */
    {"ACQBULK", "", "", 0},
    {"PREEXIT", "", "", 0},
    /* B2R.RESULT R0 (__syncthreads_count's result) / B2R.RESULT RZ, P0 (__syncthreads_or's):
     * -plr marks R0, P0 written */
    {"B2R.RESULT", "", "d1|d1 d1", 0},
    /* ELECT P0, UR4, PT: elect.sync (sm_90) writes the predicate and the leader's lane in UR4,
     * reads the member mask (-plr: P0, UR4 written) */
    {"ELECT", "", "d1 d1 s1", 0},
    /* MOVM.16.MT88 R7, R2: movmatrix.sync.aligned.m8n8.trans.b16 (-plr: R7 written, R2 read) */
    {"MOVM.16.MT88", "", "d1 s1", 0},
    {"NOP", "", "", 0},
    {"YIELD", "", "", 0},
    {"NANOSLEEP", "WARP", "s1", 0},
    {"WARPSYNC", "", "s1", 0},
    {"WARPSYNC.ALL", "", "", 0},
    {"WARPSYNC.EXCLUSIVE", "", "s1", 0}, /* cg::tiled_partition sync (sm_80+; -plr reads its mask) */
    /* WARPSYNC.COLLECTIVE R16, `(.L_x_2): the collective fallback of BRA.DIV code; the label
     * follows its ENDCOLLECTIVE. Modelled as a local call: taken or falls through. */
    {"WARPSYNC.COLLECTIVE", "", "s1 l", C},
    /* the same with the whole warp's mask (no register): cg::this_thread_block() sync in CUDA
     * samples' simpleCooperativeGroups/simpleAWBarrier sm_90, measured as its sibling (pinned
     * identical, -plr rows equal with RS_PLR_COLLECTIVE) */
    {"WARPSYNC.COLLECTIVE.ALL", "", "l", C},
    {"ENDCOLLECTIVE", "", "", 0},

    /* ---- control flow; convergence barriers B0-B15 ---- */
    /* @P1 BRA.U.ANY `(.L_x_44): the warp branches when any thread's P1 holds (the sm_90
     * waterfall loop's back edge): taken or falls through, as a guarded BRA */
    {"BRA", "U ANY", "l|s1 l", B},
    /* BRA.DIV UR5, `(.L_x_1) (ptxas 13 for sm_75 also writes BRA.DIV `(.L_x_1), no mask): to the
     * collective fallback only when the warp has diverged, so it falls through even unguarded (as
     * a local call does) */
    {"BRA.DIV", "U", "l|s1 l", C},
    /* BRA.CONV [~URZ,] `(.L_x_1): taken only when the warp is converged (the fast SHFL); else it
     * falls through to the slow path (the CALL of $__internal_..._shflsync_up_p). As BRA.DIV. */
    {"BRA.CONV", "U", "l|s1 l", C},
    /* BRX R4 -0x170 (*"BRANCH_TARGETS ..."*): ptxas's jump table for a switch; R4:R5 is the
     * 64-bit entry (-plr reads both), the offset an immediate; sass_parse.c reads the targets */
    {"BRX", "", "s1 l|s1|s2 s1", I},
    {"JMX", "", "s1 l|s1", I},
    {"EXIT", "", "|s1", X | S}, /* EXIT !P2: also reads a predicate (MAGMA, ptxas 13) */
    {"RET.REL.NODEC", "", "s2 l", R | S}, /* RET.REL.NODEC R2 `(kernel): returns through R2:R3 */
    {"RET.ABS.NODEC", "", "s2 l", R | S},
    /* CALL.REL.NOINC R14 `(kernel): through a function pointer, R14:R15 (LDC.64 of the table;
     * -plr reads both) relative to the kernel's start, which the label names; not a target:
     * sass_parse.c gives it every subroutine whose address could be taken as callee */
    {"CALL.REL.NOINC", "", "l|s2 l", C | S},
    /* CALL.ABS.NOINC R8: to an external function (vprintf) at the address in R8:R9, after LEPC
     * R2 (the PC, a pair) set up the return address; its ABI (arguments, clobbers) is not
     * modelled: regalloc --free keeps ptxas's colouring for such a function */
    {"CALL.ABS.NOINC", "", "l|s2", C | S},
    {"LEPC", "", "d2|d2 l", 0}, /* LEPC R20, `(.L_x_15): that label's address */
    {"BSSY", "", "d1 l", 0},   /* BSSY B0, `(.L_x_3): B0 holds the reconvergence state */
    {"BSYNC", "", "s1", 0},
    {"BREAK", "", "s1|s1 s1", 0}, /* BREAK [!P0,] B1 */
    {"BMOV.32.CLEAR", "", "d1 x1", 0}, /* BMOV.32.CLEAR RZ, B0: reads B0 and clears it */
    /* BMOV.32 B15, MACTIVE saves the warp's active mask, BMOV.32[.PQUAD] MACTIVE, B15 restores it
     * (MACTIVE is no register: sass_parse.c) */
    {"BMOV.32", "PQUAD", "d1 s1", 0},
    {"BPT.TRAP", "", "s1", 0},
};
const size_t rs_sass_noptable = sizeof rs_sass_optable / sizeof *rs_sass_optable;

#undef B
#undef X
#undef R
#undef C
#undef D
#undef S
#undef K
#undef I

/* Is the modifier m[0..n) a word of the space-separated list? */
static bool in_list(const char *list, const char *m, size_t n) {
  for (const char *p = list; *p;) {
    while (*p == ' ') p++;
    const char *q = p;
    while (*q && *q != ' ') q++;
    if ((size_t)(q - p) == n && n && !memcmp(p, m, n)) return true;
    p = q;
  }
  return false;
}

/* Modifiers of a mnemonic: the words after the first '.'. */
typedef struct {
  const char *s[24];
  size_t n[24];
  uint32_t count;
} mods;

static bool split(const char *mn, size_t len, size_t *base, mods *md) {
  size_t i = 0;
  while (i < len && mn[i] != '.') i++;
  *base = i;
  md->count = 0;
  while (i < len) {
    size_t j = ++i;
    while (i < len && mn[i] != '.') i++;
    if (md->count == 24 || i == j) return false;
    md->s[md->count] = mn + j;
    md->n[md->count++] = i - j;
  }
  return true;
}

/* Does the mnemonic match the row? Each form modifier must be present (used once), every other
 * modifier optional. Returns twice the number of form modifiers (more = more specific), plus one
 * when they appear in the row's order: F2F.F32.F64 (to F32 from F64) also has the modifiers of
 * F2F.F64.F32, and only their order tells the widths apart. -1 if no match. */
static int match(const rs_sass_op *r, const char *mn, size_t base, const mods *md) {
  mods fm;
  size_t fb;
  if (!split(r->form, strlen(r->form), &fb, &fm)) return -1;
  if (fb != base || memcmp(r->form, mn, base)) return -1;
  bool used[24] = {false}, ordered = true;
  uint32_t last = 0;
  for (uint32_t k = 0; k < fm.count; k++) {
    bool found = false;
    for (uint32_t j = 0; j < md->count && !found; j++)
      if (!used[j] && md->n[j] == fm.n[k] && !memcmp(md->s[j], fm.s[k], fm.n[k])) {
        used[j] = found = true;
        if (k && j < last) ordered = false;
        last = j;
      }
    if (!found) return -1;
  }
  for (uint32_t j = 0; j < md->count; j++)
    if (!used[j] && !in_list(r->optional, md->s[j], md->n[j])) return -1;
  return 2 * (int)fm.count + ordered;
}

/* Number of roles in one variant [p, q). */
static uint32_t count_roles(const char *p, const char *q) {
  uint32_t n = 0;
  bool in = false;
  for (; p < q; p++) {
    if (*p != ' ' && !in) n++;
    in = *p != ' ';
  }
  return n;
}

const rs_sass_op *rs_sass_lookup(const char *mn, size_t n, uint32_t nops, const char **variant, char *why,
                                 size_t whylen) {
  size_t base;
  mods md;
  if (!split(mn, n, &base, &md)) {
    snprintf(why, whylen, "malformed opcode '%.*s'", (int)(n > 60 ? 60 : n), mn);
    return NULL;
  }
  const rs_sass_op *best = NULL;
  int bestk = -1;
  bool known_base = false;
  for (size_t i = 0; i < rs_sass_noptable; i++) {
    const rs_sass_op *r = &rs_sass_optable[i];
    size_t fb = strcspn(r->form, ".");
    if (fb != base || memcmp(r->form, mn, base)) continue; /* another opcode: skip the split */
    known_base = true;
    int k = match(r, mn, base, &md);
    if (k > bestk) bestk = k, best = r;
  }
  if (!best) {
    if (known_base)
      snprintf(why, whylen, "unknown form '%.*s' of opcode %.*s (not in sass/optable.c)", (int)(n > 60 ? 60 : n), mn,
               (int)(base > 30 ? 30 : base), mn);
    else
      snprintf(why, whylen, "unknown opcode '%.*s' (not in sass/optable.c)", (int)(n > 60 ? 60 : n), mn);
    return NULL;
  }
  for (const char *p = best->ops;;) {
    const char *q = strchr(p, '|');
    if (!q) q = p + strlen(p);
    if (count_roles(p, q) == nops) {
      *variant = p;
      return best;
    }
    if (!*q) break;
    p = q + 1;
  }
  snprintf(why, whylen, "%.*s with %u operands is not a form sass/optable.c knows (%s)", (int)(n > 60 ? 60 : n), mn,
           nops, best->ops);
  return NULL;
}
