/* vop3p.h - which 32-bit registers of a 64-bit source a gfx90a packed instruction reads. */
#ifndef RS_VOP3P_H
#define RS_VOP3P_H
#include "ir/ir.h"

/* Sets `unread` on the source operands of instruction `in` (already parsed, operands in f->ops)
 * whose op_sel/op_sel_hi modifiers leave one 32-bit half unread. Opcodes outside the table, and
 * any operand list of an unexpected shape, are left alone (every lane read). */
void rs_vop3p_read_lanes(rs_func *f, const rs_inst *in, const char *opcode);

#endif
