/* refused.c - how every command names the functions a front end refused alone (rs_module.refused:
 * an instruction form the table does not know refuses its function, never the listing) and counts
 * them by form. The other functions went on; the command exits 1 when any was refused. */
#include "cli/cli.h"
#include "ir/ir.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t rs_cli_refusals(const char *cmd, const char *path, const rs_module *m, bool quiet) {
  if (!m || !m->nrefused) return 0;
  for (uint32_t i = 0; i < m->nrefused; i++) {
    const rs_refusal *r = &m->refused[i];
    if (*r->shape)
      fprintf(stderr, "regsweep %s: refused %s /*%04x*/: form %s (%s): %s\n", cmd, r->func, (unsigned)r->addr, r->form,
              r->shape, r->why);
    else
      fprintf(stderr, "regsweep %s: refused %s: %s: %s\n", cmd, r->func, r->form, r->why);
  }
  if (!quiet) {
    /* by form, in order of first refusal */
    fprintf(stderr, "regsweep %s: %s: %u of %u functions refused, by form:", cmd, path, m->nrefused,
            m->nrefused + m->nfuncs);
    for (uint32_t i = 0; i < m->nrefused; i++) {
      uint32_t n = 0, first = i;
      for (uint32_t j = 0; j < m->nrefused; j++)
        if (!strcmp(m->refused[j].form, m->refused[i].form)) {
          if (j < i) first = j;
          n++;
        }
      if (first == i) fprintf(stderr, " %s %u", m->refused[i].form, n);
    }
    fputc('\n', stderr);
  }
  return m->nrefused;
}
