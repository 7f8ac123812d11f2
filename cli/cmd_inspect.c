/* cmd_inspect.c - `regsweep inspect FILE...`: what the parsers and liveness see. */
#include "front/front.h"
#include "cli/cli.h"
#include "analysis/problem.h"
#include "mcode/mcode.h"
#include "sass/sass.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rs_usage_inspect(void) {
  puts("usage: regsweep inspect FILE.mir|FILE.ptx|FILE.sass|FILE.cubin... [--json] [--problem] [--target T]\n"
       "       regsweep inspect FILE.sass|FILE.cubin --live [--regs] [--check-plr] [--nvdisasm PATH]\n"
       "\n"
       "Per function: blocks, instructions, virtual registers by class, interference edges,\n"
       "fixed-register exclusions, copy hints, maximum pressure per register file; for fully\n"
       "allocated MIR, the registers used and the occupancy they allow.\n"
       "  --json      one JSON object per file on stdout\n"
       "  --problem   also dump the allocation Problem (text, or inside the JSON)\n"
       "  --target T  gfx90a, sm_75, sm_80, sm_86, sm_89 or sm_90 (default: from the file)\n"
       "  --live      SASS: per instruction its address and the registers live at it per file\n"
       "              (GPR PRED UGPR UPRED, nvdisasm -lrm count order); --regs lists them\n"
       "  --check-plr compare that with nvdisasm -plr's own columns (the cubin's, or a listing's\n"
       "              from `corpus disasm --plr`), row by row: one line per function, exit 1 if any differs\n"
       "A cubin is read through its completed nvdisasm listing. A form the opcode table lacks is\n"
       "read with the row nvdisasm -plr gives (a cubin, or a listing with -plr columns), and each\n"
       "function so read says 'inferred rows (nvdisasm -plr): FORM/N ...'; other functions with an\n"
       "unknown form are refused by name (exit 1).\n"
       "Exit status: 0 ok, 2 bad input (file:line: message on stderr).");
}

static void class_counts(const rs_func *f, const rs_problem *p, cJSON *by) {
  for (uint32_t i = 0; i < p->nvars; i++) {
    const char *cn = f->tgt->classes[p->vars[i].cls].name;
    cJSON *c = cJSON_GetObjectItemCaseSensitive(by, cn);
    if (c) cJSON_SetNumberValue(c, c->valuedouble + 1);
    else cJSON_AddNumberToObject(by, cn, 1);
  }
}

static cJSON *inspect_func(const rs_func *f, const rs_problem *p, bool with_problem, const char *inferred) {
  const rs_target *t = f->tgt;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "function", f->name);
  if (*inferred) cJSON_AddStringToObject(o, "inferred_rows", inferred); /* read with rows from nvdisasm -plr */
  cJSON_AddStringToObject(o, "target", t->name);
  cJSON_AddStringToObject(o, "kind", f->kind == RS_SRC_MIR ? "mir" : f->kind == RS_SRC_PTX ? "ptx" : "sass");
  cJSON_AddNumberToObject(o, "blocks", f->nblocks);
  cJSON_AddNumberToObject(o, "instructions", f->ninsts);
  cJSON_AddNumberToObject(o, "operands", f->nops);
  cJSON_AddNumberToObject(o, "virtual_registers", p->nvars);
  class_counts(f, p, cJSON_AddObjectToObject(o, "by_class"));
  cJSON_AddNumberToObject(o, "interference_edges", p->nconf);
  cJSON_AddNumberToObject(o, "fixed_exclusions", p->nfixed);
  cJSON_AddNumberToObject(o, "copy_hints", p->nhints);
  cJSON *mp = cJSON_AddObjectToObject(o, "max_pressure");
  for (uint32_t fi = 0; fi < t->nfiles && fi < RS_MAX_FILES; fi++)
    if (t->files[fi].pressure) cJSON_AddNumberToObject(mp, t->files[fi].name, p->maxp[fi]);
  if (p->flex_files) cJSON_AddNumberToObject(mp, "vector_union", p->maxp_flex);
  cJSON_AddBoolToObject(o, "allocated", f->allocated);
  if (f->allocated) {
    unsigned used[RS_MAX_FILES];
    rs_func_regs_used(f, used);
    cJSON *u = cJSON_AddObjectToObject(o, "registers_used");
    for (uint32_t fi = 0; fi < t->nfiles && fi < RS_MAX_FILES; fi++)
      if (t->files[fi].pressure) cJSON_AddNumberToObject(u, t->files[fi].name, used[fi]);
    cJSON_AddNumberToObject(o, "occupancy", t->occupancy(t, used));
  }
  if (with_problem) {
    char *pj = rs_problem_json(p);
    cJSON_AddItemToObject(o, "problem", cJSON_Parse(pj));
    free(pj);
  }
  return o;
}

static void print_text(const cJSON *o, const char *path) {
  const rs_target *t = rs_target_by_name(cJSON_GetObjectItem(o, "target")->valuestring);
  printf("%s: function %s (%s, %s)\n", path, cJSON_GetObjectItem(o, "function")->valuestring,
         t->name, cJSON_GetObjectItem(o, "kind")->valuestring);
  const cJSON *inf = cJSON_GetObjectItem(o, "inferred_rows");
  if (inf) printf("  inferred rows (nvdisasm -plr): %s\n", inf->valuestring);
  printf("  blocks %d  instructions %d  operands %d  virtual registers %d\n",
         cJSON_GetObjectItem(o, "blocks")->valueint, cJSON_GetObjectItem(o, "instructions")->valueint,
         cJSON_GetObjectItem(o, "operands")->valueint,
         cJSON_GetObjectItem(o, "virtual_registers")->valueint);
  const cJSON *c;
  if (cJSON_GetObjectItem(o, "virtual_registers")->valueint) {
    printf("  by class:");
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(o, "by_class")) printf(" %s %d", c->string, c->valueint);
    printf("\n");
  }
  printf("  interference edges %d  fixed-register exclusions %d  copy hints %d\n",
         cJSON_GetObjectItem(o, "interference_edges")->valueint,
         cJSON_GetObjectItem(o, "fixed_exclusions")->valueint,
         cJSON_GetObjectItem(o, "copy_hints")->valueint);
  printf("  max pressure:");
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(o, "max_pressure")) printf(" %s %d", c->string, c->valueint);
  printf("\n");
  if (cJSON_IsTrue(cJSON_GetObjectItem(o, "allocated"))) {
    printf("  allocated; registers used:");
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(o, "registers_used")) printf(" %s %d", c->string, c->valueint);
    printf("  -> occupancy %d %s\n", cJSON_GetObjectItem(o, "occupancy")->valueint,
           t->occupancy_unit);
  }
}

/* --live: one line per instruction, "ADDR GPR PRED UGPR UPRED" counts (or the registers), as
 * nvdisasm 11.8's -lrm count shows them, to diff against it: its quirks taken (RS_PLR_ALL) and
 * R63 neither counted nor listed (11.8 never shows it). -lrm has no column for the convergence
 * barriers B0-B15 (its header is GPR PRED UGPR [UPRED] on every fixture, tests/fixtures/sass),
 * so no B column is printed. */
static int print_live(const rs_func *f, bool regs, const char *inferred, rs_err *e) {
  static const char *const files[] = {"r", "p", "ur", "up"};
  const rs_target *t = f->tgt;
  rs_word *rows;
  uint32_t W;
  if (f->kind != RS_SRC_SASS) return rs_errf(e, f->path, 0, "--live needs an nvdisasm listing (.sass)");
  if (rs_sass_live_rows(f, &rows, &W, RS_PLR_ALL, e)) return -1; /* as nvdisasm counts: its quirks */
  printf("# %s: address GPR PRED UGPR UPRED%s%s\n", f->name, *inferred ? "; inferred rows (nvdisasm -plr): " : "",
         inferred);
  for (uint32_t i = 0; i < f->ninsts; i++) {
    const rs_word *row = rows + (size_t)W * i;
    printf("%04x", (unsigned)f->insts[i].addr);
    for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
      const rs_regfile *rf = NULL;
      for (uint32_t fi = 0; fi < t->nfiles; fi++)
        if (!strcmp(t->files[fi].name, files[k])) rf = &t->files[fi];
      unsigned n = 0;
      if (regs) printf(" |");
      for (uint32_t u = rf ? rf->first : 0; rf && u < rf->first + rf->count; u++)
        if (rs_bs_get(row, u) && !(k == 0 && u - rf->first == 63)) {
          n++;
          if (regs) printf(" %u", (unsigned)(u - rf->first));
        }
      if (!regs) printf(" %u", n);
    }
    printf("\n");
  }
  free(rows);
  return 0;
}

/* --check-plr: every function's liveness (as --live shows it) against the -plr columns of the
 * same listing (the cubin's `nvdisasm -c -plr -lrm narrow`, or the listing's own), row by row and
 * register by register; one line per function, then a count. 0 all equal, 1 some differ, 2 no
 * -plr columns. */
static int check_live(rs_mc *mc, const char *file) {
  rs_err e = {{0}};
  char *plr = NULL;
  if (rs_mc_plr_text(mc, &plr, &e)) {
    fprintf(stderr, "regsweep inspect: %s\n", e.msg);
    return 2;
  }
  uint32_t equal = 0, total = 0;
  for (uint32_t k = 0; k < mc->m->nfuncs; k++) {
    const rs_func *f = mc->m->funcs[k];
    char why[600], inf[400];
    uint32_t rows = 0;
    rs_sass_inferred_in(mc->inferred, f->name, inf, sizeof inf);
    const char *im = *inf ? "; inferred rows (nvdisasm -plr): " : "";
    if (rs_sass_plr_check(f, plr, &rows, why, sizeof why)) {
      printf("live != nvdisasm -plr: %s: %s%s%s\n", f->name, why, im, inf);
      continue;
    }
    equal++, total += rows;
    printf("live = nvdisasm -plr: %s: %u rows%s%s\n", f->name, rows, im, inf);
  }
  printf("%s: %u of %u functions read: live = nvdisasm -plr on every row (%u rows)\n", file, equal, mc->m->nfuncs,
         total);
  free(plr);
  return equal < mc->m->nfuncs;
}

/* Ends in sfx? */
static bool ends(const char *s, const char *sfx) {
  size_t n = strlen(s), k = strlen(sfx);
  return n > k && !strcmp(s + n - k, sfx);
}

int rs_cmd_inspect(int argc, char **argv) {
  bool json = false, with_problem = false, live = false, regs = false, check_plr = false;
  const char *target = NULL, *nvd = NULL;
  int nfiles = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) json = true;
    else if (!strcmp(argv[i], "--problem")) with_problem = true;
    else if (!strcmp(argv[i], "--live")) live = true;
    else if (!strcmp(argv[i], "--regs")) regs = true;
    else if (!strcmp(argv[i], "--check-plr")) check_plr = live = true;
    else if (!strcmp(argv[i], "--target") && i + 1 < argc) target = argv[++i];
    else if (!strcmp(argv[i], "--nvdisasm") && i + 1 < argc) nvd = argv[++i];
    else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "regsweep inspect: unknown option '%s'\n", argv[i]);
      return 2;
    } else nfiles++;
  }
  if (!nfiles) {
    rs_usage_inspect();
    return 2;
  }
  int status = 0;
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1]) {
      if (!strcmp(argv[i], "--target") || !strcmp(argv[i], "--nvdisasm")) i++;
      continue;
    }
    rs_err e = {{0}};
    /* SASS through mcode's loader: a cubin's listing, and forms inferred from nvdisasm -plr */
    rs_mc mc;
    memset(&mc, 0, sizeof mc);
    bool sass = ends(argv[i], ".sass") || ends(argv[i], ".cubin") ||
                (check_plr && !ends(argv[i], ".mir") && !ends(argv[i], ".ptx")); /* a listing by any name */
    rs_module *m = NULL;
    if (!sass) m = rs_module_load(argv[i], target, &e);
    else if (!(ends(argv[i], ".cubin") ? rs_mc_cubin(&mc, argv[i], NULL, target, nvd, false, &e)
                                       : rs_mc_listing(&mc, argv[i], target, NULL, &e)))
      m = mc.m;
    if (sass && mc.codeless) { /* a host-only unit's cubin: read, no function in it */
      printf(check_plr ? "%s: 0 of 0 functions read: no .text.<function> section (a cubin without code)\n"
                       : "%s: no functions (no .text.<function> section: a cubin without code)\n",
             argv[i]);
      rs_mc_free_input(&mc);
      continue;
    }
    if (!m) {
      fprintf(stderr, "regsweep inspect: %s\n", e.msg);
      status = 2;
      continue;
    }
    if (rs_cli_refusals("inspect", argv[i], m, false) && !status) status = 1; /* the others go on */
    if (check_plr) { /* each function's liveness against nvdisasm -plr's own columns */
      int c = sass ? check_live(&mc, argv[i]) : 2;
      if (!sass) fprintf(stderr, "regsweep inspect: %s: --check-plr needs a cubin or an nvdisasm listing\n", argv[i]);
      if (c > status) status = c;
      if (sass) rs_mc_free_input(&mc);
      else rs_module_free(m);
      continue;
    }
    if (live) {
      for (uint32_t k = 0; k < m->nfuncs; k++) {
        char inf[400];
        rs_sass_inferred_in(mc.inferred, m->funcs[k]->name, inf, sizeof inf);
        if (print_live(m->funcs[k], regs, inf, &e)) {
          fprintf(stderr, "regsweep inspect: %s\n", e.msg);
          status = 2;
        }
      }
      if (sass) rs_mc_free_input(&mc);
      else rs_module_free(m);
      continue;
    }
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t k = 0; k < m->nfuncs; k++) {
      rs_problem *p = rs_problem_build(m->funcs[k], &e);
      if (!p) {
        fprintf(stderr, "regsweep inspect: %s\n", e.msg);
        status = 2;
        continue;
      }
      char inf[400];
      rs_sass_inferred_in(mc.inferred, m->funcs[k]->name, inf, sizeof inf);
      cJSON *o = inspect_func(m->funcs[k], p, with_problem, inf);
      if (!json) {
        print_text(o, argv[i]);
        if (with_problem) {
          char *s = rs_problem_text(p);
          fputs(s, stdout);
          free(s);
        }
      }
      cJSON_AddItemToArray(arr, o);
      rs_problem_free(p);
    }
    if (json) {
      cJSON *top = cJSON_CreateObject();
      cJSON_AddStringToObject(top, "file", argv[i]);
      cJSON_AddItemToObject(top, "functions", arr);
      char *s = cJSON_PrintUnformatted(top);
      puts(s);
      cJSON_free(s);
      cJSON_Delete(top);
    } else {
      cJSON_Delete(arr);
    }
    if (sass) rs_mc_free_input(&mc);
    else rs_module_free(m);
  }
  return status;
}
