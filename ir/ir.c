/* ir.c - IR construction helpers, module and function lifetime, CFG completion. */
#include "ir/ir.h"
#include <stdlib.h>
#include <string.h>

void rs_module_free(rs_module *m) {
  if (!m) return;
  for (uint32_t i = 0; i < m->nfuncs; i++) rs_func_free(m->funcs[i]);
  free(m->funcs);
  for (uint32_t i = 0; i < m->nrefused; i++) {
    rs_refusal *r = &m->refused[i];
    free(r->func), free(r->form), free(r->shape), free(r->why);
  }
  free(m->refused);
  free(m->text);
  free(m->path);
  free(m);
}

void rs_module_refuse(rs_module *m, const char *func, uint32_t line, uint32_t addr, const char *form,
                      const char *shape, const char *why) {
  rs_refusal r;
  r.func = rs_xstrndup(func ? func : "?", strlen(func ? func : "?"));
  r.line = line;
  r.addr = addr;
  r.form = rs_xstrndup(form ? form : "", strlen(form ? form : ""));
  r.shape = rs_xstrndup(shape ? shape : "", strlen(shape ? shape : ""));
  r.why = rs_xstrndup(why ? why : "", strlen(why ? why : ""));
  RS_PUSH(m->refused, m->nrefused, m->caprefused, r);
}

void rs_module_drop_func(rs_module *m, uint32_t k) {
  if (k >= m->nfuncs) return;
  rs_func_free(m->funcs[k]);
  memmove(m->funcs + k, m->funcs + k + 1, sizeof *m->funcs * (m->nfuncs - k - 1));
  m->nfuncs--;
}

rs_func *rs_func_new(rs_module *m, const char *name, size_t n, uint32_t line) {
  rs_func *f = rs_xcalloc(1, sizeof *f);
  f->name = rs_xstrndup(name, n);
  f->tgt = m->tgt;
  f->kind = m->kind;
  f->src = m->text;
  f->path = m->path;
  f->line = line;
  RS_PUSH(m->funcs, m->nfuncs, m->capfuncs, f);
  return f;
}

void rs_func_free(rs_func *f) {
  if (!f) return;
  free(f->name);
  for (uint32_t i = 0; i < f->nvregs; i++) free(f->vregs[i].name);
  free(f->vregs);
  for (uint32_t i = 0; i < f->nblocks; i++) {
    rs_block *b = &f->blocks[i];
    free(b->name);
    free(b->succs);
    free(b->preds);
    free(b->liveins);
  }
  free(f->blocks);
  free(f->insts);
  free(f->ops);
  free(f->liveins);
  free(f->reserved);
  free(f->wwm);
  free(f->truth);
  rs_intern_free(&f->names);
  free(f);
}

uint32_t rs_func_add_block(rs_func *f, const char *name, size_t n, uint32_t number, uint32_t line) {
  rs_block b = {0};
  b.name = rs_xstrndup(name, n);
  b.number = number;
  b.first_inst = f->ninsts;
  b.line = line;
  RS_PUSH(f->blocks, f->nblocks, f->capblocks, b);
  return f->nblocks - 1;
}

void rs_block_add_succ(rs_block *b, uint32_t s) {
  for (uint32_t i = 0; i < b->nsuccs; i++)
    if (b->succs[i] == s) return;
  RS_PUSH(b->succs, b->nsuccs, b->capsuccs, s);
}

void rs_func_finish_cfg(rs_func *f) {
  for (uint32_t bi = 0; bi < f->nblocks; bi++) {
    rs_block *b = &f->blocks[bi];
    if (b->has_succs) continue;
    /* MIR omits successors only when they are predictable: branch targets plus fall-through. */
    bool barrier = false;
    for (uint32_t k = 0; k < b->ninsts; k++) {
      const rs_inst *in = &f->insts[b->first_inst + k];
      for (uint32_t o = 0; o < in->nops; o++) {
        const rs_operand *op = &f->ops[in->first_op + o];
        if (op->kind == RS_OP_BLOCK && (in->flags & RS_I_BRANCH)) rs_block_add_succ(b, op->reg);
      }
      barrier = (in->flags & RS_I_BARRIER) != 0;
    }
    if (!barrier && bi + 1 < f->nblocks) rs_block_add_succ(b, bi + 1);
    b->has_succs = true;
  }
  for (uint32_t bi = 0; bi < f->nblocks; bi++) f->blocks[bi].npreds = 0;
  for (uint32_t bi = 0; bi < f->nblocks; bi++) {
    rs_block *b = &f->blocks[bi];
    for (uint32_t s = 0; s < b->nsuccs; s++) {
      rs_block *t = &f->blocks[b->succs[s]];
      RS_PUSH(t->preds, t->npreds, t->cappreds, bi);
    }
  }
}

const char *rs_func_opcode(const rs_func *f, const rs_inst *i) { return f->names.strs[i->opcode]; }

uint32_t rs_line_of(const char *src, size_t off) {
  uint32_t line = 1;
  for (size_t i = 0; i < off && src[i]; i++)
    if (src[i] == '\n') line++;
  return line;
}
