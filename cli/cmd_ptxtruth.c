/* cmd_ptxtruth.c - `regsweep ptxtruth FILE.ptx FILE.sass`: ptxas's registers for the PTX values
 * (ptx/match.c), each value's label or the reason it has none, and whether the map is a truth. */
#include "cli/cli.h"
#include "corpus/ptxtruth.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rs_usage_ptxtruth(void) {
  puts("usage: regsweep ptxtruth FILE.ptx FILE.sass [--quiet] [--json MAP.json]\n"
       "\n"
       "Labels every PTX virtual register with the SASS register ptxas gave it, by matching the two\n"
       "(one ptxas compile: `nvcc -ptx`, `ptxas`, `regsweep corpus disasm`): values by what they\n"
       "compute (the PTX<->SASS correspondence table, ptx/ptx2sass.c), a label only when every def\n"
       "and use that matched names one register. Prints one line per value (name, status, register,\n"
       "evidence), the counts per status, and whether the map is a ground truth for the PTX Problem\n"
       "(every value labelled, or folded/dead and completed, and no PTX-level constraint broken).\n"
       "--quiet: counts and verdict only. --json: write the complete map (labels and completions,\n"
       "for `regsweep verify FILE.ptx MAP.json`) even when it breaks constraints.\n"
       "Exit 0 when a truth exists, 1 when not, 2 on bad input.");
}

int rs_cmd_ptxtruth(int argc, char **argv) {
  const char *files[2] = {NULL, NULL}, *json = NULL;
  bool quiet = false;
  int nf = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quiet")) quiet = true;
    else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (argv[i][0] == '-' || nf == 2) {
      rs_usage_ptxtruth();
      return 2;
    } else files[nf++] = argv[i];
  }
  if (nf != 2) {
    rs_usage_ptxtruth();
    return 2;
  }
  rs_err e = {{0}};
  rs_module *sm = rs_ptxtruth_load_sass(files[1], NULL, &e), *pm = NULL;
  if (sm) pm = rs_module_load(files[0], sm->tgt->name, &e);
  if (!sm || !pm) {
    fprintf(stderr, "regsweep ptxtruth: %s\n", e.msg);
    rs_module_free(sm);
    return 2;
  }
  int rc = 2;
  for (uint32_t i = 0; i < pm->nfuncs; i++) {
    const rs_func *pf = pm->funcs[i], *sf = NULL;
    for (uint32_t j = 0; j < sm->nfuncs; j++)
      if (!strcmp(sm->funcs[j]->name, pf->name)) sf = sm->funcs[j];
    if (!sf) {
      fprintf(stderr, "regsweep ptxtruth: %s: no function %s in %s\n", files[0], pf->name, files[1]);
      rc = 2;
      break;
    }
    rs_problem *p = rs_problem_build(pf, &e);
    rs_ptxtruth t;
    if (!p || rs_ptxtruth_build(pf, p, sf, &t, &e)) {
      fprintf(stderr, "regsweep ptxtruth: %s\n", e.msg);
      rs_problem_free(p);
      rc = 2;
      break;
    }
    printf("# %s (%s): %u values\n", pf->name, sf->tgt->name, p->nvars);
    if (!quiet)
      for (uint32_t v = 0; v < p->nvars; v++) {
        const rs_label *l = &t.m.lbl[p->vars[v].fvreg];
        char reg[32] = "-";
        if (l->status == RS_LBL_LABELLED) sf->tgt->format_preg(sf->tgt, l->reg, reg, sizeof reg);
        printf("%-10s %-15s %-6s %u\n", p->vars[v].name, rs_label_status_name[l->status], reg, l->evidence);
      }
    printf("labelled %u, completed %u (folded/dead/fused)", t.labelled, t.completed);
    for (int s = 0; s < RS_LBL_NSTATUS; s++)
      if (t.missing[s]) printf(", %s %u", rs_label_status_name[s], t.missing[s]);
    printf("; %u colouring rounds, %u of %u PTX nodes matched, %.1f ms\n", t.m.rounds, t.m.matched_nodes, t.m.ptx_nodes,
           t.match_s * 1e3);
    if (t.m.unknown[0]) printf("no correspondence for: %s\n", t.m.unknown);
    printf("%s\n", t.truth ? "truth: complete, passes the PTX Problem" : t.reason);
    if (json && t.map) {
      FILE *o = fopen(json, "w");
      if (!o || fputs(t.map, o) < 0 || fclose(o)) {
        fprintf(stderr, "regsweep ptxtruth: cannot write %s\n", json);
        rc = 2;
      }
    }
    rc = rc == 1 || !t.truth ? 1 : 0;
    rs_ptxtruth_free(&t);
    rs_problem_free(p);
  }
  rs_module_free(pm);
  rs_module_free(sm);
  return rc;
}
