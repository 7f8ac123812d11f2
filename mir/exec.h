/* exec.h - the active-lane role of AMDGPU instructions (RS_I_EXEC_*, RS_I_CROSSLANE). */
#ifndef RS_MIR_EXEC_H
#define RS_MIR_EXEC_H
#include "ir/ir.h"

/* Sets the RS_I_EXEC_* / RS_I_CROSSLANE flags of instruction `in` (operands parsed into f->ops)
 * from the table in exec.c; any other instruction that defines $exec gets RS_I_EXEC_OTHER. Marks
 * the operands naming $exec (RS_F_EXEC) and the per-lane mask role (RS_I_MASKOP). */
void rs_exec_mark(rs_func *f, rs_inst *in, const char *opcode);

#endif
