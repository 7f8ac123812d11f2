/* cfg.c - the one iterative DFS post-order of a function's CFG (liveness colouring order in
 * problem.c, dominators and loops in simt.c). */
#include "analysis/liveness.h"
#include <stdlib.h>

uint32_t rs_cfg_postorder(const rs_func *f, uint32_t *post) {
  uint32_t n = f->nblocks, np = 0, sp = 0;
  if (!n) return 0;
  uint32_t *stack = rs_xmalloc(sizeof *stack * (n + 1)), *next = rs_xcalloc(n + 1, sizeof *next);
  uint8_t *seen = rs_xcalloc(n + 1, 1);
  stack[sp++] = 0;
  seen[0] = 1;
  while (sp) {
    uint32_t b = stack[sp - 1];
    if (next[b] < f->blocks[b].nsuccs) {
      uint32_t s = f->blocks[b].succs[next[b]++];
      if (!seen[s]) seen[s] = 1, stack[sp++] = s;
    } else {
      post[np++] = b;
      sp--;
    }
  }
  free(stack);
  free(next);
  free(seen);
  return np;
}
