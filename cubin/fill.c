/* fill.c - encodings nvdisasm 11.8 does not print (sm_90 VIADD/VIMNMX/VIADDMNMX/VIMNMX3) and the
 * hidden descriptor field of .E accesses. Tables, one row per opcode form; every layout was
 * worked out by compiling PTX whose dataflow fixes each field (docs/sass.md, "Calibration").
 *
 * Word 0: bits 0-11 opcode and operand form, 12-14 guard predicate (7 = PT), 15 guard negated,
 * 16-23 Rd, 24-31 Ra, 32-63 the "b" slot (R in 32-39, UR in 32-37 with 63 = negate, or a 32-bit
 * immediate). Word 1: 0-7 the "c" slot R, 8 signed (min/max), 12 .RELU (min/max: the result
 * clamped at 0, compares.cu's max(max(x - y, z), 0)), 23-25 the min/max selector
 * predicate and 26 its negation (PT = min, !PT = max), 27 "a UR operand", 41-63 scheduling
 * control with reuse flags 58 (a), 59 (b slot), 60 (c slot). Operand forms follow the FFMA
 * scheme: 0x2 R,R  0x8 R,imm  0xc R,UR  0x4 R@c,imm@b  0xe R@c,UR@b. */
#include "cubin/disasm.h"
#include <stdio.h>
#include <string.h>

enum slot { S_NONE, S_R, S_UR, S_IMM };

typedef struct {
  uint16_t op;          /* word 0 bits 0-11 */
  uint8_t sm_min;       /* first architecture with this encoding */
  const char *mnem;
  uint8_t minmax;       /* has .U32 (bit 72) and the PT/!PT selector */
  uint8_t ops[3];       /* printed source operands after Ra, in order: which slot kind ... */
  uint8_t at[3];        /* ... and where: 32 (b) or 64 (c) */
  uint8_t nops;
  uint8_t neg_b;        /* bit 63 negates the R or UR in the b slot */
  uint8_t neg_c;        /* word 1 bit 11 negates the R in the c slot when it is added */
  uint64_t w1_fixed;    /* word 1 bits 0-40 outside the decoded fields must equal this */
} form;

#define W1_LOW ((1ull << 41) - 1)

static const form forms[] = {
    /* VIADD Rd, Ra, b */
    {0x836, 90, "VIADD", 0, {S_IMM}, {32}, 1, 0, 0, 0},
    {0xc36, 90, "VIADD", 0, {S_UR}, {32}, 1, 1, 0, 1ull << 27},
    /* VIMNMX Rd, Ra, b, {PT|!PT}: bits 81-86 hold 0x3f (no predicate outputs) */
    {0x248, 90, "VIMNMX", 1, {S_R}, {32}, 1, 0, 0, 0x3full << 17},
    {0x848, 90, "VIMNMX", 1, {S_IMM}, {32}, 1, 0, 0, 0x3full << 17},
    {0xc48, 90, "VIMNMX", 1, {S_UR}, {32}, 1, 0, 0, 0x3full << 17 | 1ull << 27},
    /* VIADDMNMX Rd, Ra, b, c, {PT|!PT}: minmax(Ra + b, c); the added R may be negated */
    {0x246, 90, "VIADDMNMX", 1, {S_R, S_R}, {32, 64}, 2, 1, 0, 0},
    {0x846, 90, "VIADDMNMX", 1, {S_IMM, S_R}, {32, 64}, 2, 0, 0, 0},
    {0xc46, 90, "VIADDMNMX", 1, {S_UR, S_R}, {32, 64}, 2, 1, 0, 1ull << 27},
    {0x446, 90, "VIADDMNMX", 1, {S_R, S_IMM}, {64, 32}, 2, 0, 1, 0},
    {0xe46, 90, "VIADDMNMX", 1, {S_R, S_UR}, {64, 32}, 2, 0, 1, 1ull << 27},
    /* VIMNMX3 Rd, Ra, b, c, {PT|!PT}: minmax(Ra, b, c), the three-input DPX min/max ptxas 13 makes
     * of max(max(x, y), z) on sm_90 (CUDA 12+ nvdisasm names it; 11.8 prints nothing). Fields read
     * off tests/fixtures/sass-real/minmax3.cu: signed/unsigned, min/max, each slot kind. */
    {0x20f, 90, "VIMNMX3", 1, {S_R, S_R}, {32, 64}, 2, 0, 0, 0},
    {0x80f, 90, "VIMNMX3", 1, {S_IMM, S_R}, {32, 64}, 2, 0, 0, 0},
    {0xc0f, 90, "VIMNMX3", 1, {S_UR, S_R}, {32, 64}, 2, 0, 0, 1ull << 27},
};

static int reg(char *b, size_t n, unsigned r, bool reuse) {
  return r == 255 ? snprintf(b, n, "RZ") : snprintf(b, n, "R%u%s", r, reuse ? ".reuse" : "");
}

int rs_sass_fill(unsigned sm, const uint64_t w[2], char *buf, size_t n) {
  unsigned op = (unsigned)(w[0] & 0xfff);
  const form *f = NULL;
  for (size_t i = 0; i < sizeof forms / sizeof *forms; i++)
    if (forms[i].op == op && sm >= forms[i].sm_min) f = &forms[i];
  if (!f) {
    snprintf(buf, n, "encoding %016llx %016llx (opcode 0x%03x) is not one nvdisasm 11.8 drops that we decode",
             (unsigned long long)w[0], (unsigned long long)w[1], op);
    return -1;
  }
  uint64_t w0_used = 0xffffffffull, w1_used = 0; /* opcode, guard, Rd, Ra */
  bool is_signed = true, sel_not = false, relu = false;
  unsigned sel = 7;
  if (f->minmax) {
    is_signed = w[1] >> 8 & 1;
    relu = w[1] >> 12 & 1; /* .RELU: the result clamped at 0 (max(max(x - y, z), 0) in one) */
    sel = (unsigned)(w[1] >> 23 & 7);
    sel_not = w[1] >> 26 & 1;
    w1_used |= 1ull << 8 | 1ull << 12 | 0xfull << 23;
  }
  char ops[3][48];
  for (unsigned k = 0; k < f->nops; k++) {
    bool in_b = f->at[k] == 32;
    unsigned reuse_bit = in_b ? 59 : 60;
    switch (f->ops[k]) {
    case S_R:
      if (in_b) { /* bit 63 negates it as it does a UR there (VIADDMNMX R10, R0, -R20, R21: min(x - y, z)) */
        bool neg = f->neg_b && (w[0] >> 63 & 1);
        reg(ops[k] + neg, sizeof ops[k] - neg, (unsigned)(w[0] >> 32 & 0xff), w[1] >> reuse_bit & 1);
        if (neg) ops[k][0] = '-';
        w0_used |= 0xffull << 32 | (f->neg_b ? 1ull << 63 : 0);
      } else { /* word 1 bit 11 negates the c slot (as IADD3's third source) */
        bool neg = f->neg_c && (w[1] >> 11 & 1);
        reg(ops[k] + neg, sizeof ops[k] - neg, (unsigned)(w[1] & 0xff), w[1] >> reuse_bit & 1);
        if (neg) ops[k][0] = '-';
        w1_used |= 0xff | (f->neg_c ? 1ull << 11 : 0);
      }
      break;
    case S_UR: { /* always the b slot */
      unsigned u = (unsigned)(w[0] >> 32 & 0x3f);
      bool neg = f->neg_b && (w[0] >> 63 & 1);
      if (u == 63) snprintf(ops[k], sizeof ops[k], "%sURZ", neg ? "-" : "");
      else snprintf(ops[k], sizeof ops[k], "%sUR%u", neg ? "-" : "", u);
      w0_used |= 0x3full << 32 | (f->neg_b ? 1ull << 63 : 0);
      break;
    }
    case S_IMM: { /* always the b slot; VIADD prints it unsigned, min/max by signedness */
      uint32_t v = (uint32_t)(w[0] >> 32);
      if (f->minmax && is_signed && (int32_t)v < 0) snprintf(ops[k], sizeof ops[k], "-0x%x", (unsigned)-(int64_t)(int32_t)v);
      else snprintf(ops[k], sizeof ops[k], "0x%x", v);
      w0_used |= 0xffffffffull << 32;
      break;
    }
    }
  }
  if (w[0] & ~w0_used || (w[1] & W1_LOW & ~w1_used) != f->w1_fixed) {
    snprintf(buf, n, "%s encoding %016llx %016llx sets bits we do not decode (word0 0x%llx, word1 0x%llx)", f->mnem,
             (unsigned long long)w[0], (unsigned long long)w[1], (unsigned long long)(w[0] & ~w0_used),
             (unsigned long long)((w[1] & W1_LOW & ~w1_used) ^ f->w1_fixed));
    return -1;
  }
  unsigned g = (unsigned)(w[0] >> 12 & 7), rd = (unsigned)(w[0] >> 16 & 0xff), ra = (unsigned)(w[0] >> 24 & 0xff);
  if (g == 7 && (w[0] >> 15 & 1)) {
    snprintf(buf, n, "%s with guard @!PT (never executes)", f->mnem);
    return -1;
  }
  char guard[8] = "", rds[16], ras[24];
  if (g != 7) snprintf(guard, sizeof guard, "@%sP%u ", w[0] >> 15 & 1 ? "!" : "", g);
  reg(rds, sizeof rds, rd, false);
  reg(ras, sizeof ras, ra, w[1] >> 58 & 1);
  size_t k = (size_t)snprintf(buf, n, "%s%s%s%s %s, %s", guard, f->mnem, relu ? ".RELU" : "",
                              f->minmax && !is_signed ? ".U32" : "", rds, ras);
  for (unsigned i = 0; i < f->nops && k < n; i++) k += (size_t)snprintf(buf + k, n - k, ", %s", ops[i]);
  if (f->minmax && k < n) {
    if (sel == 7) snprintf(buf + k, n - k, ", %sPT", sel_not ? "!" : "");
    else snprintf(buf + k, n - k, ", %sP%u", sel_not ? "!" : "", sel);
  }
  return 0;
}

/* .E accesses and where their descriptor UR sits (sm_80+; sm_75 has no descriptor). */
static const struct {
  const char *base; /* opcode without modifiers */
  uint16_t op;
  uint8_t word, bit;
} descs[] = {
    {"LDG", 0x981, 0, 32}, {"LD", 0x980, 0, 32}, {"STG", 0x986, 1, 0},
    {"ST", 0x985, 1, 0},   {"REDG", 0x98e, 1, 0}, {"RED", 0x98e, 1, 0}, /* 11.8: RED on sm_80-89 */
    {"ATOMG", 0x9a8, 1, 0},
    {"ATOM", 0x98a, 1, 0},  /* generic ATOM.E.* (cooperative groups, cuda::barrier) */
    {"ATOM", 0x9a2, 1, 0},  /* sm_90 ATOM.E.ADD.F16x2.RN (atomicAdd(__half2 *)): -plr reads the pair */
    {"REDG", 0x9a6, 1, 0},  /* sm_90 REDG.E.ADD.F64.RN */
    {"RED", 0x9a6, 1, 0},
    {"LDGSTS", 0xfae, 1, 0}, /* cp.async: -plr marks the pair read (async_copy sm_80/sm_90) */
};
/* .E accesses that read no descriptor: -plr shows the pair live through, not read. A row with
 * w1_clear set matches only when those bits of word 1 are clear: LD.E 0x980 with bit 76 clear is
 * the generic CAS's fallback load [R8] (-plr: R8:R9 read, UR4:UR5 not; every desc[] LD/LDG/STG
 * seen has the bit set). */
static const struct {
  const char *base;
  uint16_t op;
  uint64_t w1_clear;
} no_descs[] = {
    {"ATOMG", 0x3a9, 0}, /* ATOMG.E.CAS R,[R],R,R: a 64-bit address printed without .64 */
    {"ATOM", 0x38b, 0},  /* generic ATOM.E.CAS(.64) P0, R, [R], R, R (MAGMA hemv/symv vbatched) */
    {"ST", 0x385, 0},    /* the CAS's fallback ST.E.64 [R8], R2 (-plr: pair R8 read, UR4:UR5 not) */
    {"LD", 0x980, 1ull << 12},
};
static const char *const desc_ops[] = {"LDG", "LD", "STG", "ST", "RED", "REDG", "ATOM", "ATOMG", "LDGSTS"};

int rs_sass_desc_ur(unsigned sm, const char *base, const uint64_t w[2]) {
  bool access = false;
  for (size_t i = 0; i < sizeof desc_ops / sizeof *desc_ops; i++) access |= !strcmp(base, desc_ops[i]);
  if (sm < 80 || !access) return -2;
  unsigned op = (unsigned)(w[0] & 0xfff);
  for (size_t i = 0; i < sizeof no_descs / sizeof *no_descs; i++)
    if (no_descs[i].op == op && !strcmp(no_descs[i].base, base) && !(w[1] & no_descs[i].w1_clear)) return -2;
  for (size_t i = 0; i < sizeof descs / sizeof *descs; i++)
    if (descs[i].op == op && !strcmp(descs[i].base, base)) return (int)(w[descs[i].word] >> descs[i].bit & 0x3f);
  return -1;
}
