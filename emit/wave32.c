/* wave32.c - make wave32 MIR re-readable by llc's MIR parser.
 *
 * In wave32 (gfx1030, gfx1100) LLVM builds an instruction whose descriptor implicitly reads or
 * writes VCC and then narrows that operand to VCC_LO (SIInstrInfo::fixImplicitOperands, e.g. in
 * insertBranch), so its own post-RA MIR (-stop-after=virtregrewriter) prints
 * `S_CBRANCH_VCCNZ %bb.5, implicit $vcc_lo`. The MIR parser (MIParser::verifyImplicitOperands,
 * llc-14 and llc-16 alike) insists on the descriptor's operand, `implicit $vcc`, and refuses the
 * file: "missing implicit register operand 'implicit $vcc'". LLVM cannot re-read its own wave32
 * MIR; measured on every wave32 fixture's final MIR. Spelling the operand as the descriptor does
 * reads back; the MachineVerifier accepts a read of $vcc when a sub-register of it is defined,
 * and the code llc emits from it is the compiler's own (tests/test_emit.c). Only the opcodes of
 * the table are touched: the others name VCC as an explicit operand (e64 forms), which the
 * parser does not check; V_DIV_FMAS_*_e64, an e64 form, reads VCC implicitly and is in it. */
#include "emit/emit.h"
#include "util/util.h"
#include <string.h>

/* Opcodes whose descriptor implicitly uses (or defines) VCC and that LLVM leaves in the post-RA
 * MIR with the wave32 spelling $vcc_lo. The VOP2 carry forms came with real code: CLBlast's
 * 64-bit index arithmetic on gfx1030 (`V_ADDC_U32_e32 ..., implicit-def $vcc_lo, implicit
 * $vcc_lo`: "missing implicit register operand 'implicit-def $vcc'"). VOPC (V_CMP*_e32) define
 * VCC the same way (below). */
static const char *const vcc_implicit_ops[] = {
    "S_CBRANCH_VCCNZ", "S_CBRANCH_VCCZ", "V_ADDC_U32_e32", "V_SUBB_U32_e32", "V_SUBBREV_U32_e32",
    "V_ADD_CO_U32_e32", "V_SUB_CO_U32_e32", "V_SUBREV_CO_U32_e32", "V_CNDMASK_B32_e32",
    /* VOP3 with an implicit VCC read (the division's scale bit from V_DIV_SCALE): MIOpen's
     * batch norm and our halves.cl on gfx1200, `V_DIV_FMAS_F64_e64 ..., implicit $vcc_lo` */
    "V_DIV_FMAS_F32_e64", "V_DIV_FMAS_F64_e64",
};

/* Is the instruction on this line one of the table's? (its opcode is the first word after " = "
 * or, without defs, the line's first word) */
static bool table_op(const char *line, size_t n) {
  const char *eq = NULL;
  for (size_t i = 0; i + 2 < n; i++)
    if (line[i] == ' ' && line[i + 1] == '=' && line[i + 2] == ' ') {
      eq = line + i + 3;
      break;
    }
  const char *op = eq ? eq : line;
  while (op < line + n && *op == ' ') op++;
  /* MI flags before the opcode (`nofpexcept V_DIV_FMAS_F64_e64`): lower-case words, opcodes are not */
  while (op < line + n && *op >= 'a' && *op <= 'z') {
    while (op < line + n && *op != ' ') op++;
    while (op < line + n && *op == ' ') op++;
  }
  size_t w = 0; /* VOPC e32: V_CMP_..._e32, V_CMPX_..._e32 */
  while (op + w < line + n && op[w] != ' ' && op[w] != ',') w++;
  if (w > 9 && !memcmp(op, "V_CMP", 5) && !memcmp(op + w - 4, "_e32", 4)) return true;
  for (size_t k = 0; k < sizeof vcc_implicit_ops / sizeof *vcc_implicit_ops; k++) {
    size_t l = strlen(vcc_implicit_ops[k]);
    if ((size_t)(line + n - op) > l && !memcmp(op, vcc_implicit_ops[k], l) && (op[l] == ' ' || op[l] == ','))
      return true;
  }
  return false;
}

char *rs_emit_wave32_fixup(const char *mir, uint32_t *fixed) {
  size_t n = strlen(mir);
  char *out = rs_xmalloc(n + 1), *o = out;
  uint32_t count = 0;
  const char *p = mir;
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
    if (table_op(p, len)) {
      /* " implicit[-def] [flags] $vcc_lo" -> " implicit[-def] [flags] $vcc" */
      const char *q = p, *end = p + len;
      while (q < end) {
        const char *hit = NULL;
        for (const char *s = q; s + 17 <= end; s++)
          if (!memcmp(s, " implicit ", 10) || (s + 21 <= end && !memcmp(s, " implicit-def ", 14))) {
            const char *r = s + (s[9] == ' ' ? 10 : 14);
            while (r + 7 <= end && (!memcmp(r, "killed ", 7) || !memcmp(r, "undef ", 6) || !memcmp(r, "dead ", 5)))
              r += !memcmp(r, "killed ", 7) ? 7 : !memcmp(r, "undef ", 6) ? 6 : 5;
            if (r + 7 <= end && !memcmp(r, "$vcc_lo", 7) && (r + 7 == end || r[7] == ',' || r[7] == '\n' || r[7] == ' ')) {
              hit = r;
              break;
            }
          }
        if (!hit) {
          memcpy(o, q, (size_t)(end - q));
          o += end - q;
          break;
        }
        memcpy(o, q, (size_t)(hit - q) + 4); /* up to and including "$vcc" */
        o += hit - q + 4;
        q = hit + 7;
        count++;
      }
    } else {
      memcpy(o, p, len);
      o += len;
    }
    p += len;
  }
  *o = 0;
  if (fixed) *fixed = count;
  return out;
}
