/* carry.h - 64-bit sources whose high half feeds only the high half of the result. */
#ifndef RS_CARRY_H
#define RS_CARRY_H
#include "ir/ir.h"

/* Sets RS_F_CARRY on the 64-bit sources of instruction `in` (parsed, operands in f->ops) that
 * the table names; opcodes outside it, and operand lists of another shape, are left alone. */
void rs_carry_mark(rs_func *f, const rs_inst *in, const char *opcode);

#endif
