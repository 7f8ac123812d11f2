/* cmd_ptxtruth.c - `regsweep ptxtruth FILE.ptx FILE.sass`: ptxas's registers for the PTX values
 * (ptx/match.c), each value's label or the reason it has none, and whether the map is a truth. */
#include "front/front.h"
#include "cli/cli.h"
#include "corpus/grid.h"
#include "corpus/ptxref.h"
#include "corpus/ptxtruth.h"
#include "storage/corpus.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rs_usage_ptxtruth(void) {
  puts("usage: regsweep ptxtruth FILE.ptx FILE.sass [--quiet] [--json MAP.json]\n"
       "       regsweep ptxtruth --corpus corpus.h5 [--families F,..] [--targets T,..]\n"
       "       regsweep ptxtruth --corpus corpus.h5 --store-references\n"
       "\n"
       "Labels every PTX virtual register with the SASS register ptxas gave it, by matching the two\n"
       "(one ptxas compile: `nvcc -ptx`, `ptxas`, `regsweep corpus disasm`): values by what they\n"
       "compute (the PTX<->SASS correspondence table, ptx/ptx2sass.c), a label only when every def\n"
       "and use that matched names one register. Prints one line per value (name, status, register,\n"
       "evidence), the counts per status, and whether the map is a ground truth for the PTX Problem\n"
       "(every value labelled, or folded/dead and completed, and no PTX-level constraint broken).\n"
       "A complete map that breaks constraints lists each broken conflict with its cause: same value\n"
       "(a copy and its source in one register), read moved above the def / def moved below the last\n"
       "read (ptxas's schedule), read elsewhere (rematerialised or folded), def not located, other.\n"
       "--quiet: counts and verdict only. --json: write the complete map (labels and completions,\n"
       "for `regsweep verify FILE.ptx MAP.json`) even when it breaks constraints.\n"
       "Exit 0 when a truth exists, 1 when not, 2 on bad input.\n"
       "--corpus: the same for every ptx instance of a corpus against the sass row of the same\n"
       "variant and target (both raw texts are in the file), as a coverage table per family x\n"
       "target: values labelled, completed (folded/dead/fused), instances with a complete map, maps\n"
       "that pass the PTX-level verifier (the truths), why the rest have none, the broken conflicts\n"
       "by cause, the opcodes the table has no row for (instances naming each), and the reference\n"
       "allocations (ptxas's register kept where the PTX Problem allows it, first-fit elsewhere, passed\n"
       "by the native and the Z3 verifier): share of values kept, registers against ptxas's.\n"
       "--store-references: store that reference with every ptx instance without a truth (label_kind\n"
       "reference, never counted as a truth; the corpus is rewritten in place, nothing recompiled).");
}

typedef struct {
  char family[32], target[16];
  uint32_t inst, nosass, values, labelled, completed, maps, truths, broken;
  uint32_t miss_inst[RS_LBL_NSTATUS]; /* instances with at least one value of that status */
  uint32_t brk[RS_BRK_N];             /* broken conflicts of the complete maps, by cause */
  uint32_t reorder_only;              /* maps every break of which is a copy or a reordering */
  double match_s;
  /* the reference allocation (corpus/ptxref.c): verified maps, values keeping ptxas's register,
   * registers of the reference and of ptxas (R file, summed over the instances with a map) */
  uint32_t refs, ref_fail, ref_fallback, kept, ref_labelled, ref_values;
  uint64_t ref_regs, ptxas_regs;
  double ref_s;
} cov;

static cov *cov_row(cov **rows, uint32_t *n, uint32_t *cap, const char *fam, const char *tg) {
  for (uint32_t i = 0; i < *n; i++)
    if (!strcmp((*rows)[i].family, fam) && !strcmp((*rows)[i].target, tg)) return &(*rows)[i];
  cov c;
  memset(&c, 0, sizeof c);
  snprintf(c.family, sizeof c.family, "%s", fam);
  snprintf(c.target, sizeof c.target, "%s", tg);
  RS_PUSH(*rows, *n, *cap, c);
  return &(*rows)[*n - 1];
}

static void cov_add(cov *t, const cov *r) {
  t->inst += r->inst, t->nosass += r->nosass, t->values += r->values, t->labelled += r->labelled;
  t->completed += r->completed, t->maps += r->maps, t->truths += r->truths, t->broken += r->broken;
  t->match_s += r->match_s;
  for (int s = 0; s < RS_LBL_NSTATUS; s++) t->miss_inst[s] += r->miss_inst[s];
  for (int k = 0; k < RS_BRK_N; k++) t->brk[k] += r->brk[k];
  t->reorder_only += r->reorder_only;
  t->refs += r->refs, t->ref_fail += r->ref_fail, t->ref_fallback += r->ref_fallback, t->kept += r->kept;
  t->ref_labelled += r->ref_labelled, t->ref_values += r->ref_values, t->ref_regs += r->ref_regs;
  t->ptxas_regs += r->ptxas_regs, t->ref_s += r->ref_s;
}

static void ref_print(const cov *c) {
  uint32_t with = c->inst - c->nosass;
  printf("| %s | %s | %u | %u | %u | %.1f | %.1f | %.1f | %.1f | %.1f | %u | %.1f |\n", c->family, c->target, with,
         c->refs, c->ref_fail, c->ref_values ? 100.0 * c->ref_labelled / c->ref_values : 0.0,
         c->ref_values ? 100.0 * c->kept / c->ref_values : 0.0, c->ref_labelled ? 100.0 * c->kept / c->ref_labelled : 0.0,
         c->refs ? (double)c->ref_regs / c->refs : 0.0, c->refs ? (double)c->ptxas_regs / c->refs : 0.0,
         c->ref_fallback, with ? c->ref_s * 1e3 / with : 0.0);
}

static void cov_print(const cov *c) {
  uint32_t with = c->inst - c->nosass;
  printf("| %s | %s | %u | %u | %u | %.1f | %.1f | %u | %u | %u |", c->family, c->target, c->inst, with, c->values,
         c->values ? 100.0 * c->labelled / c->values : 0.0, c->values ? 100.0 * c->completed / c->values : 0.0,
         c->maps, c->truths, c->broken);
  for (int s = RS_LBL_AWAY; s < RS_LBL_NSTATUS; s++)
    if (s != RS_LBL_FUSED) printf(" %u |", c->miss_inst[s]);
  printf(" %.1f |", with ? c->match_s * 1e3 / with : 0.0);
  for (int k = 0; k < RS_BRK_N; k++) printf(" %u |", c->brk[k]);
  printf(" %u |\n", c->reorder_only);
}

/* The opcodes without a table row, over the corpus: name -> instances naming it. */
typedef struct {
  char op[48];
  uint32_t inst, count;
} gap;

static void gaps_add(gap **g, uint32_t *n, uint32_t *cap, const char *list) {
  /* list: "OPCODE xN, OPCODE xN" as rs_match.unknown writes it */
  for (const char *p = list; *p;) {
    const char *sp = strstr(p, " x");
    if (!sp) break;
    char op[48];
    snprintf(op, sizeof op, "%.*s", (int)(sp - p), p);
    uint32_t cnt = (uint32_t)strtoul(sp + 2, NULL, 10), i = 0;
    while (i < *n && strcmp((*g)[i].op, op)) i++;
    if (i == *n) {
      gap z;
      memset(&z, 0, sizeof z);
      snprintf(z.op, sizeof z.op, "%s", op);
      RS_PUSH(*g, *n, *cap, z);
    }
    (*g)[i].inst++;
    (*g)[i].count += cnt;
    const char *nx = strstr(sp, ", ");
    if (!nx) break;
    p = nx + 2;
  }
}

static int gap_cmp(const void *a, const void *b) {
  const gap *x = a, *y = b;
  return x->inst != y->inst ? (x->inst < y->inst ? 1 : -1) : strcmp(x->op, y->op);
}

/* Coverage of the whole corpus's ptx instances (read-only). */
static int corpus_coverage(const char *path, const char *families, const char *targets) {
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_open(path, &e);
  if (!c) {
    fprintf(stderr, "regsweep ptxtruth: %s\n", e.msg);
    return 2;
  }
  cov *rows = NULL, tot;
  uint32_t nrows = 0, cap = 0;
  gap *gaps = NULL;
  uint32_t ngaps = 0, capgaps = 0;
  memset(&tot, 0, sizeof tot);
  snprintf(tot.family, sizeof tot.family, "all");
  snprintf(tot.target, sizeof tot.target, "all");
  int rc = 0;
  uint64_t n = rs_corpus_count(c);
  for (uint64_t i = 0; i < n && !rc; i++) {
    rs_instance in;
    if (rs_corpus_get(c, i, &in, 0, &e)) {
      rc = 2;
      break;
    }
    bool take = !strcmp(in.form, "ptx") && rs_list_has(families, in.family) && rs_list_has(targets, in.target);
    if (!take) {
      rs_instance_clear(&in);
      continue;
    }
    cov *r = cov_row(&rows, &nrows, &cap, in.family, in.target);
    r->inst++;
    char sid[200];
    snprintf(sid, sizeof sid, "%s/%s/%s/sass", in.family, in.variant, in.target);
    rs_instance_clear(&in);
    int64_t si = rs_corpus_find(c, sid, &e);
    rs_instance pi, sx;
    if (si < 0) {
      r->nosass++;
      continue;
    }
    if (rs_corpus_get(c, i, &pi, 1, &e) || rs_corpus_get(c, (uint64_t)si, &sx, 1, &e)) {
      rc = 2;
      break;
    }
    rs_module *pm = pi.raw ? rs_module_parse(pi.id, rs_xstrndup(pi.raw, strlen(pi.raw)), strlen(pi.raw), RS_SRC_PTX,
                                             pi.target, &e)
                           : NULL;
    rs_module *sm = pm && sx.raw ? rs_ptxtruth_parse_sass(sx.id, rs_xstrndup(sx.raw, strlen(sx.raw)), strlen(sx.raw),
                                                         sx.target, &e)
                                 : NULL;
    rs_problem *p = sm ? rs_problem_build(pm->funcs[0], &e) : NULL;
    rs_ptxtruth t;
    if (!p || rs_ptxtruth_with(pm->funcs[0], p, sm, &t, &e)) {
      fprintf(stderr, "regsweep ptxtruth: %s: %s\n", pi.id, e.msg);
      rc = 2;
    } else {
      r->values += t.nvalues;
      r->labelled += t.labelled;
      r->completed += t.completed;
      r->maps += t.map != NULL;
      r->truths += t.truth != NULL;
      r->broken += t.map && !t.truth;
      r->match_s += t.match_s;
      for (int s = 0; s < RS_LBL_NSTATUS; s++) r->miss_inst[s] += t.missing[s] > 0;
      for (int k = 0; k < RS_BRK_N; k++) r->brk[k] += t.ncause[k];
      r->reorder_only += t.nbrk && t.ncause[RS_BRK_NOTREAD] + t.ncause[RS_BRK_NODEF] + t.ncause[RS_BRK_OTHER] == 0;
      gaps_add(&gaps, &ngaps, &capgaps, t.m.unknown);
      rs_ptxref ref;
      if (rs_ptxref_build(pm->funcs[0], p, &t, &ref, &e)) {
        fprintf(stderr, "regsweep ptxtruth: %s: reference: %s\n", pi.id, e.msg);
        rc = 2;
      } else if (ref.map) {
        r->refs++;
        r->ref_fallback += ref.fallback;
        r->kept += ref.kept, r->ref_labelled += ref.labelled, r->ref_values += ref.nvalues;
        r->ref_regs += ref.regs;
        r->ptxas_regs += pi.ref_regs[0] ? pi.ref_regs[0] : sx.ref_regs[0];
      } else {
        r->ref_fail++;
        fprintf(stderr, "regsweep ptxtruth: %s: %s\n", pi.id, ref.reason);
      }
      r->ref_s += ref.seconds;
      rs_ptxref_free(&ref);
      rs_ptxtruth_free(&t);
    }
    rs_problem_free(p);
    rs_module_free(pm);
    rs_module_free(sm);
    rs_instance_clear(&pi);
    rs_instance_clear(&sx);
  }
  if (!rc) {
    printf("%s: ptx instances matched with the sass row of the same compile\n\n", path);
    printf("| family | target | ptx | with sass | values | labelled %% | completed %% | complete maps | truths "
           "(pass PTX Problem) | maps breaking it |");
    for (int s = RS_LBL_AWAY; s < RS_LBL_NSTATUS; s++)
      if (s != RS_LBL_FUSED) printf(" %s |", rs_label_status_name[s]);
    printf(" ms/instance |");
    for (int k = 0; k < RS_BRK_N; k++) printf(" broken: %s |", rs_break_cause_name[k]);
    printf(" maps broken only by copies/reordering |\n|---|---|");
    for (int k = 0; k < 8 + RS_LBL_NSTATUS - RS_LBL_AWAY - 1 + 1 + RS_BRK_N + 1; k++) printf("---:|");
    printf("\n");
    for (uint32_t i = 0; i < nrows; i++) {
      cov_print(&rows[i]);
      cov_add(&tot, &rows[i]);
    }
    cov_print(&tot);
    printf("\nColumns after the truths: instances with at least one value of that status (no map). "
           "\"broken\": conflicts of the complete maps with the PTX Problem, by cause (docs/ptxtruth.md); such "
           "maps stay out of the truths.\n");
    printf("\nReference allocations (label_kind reference, never a truth; corpus/ptxref.c): ptxas's register kept "
           "where the PTX Problem allows, first-fit elsewhere, passed by the native and the Z3 verifier.\n\n"
           "| family | target | with sass | references | refused | labelled %% | kept %% of values | kept %% of "
           "labelled | R regs (reference) | R regs (ptxas) | colour fallback | ms/instance |\n"
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (uint32_t i = 0; i < nrows; i++) ref_print(&rows[i]);
    ref_print(&tot);
    if (ngaps) {
      qsort(gaps, ngaps, sizeof *gaps, gap_cmp);
      printf("\nNo table row (ptx/ptx2sass.c) for, by instances naming it (instructions):");
      for (uint32_t i = 0; i < ngaps; i++) printf("%s %s %u (%u)", i ? "," : "", gaps[i].op, gaps[i].inst, gaps[i].count);
      printf("\n");
    }
  } else if (e.msg[0]) fprintf(stderr, "regsweep ptxtruth: %s\n", e.msg);
  free(rows);
  free(gaps);
  rs_err ce = {{0}};
  rs_corpus_close(c, &ce);
  return rc;
}

/* --store-references: the corpus rewritten with a reference on every ptx row without a truth. */
static int store_references(const char *path) {
  rs_err e = {{0}};
  rs_ptxref_stats st;
  if (rs_ptxref_store(path, &st, &e)) {
    fprintf(stderr, "regsweep ptxtruth: %s\n", e.msg);
    return 2;
  }
  printf("%s: %u ptx instances: %u truths (kept as truths), %u references stored (label_kind reference, "
         "verified by native and Z3), %u refused, %u without a sass row; references keep ptxas's register for "
         "%.1f%% of their values (%.1f%% of the %" PRIu64 " labelled), R registers %.1f vs ptxas %.1f per instance, "
         "%.0f ms per instance\n",
         path, st.ptx, st.truths, st.refs, st.refused, st.nosass, st.values ? 100.0 * st.kept / st.values : 0.0,
         st.labelled ? 100.0 * st.kept / st.labelled : 0.0, st.labelled, st.refs ? (double)st.regs / st.refs : 0.0,
         st.refs ? (double)st.ptxas_regs / st.refs : 0.0, st.refs + st.refused ? st.seconds * 1e3 / (st.refs + st.refused) : 0.0);
  return st.refused ? 1 : 0;
}

int rs_cmd_ptxtruth(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--corpus") && i + 1 < argc) {
      const char *fam = NULL, *tg = NULL;
      for (int k = 1; k + 1 < argc; k++) {
        if (!strcmp(argv[k], "--families")) fam = argv[k + 1];
        if (!strcmp(argv[k], "--targets")) tg = argv[k + 1];
      }
      for (int k = 1; k < argc; k++)
        if (!strcmp(argv[k], "--store-references")) return store_references(argv[i + 1]);
      return corpus_coverage(argv[i + 1], fam, tg);
    }
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
    for (uint32_t k = 0; k < t.nbrk && !quiet; k++) {
      const rs_break *x = &t.brk[k];
      char reg[32];
      sf->tgt->format_preg(sf->tgt, t.m.lbl[p->vars[x->d].fvreg].reg, reg, sizeof reg);
      printf("broken: %s defined at line %u while %s is live, both in %s: %s\n", p->vars[x->d].name,
             pf->insts[p->conf[x->conf].inst].line, p->vars[x->o].name, reg, rs_break_cause_name[x->cause]);
    }
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
