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
 * registers on the wave's CFG. */
#include "mir/exec.h"
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
};

static bool names_exec(const rs_func *f, const rs_operand *op) {
  const char *t = f->src + op->text_off;
  return op->kind == RS_OP_PREG && ((op->text_len == 5 && !memcmp(t, "$exec", 5)) ||
                                    (op->text_len == 8 && !memcmp(t, "$exec_lo", 8)));
}

static bool is_imm(const rs_operand *op) { return op->kind == RS_OP_IMM; }

void rs_exec_mark(const rs_func *f, rs_inst *in, const char *opcode) {
  size_t n = strlen(opcode);
  uint32_t flag = 0;
  for (size_t t = 0; t < sizeof table / sizeof *table && !flag; t++) {
    size_t k = strlen(table[t].opcode);
    if (table[t].prefix ? !strncmp(opcode, table[t].opcode, k) : !strcmp(opcode, table[t].opcode)) flag = table[t].flag;
  }
  if (!flag && n > 4 && (!strcmp(opcode + n - 4, "_dpp") || strstr(opcode, "_dpp_") || strstr(opcode, "_DPP")))
    flag = RS_I_CROSSLANE;
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
