/* exec.c - the active-lane (EXEC) role of AMDGPU instructions, as a table, for analysis/simt.c.
 *
 * LLVM lowers structured control flow (SILowerControlFlow) to a few fixed forms:
 *   SI_IF     %saved = COPY $exec, implicit-def $exec; %m = S_AND %saved, %cond; ...;
 *             $exec = S_MOV_B64_term %m; S_CBRANCH_EXECZ %flow-or-endif   (lanes only disabled)
 *   SI_ELSE   %s = S_OR_SAVEEXEC_B64 %saved; $exec = S_XOR_B64_term $exec, %s;
 *             S_CBRANCH_EXECZ %endif                                        (the other lanes)
 *   SI_END_CF $exec = S_OR_B64 $exec, %saved                                (lanes re-enabled)
 *   SI_LOOP   $exec = S_ANDN2_B64_term $exec, %done; S_CBRANCH_EXECNZ %header (lanes disabled)
 * (the _B32 forms on wave32, on $exec_lo). Every other instruction that defines $exec changes the
 * active lanes in a way the SIMT rule does not model (whole-wave mode enters with
 * S_OR_SAVEEXEC_B64 -1, leaves with a plain S_MOV_B64 to $exec; S_WQM; ...): RS_I_EXEC_OTHER,
 * and analysis/simt.c leaves any if/else containing one alone. Cross-lane instructions read
 * registers of other lanes (V_READLANE, DPP, permutes, swizzles: RS_I_CROSSLANE), and some write
 * lanes whatever their EXEC bit (V_WRITELANE, DS_PERMUTE: also RS_I_LANEWRITE); simt.c keeps their
 * registers on the wave's CFG. Matrix instructions (MFMA, WMMA) read every lane's operands:
 * cross-lane too.
 *
 * Scalar lane-mask instructions also get their per-lane meaning (enum rs_maskop, the second
 * table) for analysis/lanemask.c, which follows each lane's bit of EXEC and of the SGPR masks
 * LLVM keeps (an i1 phi lowered to `S_ORN2_B64 %m, $exec`, later `$exec = S_AND $exec, %m`):
 * only wave-sized forms (_B64 on wave64, _B32 on wave32) whose every register operand is a
 * scalar register of the wave's mask width; the analysis takes any other def of such a register
 * as an unknown value. */
#include "mir/exec.h"
#include "target/target.h"
#include <string.h>

static const struct {
  const char *opcode;
  uint32_t flag;
  bool prefix; /* the opcode starts with it */
} table[] = {
    {"S_MOV_B64_term", RS_I_EXEC_NARROW, false},       {"S_MOV_B32_term", RS_I_EXEC_NARROW, false},
    {"S_ANDN2_B64_term", RS_I_EXEC_NARROW, false},     {"S_ANDN2_B32_term", RS_I_EXEC_NARROW, false},
    {"S_ANDN1_B64_term", RS_I_EXEC_NARROW, false},     {"S_AND_B64_term", RS_I_EXEC_NARROW, false},
    {"S_AND_B32_term", RS_I_EXEC_NARROW, false},       {"S_XOR_B64_term", RS_I_EXEC_FLIP, false},
    {"S_XOR_B32_term", RS_I_EXEC_FLIP, false},         {"S_OR_SAVEEXEC_B64", RS_I_EXEC_RESTORE, false},
    {"S_OR_SAVEEXEC_B32", RS_I_EXEC_RESTORE, false},   {"S_OR_B64", RS_I_EXEC_RESTORE, false},
    {"S_OR_B32", RS_I_EXEC_RESTORE, false},            {"S_CBRANCH_EXECZ", RS_I_EXEC_SKIP, false},
    {"V_READLANE_B32", RS_I_CROSSLANE, true},          {"V_WRITELANE_B32", RS_I_CROSSLANE | RS_I_LANEWRITE, true},
    {"V_PERMLANE", RS_I_CROSSLANE, true},              {"DS_BPERMUTE", RS_I_CROSSLANE, true},
    {"DS_PERMUTE", RS_I_CROSSLANE | RS_I_LANEWRITE, true},              {"DS_SWIZZLE", RS_I_CROSSLANE, true},
    {"V_MOV_B32_dpp", RS_I_CROSSLANE, true},           {"V_MOV_B64_dpp", RS_I_CROSSLANE, true},
    {"V_MOV_B64_DPP_PSEUDO", RS_I_CROSSLANE, true},    {"V_SET_INACTIVE", RS_I_CROSSLANE | RS_I_LANEWRITE, true},
    {"WAVE_REDUCE", RS_I_CROSSLANE, true},
    /* matrix instructions read the operands of every lane of the wave */
    {"V_MFMA_", RS_I_CROSSLANE, true},                 {"V_SMFMAC_", RS_I_CROSSLANE, true},
    {"V_WMMA_", RS_I_CROSSLANE, true},                 {"V_SWMMAC_", RS_I_CROSSLANE, true},
};

/* Per lane bit: the wave-sized scalar forms (the width checked in mask_op). */
static const struct {
  const char *opcode;
  uint8_t op;
} masktab[] = {
    {"S_MOV_B64", RS_M_MOV},        {"S_MOV_B32", RS_M_MOV},        {"S_MOV_B64_term", RS_M_MOV},
    {"S_MOV_B32_term", RS_M_MOV},   {"COPY", RS_M_MOV},             {"S_NOT_B64", RS_M_NOT},
    {"S_NOT_B32", RS_M_NOT},        {"S_AND_B64", RS_M_AND},        {"S_AND_B32", RS_M_AND},
    {"S_AND_B64_term", RS_M_AND},   {"S_AND_B32_term", RS_M_AND},   {"S_OR_B64", RS_M_OR},
    {"S_OR_B32", RS_M_OR},          {"S_OR_B64_term", RS_M_OR},     {"S_OR_B32_term", RS_M_OR},
    {"S_XOR_B64", RS_M_XOR},        {"S_XOR_B32", RS_M_XOR},        {"S_XOR_B64_term", RS_M_XOR},
    {"S_XOR_B32_term", RS_M_XOR},   {"S_ANDN2_B64", RS_M_ANDN2},    {"S_ANDN2_B32", RS_M_ANDN2},
    {"S_ANDN2_B64_term", RS_M_ANDN2}, {"S_ANDN2_B32_term", RS_M_ANDN2}, {"S_ORN2_B64", RS_M_ORN2},
    {"S_ORN2_B32", RS_M_ORN2},      {"S_NAND_B64", RS_M_NAND},      {"S_NAND_B32", RS_M_NAND},
    {"S_NOR_B64", RS_M_NOR},        {"S_NOR_B32", RS_M_NOR},        {"S_XNOR_B64", RS_M_XNOR},
    {"S_XNOR_B32", RS_M_XNOR},      {"S_AND_SAVEEXEC_B64", RS_M_AND_SAVEEXEC},
    {"S_AND_SAVEEXEC_B32", RS_M_AND_SAVEEXEC}, {"S_OR_SAVEEXEC_B64", RS_M_OR_SAVEEXEC},
    {"S_OR_SAVEEXEC_B32", RS_M_OR_SAVEEXEC},
};

static bool names_exec(const rs_func *f, const rs_operand *op) {
  const char *t = f->src + op->text_off;
  return op->kind == RS_OP_PREG && ((op->text_len == 5 && !memcmp(t, "$exec", 5)) ||
                                    (op->text_len == 8 && !memcmp(t, "$exec_lo", 8)));
}

static bool is_imm(const rs_operand *op) { return op->kind == RS_OP_IMM; }

/* Units of the wave's lane mask: 2 where the target names a 64-bit "vcc" (wave64), 1 where it
 * has only "vcc_lo" (wave32), 0 if neither. */
static unsigned wave_units(const rs_target *t) {
  unsigned u = 0;
  for (uint32_t i = 0; i < t->nspecials; i++)
    if (!strcmp(t->specials[i].name, "vcc")) return rs_lanes_units(t->specials[i].reg.lanes);
    else if (!strcmp(t->specials[i].name, "vcc_lo")) u = 1;
  return u;
}

/* A register operand the wave's mask fits exactly: `units` units of scalar registers. */
static bool mask_reg(const rs_func *f, const rs_operand *op, unsigned units) {
  const rs_target *t = f->tgt;
  if (op->kind == RS_OP_PREG) {
    if (op->lanes != rs_lanes_full(units) || rs_lanes_units(op->lanes) != units) return false;
    for (unsigned u = 0; u < units; u++) {
      int fi = rs_target_file_of(t, op->reg + u);
      if (fi < 0 || !strcmp(t->files[fi].name, "vgpr") || !strcmp(t->files[fi].name, "agpr")) return false;
    }
    return true;
  }
  if (op->kind != RS_OP_VREG || f->vregs[op->reg].cls < 0) return false;
  const rs_regclass *rc = &t->classes[f->vregs[op->reg].cls];
  for (uint32_t fi = 0; fi < t->nfiles; fi++)
    if ((rc->files >> fi & 1) && (!strcmp(t->files[fi].name, "vgpr") || !strcmp(t->files[fi].name, "agpr"))) return false;
  return rs_lanes_units(op->lanes) == units && op->lanes >> (2 * rs_lanes_first(op->lanes)) == rs_lanes_full(units);
}

static bool is_scc(const rs_func *f, const rs_operand *op) {
  return op->kind == RS_OP_PREG && op->text_len == 4 && !memcmp(f->src + op->text_off, "$scc", 4);
}

static bool imm_is(const rs_func *f, const rs_operand *op, const char *v) {
  size_t n = strlen(v);
  return op->kind == RS_OP_IMM && op->text_len == n && !memcmp(f->src + op->text_off, v, n);
}

/* The per-lane meaning of a wave-sized scalar mask instruction (RS_M_NONE if it has none): its
 * explicit operands are a def and 1 (MOV, NOT, SAVEEXEC) or 2 sources, each $exec of the wave's
 * width or a scalar register of that width (S_MOV also 0 and -1); implicit operands may only be
 * $scc defs (or COPY's `implicit-def $exec` of SI_IF's save, which leaves the lanes alone). */
static uint8_t mask_op(const rs_func *f, const rs_inst *in, const char *opcode) {
  uint8_t op = RS_M_NONE;
  unsigned units = wave_units(f->tgt);
  if (!strncmp(opcode, "V_CMP_", 6)) {
    /* a vector compare (not V_CMPX, which also writes EXEC): its one def, a wave-sized mask */
    uint32_t ndef = 0;
    bool ok = true;
    for (uint32_t k = 0; k < in->nops; k++) {
      const rs_operand *o = &f->ops[in->first_op + k];
      if (o->flags & RS_F_DEF) ndef++, ok &= !(o->flags & RS_F_EXEC) && mask_reg(f, o, units);
    }
    return units && ndef == 1 && ok ? RS_M_VCMP : RS_M_NONE;
  }
  for (size_t t = 0; t < sizeof masktab / sizeof *masktab && !op; t++)
    if (!strcmp(opcode, masktab[t].opcode)) op = masktab[t].op;
  if (!op) return RS_M_NONE;
  unsigned nsrc = op == RS_M_AND || op == RS_M_OR || op == RS_M_XOR || op == RS_M_ANDN2 ||
                                                      op == RS_M_ORN2 || op == RS_M_NAND || op == RS_M_NOR || op == RS_M_XNOR
                                                  ? 2
                                                  : 1;
  const char *w = strstr(opcode, "_B64") ? "_B64" : strstr(opcode, "_B32") ? "_B32" : NULL;
  if (!units || (w && (units == 2) != !strcmp(w, "_B64")) || (!w && strcmp(opcode, "COPY"))) return RS_M_NONE;
  uint32_t k = 0, ndef = 0, nsrcs = 0;
  for (; k < in->nops; k++) {
    const rs_operand *o = &f->ops[in->first_op + k];
    if (o->flags & RS_F_IMPLICIT) {
      bool exec_def = (o->flags & RS_F_DEF) && (o->flags & RS_F_EXEC);
      if ((o->flags & RS_F_DEF) && is_scc(f, o)) continue; /* implicit-def $scc */
      if (exec_def && op == RS_M_MOV && !strcmp(opcode, "COPY")) continue;
      /* SAVEEXEC's own EXEC write (`implicit-def $exec` also for the _B32 form on wave32) */
      if (exec_def && (op == RS_M_AND_SAVEEXEC || op == RS_M_OR_SAVEEXEC)) continue;
      if (!(o->flags & RS_F_DEF) && (o->flags & RS_F_EXEC)) continue; /* implicit $exec read */
      return RS_M_NONE;
    }
    bool okreg = (o->flags & RS_F_EXEC) ? rs_lanes_units(o->lanes) == units : mask_reg(f, o, units);
    if (o->flags & RS_F_DEF) {
      if (ndef++ || k != 0 || !okreg) return RS_M_NONE;
      continue;
    }
    nsrcs++;
    if (okreg) continue;
    if (op == RS_M_MOV && nsrc == 1 && strcmp(opcode, "COPY") && in->nops >= 2) {
      if (imm_is(f, o, "0")) op = RS_M_ZERO;
      else if (imm_is(f, o, "-1")) op = RS_M_ONES;
      else return RS_M_NONE;
      continue;
    }
    return RS_M_NONE;
  }
  if (ndef != 1 || nsrcs != nsrc) return RS_M_NONE;
  return op;
}

void rs_exec_mark(rs_func *f, rs_inst *in, const char *opcode) {
  size_t n = strlen(opcode);
  uint32_t flag = 0;
  for (size_t t = 0; t < sizeof table / sizeof *table && !flag; t++) {
    size_t k = strlen(table[t].opcode);
    if (table[t].prefix ? !strncmp(opcode, table[t].opcode, k) : !strcmp(opcode, table[t].opcode)) flag = table[t].flag;
  }
  if (!flag && n > 4 && (!strcmp(opcode + n - 4, "_dpp") || strstr(opcode, "_dpp_") || strstr(opcode, "_DPP")))
    flag = RS_I_CROSSLANE;
  for (uint32_t k = 0; k < in->nops; k++)
    if (names_exec(f, &f->ops[in->first_op + k])) f->ops[in->first_op + k].flags |= RS_F_EXEC;
  in->flags |= (uint32_t)(!strcmp(opcode, "S_CBRANCH_EXECNZ") ? RS_M_EXECNZ : mask_op(f, in, opcode)) << RS_I_MASKOP_SHIFT;
  /* branches on VCC (its implicit operand): taken when some bit is set / none is */
  if (!strcmp(opcode, "S_CBRANCH_VCCNZ")) in->flags |= RS_I_BR_MASKNZ;
  if (!strcmp(opcode, "S_CBRANCH_VCCZ")) in->flags |= RS_I_BR_MASKZ;
  /* an instruction without operands may come from a function whose ops array is still NULL */
  const rs_operand *ops = in->nops ? &f->ops[in->first_op] : NULL;
  bool writes_exec = false, exec_explicit = false;
  for (uint32_t k = 0; k < in->nops; k++)
    if ((ops[k].flags & RS_F_DEF) && names_exec(f, &ops[k])) {
      writes_exec = true;
      exec_explicit |= !(ops[k].flags & RS_F_IMPLICIT);
    }
  if (flag & (RS_I_EXEC_SKIP | RS_I_CROSSLANE)) {
    in->flags |= flag;
    if ((flag & RS_I_CROSSLANE) && writes_exec) in->flags |= RS_I_EXEC_OTHER;
    return;
  }
  if (!writes_exec) return;
  /* SI_IF's save `%s = COPY $exec, implicit-def $exec` leaves the lanes as they are */
  if ((in->flags & RS_I_COPY) && !exec_explicit) return;
  bool ok = flag != 0;
  /* the forms of the table only: $exec first (NARROW/FLIP/S_OR: the def), no immediate source
   * (whole-wave mode enters with S_OR_SAVEEXEC_B64 -1) */
  for (uint32_t k = 0; k < in->nops && ok; k++)
    if (!(ops[k].flags & RS_F_DEF) && is_imm(&ops[k])) ok = false;
  if (ok && flag != RS_I_EXEC_RESTORE && !(exec_explicit && names_exec(f, &ops[0]))) ok = false;
  if (ok && flag == RS_I_EXEC_RESTORE && !strncmp(opcode, "S_OR_B", 6) &&
      !(names_exec(f, &ops[0]) && in->nops >= 2 && names_exec(f, &ops[1])))
    ok = false; /* SI_END_CF is $exec = S_OR $exec, %saved */
  in->flags |= ok ? flag : RS_I_EXEC_OTHER;
}
