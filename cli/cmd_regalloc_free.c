/* cmd_regalloc_free.c - `regsweep regalloc FILE.sass --free [-o OUT.sass] [-q]` (seed 004, free
 * mode): recolour every function minimising R (sass/free.c), write the whole listing back with
 * only register fields changed, and validate the written text independently of the colouring
 * (sass/free_check.c: contributor-set equivalence, same webs, native verifier). Prints per
 * function `FUNC: R: N -> M registers, occupancy A -> B warps/SM, contributor sets equivalent`.
 * Exit 0 valid, 1 a validation failure (function, address, register), 2 bad input. */
#include "cli/cli.h"
#include "sass/free.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_FAILS = 20 };

int rs_regalloc_free(rs_module *m, const char *function, const char *out, bool quiet, bool quick) {
  rs_err e = {{0}};
  rs_preg **assign = rs_xcalloc(m->nfuncs + 1, sizeof *assign);
  rs_sass_free_stats *st = rs_xcalloc(m->nfuncs + 1, sizeof *st);
  int status = 0;
  uint32_t done = 0;
  for (uint32_t k = 0; k < m->nfuncs && !status; k++) {
    const rs_func *f = m->funcs[k];
    assign[k] = rs_xcalloc(f->nvregs + 1, sizeof **assign);
    for (uint32_t v = 0; v < f->nvregs && f->truth; v++) assign[k][v] = f->truth[v];
    if (function && strcmp(f->name, function)) continue; /* other functions keep their registers */
    done++;
    rs_problem *p = rs_problem_build(f, &e);
    if (!p) {
      fprintf(stderr, "regsweep regalloc: %s\n", e.msg);
      status = 2;
      break;
    }
    rs_sass_free_colour(f, p, quick, assign[k], &st[k]);
    rs_problem_free(p);
  }
  if (!status && function && !done) {
    fprintf(stderr, "regsweep regalloc: %s: no function '%s'\n", m->path, function);
    status = 2;
  }
  char *text = status ? NULL : rs_sass_free_write(m, assign);
  unsigned *r_after = rs_xcalloc(m->nfuncs + 1, sizeof *r_after);
  rs_sass_free_fail fails[MAX_FAILS];
  uint32_t nf = 0;
  if (text) {
    nf = rs_sass_free_check(m, text, fails, MAX_FAILS, r_after, &e);
    if (nf == UINT32_MAX) {
      fprintf(stderr, "FAIL %s: the written listing does not parse: %s\n", m->path, e.msg);
      status = 1;
    } else {
      for (uint32_t i = 0; i < nf && i < MAX_FAILS; i++)
        fprintf(stderr, "FAIL %s /*%04x*/: %s: %s\n", fails[i].func, (unsigned)fails[i].addr, fails[i].reg,
                fails[i].what);
      if (nf) {
        fprintf(stderr, "regalloc(free): %u failure(s)\n", nf);
        status = 1;
      }
    }
  }
  for (uint32_t k = 0; k < m->nfuncs && !status; k++) {
    const rs_func *f = m->funcs[k];
    if (function && strcmp(f->name, function)) continue;
    /* the count printed is the one read back from the written listing, not the colouring's */
    if (r_after[k] != st[k].r_after) {
      fprintf(stderr, "FAIL %s: written listing uses %u R registers, the colouring said %u\n", f->name, r_after[k],
              st[k].r_after);
      status = 1;
      continue;
    }
    if (quiet) continue;
    printf("regalloc(free): %s: R: %u -> %u registers, occupancy %u -> %u warps/SM, contributor sets equivalent", f->name,
           st[k].r_before, r_after[k], st[k].occ_before, st[k].occ_after);
    if (st[k].kept) printf(" (kept the listing's allocation: %s)", st[k].why_kept ? st[k].why_kept : "no smaller R budget coloured");
    printf("\n");
  }
  if (!status && out) {
    FILE *fp = fopen(out, "w");
    if (!fp || fputs(text, fp) < 0 || fclose(fp)) {
      fprintf(stderr, "regsweep regalloc: %s: cannot write\n", out);
      status = 2;
    }
  }
  free(text);
  free(r_after);
  for (uint32_t k = 0; k < m->nfuncs; k++) free(assign[k]);
  free(assign);
  free(st);
  return status;
}
