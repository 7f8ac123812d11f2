/* cmd_lower.c - `regsweep lower`: SASS listings back into cubins (cubin/lower.h), the learned
 * register fields (learn, check), the register counts, and nvdisasm's crosscheck. Also the
 * cubin side of `regalloc FILE.cubin ... -o OUT.cubin` (rs_regalloc_cubin). */
#include "front/front.h"
#include "cli/cli.h"
#include "analysis/problem.h"
#include "corpus/truth.h"
#include "cubin/lower.h"
#include "cubin/spilllower.h"
#include "sass/sass.h"
#include "sass/spills.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void rs_usage_lower(void) {
  puts("usage: regsweep lower FILE.cubin ORIG.sass NEW.sass -o OUT.cubin [--nvdisasm PATH] [--no-crosscheck]\n"
       "       regsweep lower FILE.cubin ORIG.sass NEW.sass --encoder-check [--nvdisasm PATH]\n"
       "       regsweep lower learn [-o cubin/fields.c] [--merge BASE.c] [--nvdisasm PATH] IN...\n"
       "       regsweep lower check [--nvdisasm PATH] IN...\n"
       "       regsweep lower crosscheck WRITTEN.cubin ORIG.cubin INTENDED.sass [--nvdisasm PATH]\n"
       "       regsweep lower regcounts FILE.cubin...\n"
       "\n"
       "lower      write NEW.sass (ORIG.sass, the completed listing of FILE.cubin, with registers changed: it\n"
       "           must be a recolouring, same definitions at every use and a valid colouring of ORIG's Problem)\n"
       "           into a copy of the cubin: the .text words of every changed instruction re-encoded through\n"
       "           the learned fields (every other bit kept), each function's register count (EIATTR_REGCOUNT,\n"
       "           and sh_info on sm_75-89) set to what NEW.sass needs; then crosschecked with nvdisasm. A\n"
       "           recolouring that races ptxas's scoreboards (cubin/hazard.c) is refused. --encoder-check:\n"
       "           lower into a temporary cubin even then, crosscheck it and remove it (measures the encoder).\n"
       "learn      the register field of every operand of every opcode form from (encoding, listing) pairs:\n"
       "           IN is X.cubin (listed with nvdisasm) or X.cubin=X.sass (its completed listing); writes the\n"
       "           table as C (cubin/fields.c; scripts/learn-sass-fields.sh runs it over fixtures and a corpus).\n"
       "           --merge BASE.c: keep what an earlier table (a fields.c learn wrote) knew: its forms unseen in\n"
       "           IN as they are, and for a form in both its trusted fields, which must fit every sample of IN\n"
       "           (a contradiction names the form: exit 2, nothing written); IN decides the rest.\n"
       "check      re-encode every instruction of each IN from its listing through the table: the words must\n"
       "           come out identical (what makes a field trusted).\n"
       "crosscheck nvdisasm of WRITTEN.cubin must list INTENDED.sass exactly, with ORIG.cubin's live counts and\n"
       "           .nv.info attributes (register counts: what INTENDED.sass needs).\n"
       "regcounts  per function: EIATTR_REGCOUNT and the sh_info register byte.\n"
       "Exit status: 0 done/identical, 1 a mismatch or a refused kernel, 2 bad input (file: reason).");
}

/* "X.cubin" or "X.cubin=X.sass": load the cubin and its completed listing. */
static int load_pair(const char *arg, const char *nvd, rs_cubin *c, char **listing, rs_err *e) {
  *listing = NULL;
  char path[1024];
  snprintf(path, sizeof path, "%s", arg);
  char *eq = strchr(path, '=');
  if (eq) *eq = 0;
  if (rs_cubin_load(path, c, e)) return -1;
  if (eq) {
    size_t n;
    *listing = rs_read_file(eq + 1, &n, e);
    return *listing ? 0 : -1;
  }
  rs_nvdisasm nd;
  rs_sass_stats st;
  static const char *const args[] = {"-c", NULL};
  if (rs_nvdisasm_open(nvd, &nd, e) || rs_sass_disasm(&nd, path, args, listing, &st, e)) return -1;
  return 0;
}

static int learn_or_check(int argc, char **argv, bool learn) {
  const char *out = NULL, *nvd = NULL, *base = NULL;
  rs_sass_learner *L = learn ? rs_sass_learner_new() : NULL;
  rs_sass_fieldcheck tot = {0};
  int status = 0, nin = 0;
  for (int i = 2; i < argc && status != 2; i++) {
    if (!strcmp(argv[i], "-o") && i + 1 < argc) {
      out = argv[++i];
      continue;
    }
    if (!strcmp(argv[i], "--nvdisasm") && i + 1 < argc) {
      nvd = argv[++i];
      continue;
    }
    if (learn && !strcmp(argv[i], "--merge") && i + 1 < argc) {
      base = argv[++i];
      continue;
    }
    nin++;
    rs_err e = {{0}};
    rs_cubin c;
    char *listing = NULL;
    if (load_pair(argv[i], nvd, &c, &listing, &e)) {
      fprintf(stderr, "regsweep lower: %s\n", e.msg);
      status = 2;
    } else if (learn) {
      if (rs_sass_learn_add(L, &c, listing, argv[i], &e)) fprintf(stderr, "regsweep lower: %s\n", e.msg), status = 2;
    } else {
      rs_sass_fieldcheck st = {0};
      if (rs_sass_fields_check(&c, listing, argv[i], &st, &e)) {
        fprintf(stderr, "MISMATCH %s\n", e.msg);
        status = 1;
      }
      printf("%s: sm_%u: %u instructions, %u reproduced, %u fields re-encoded, %u untrusted, %u forms unknown\n",
             argv[i], c.sm, st.insts, st.reproduced, st.tokens, st.untrusted, st.unknown_forms);
      tot.insts += st.insts, tot.reproduced += st.reproduced, tot.tokens += st.tokens;
      tot.untrusted += st.untrusted, tot.unknown_forms += st.unknown_forms;
    }
    free(listing);
    rs_cubin_free(&c);
  }
  if (!nin) {
    rs_usage_lower();
    rs_sass_learner_free(L);
    return 2;
  }
  if (learn && status == 0 && base) {
    rs_err e = {{0}};
    size_t n;
    char *b = rs_read_file(base, &n, &e);
    if (!b || rs_sass_learn_merge(L, b, base, &e)) fprintf(stderr, "regsweep lower: %s\n", e.msg), status = 2;
    free(b);
  }
  if (learn && status == 0) {
    rs_sass_learn_stats ls;
    char *src = rs_sass_learn_emit(L, &ls);
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f || fputs(src, f) < 0 || (out && fclose(f))) {
      fprintf(stderr, "regsweep lower: %s: cannot write\n", out ? out : "stdout");
      status = 2;
    }
    if (base)
      fprintf(stderr,
              "merged with %s: base %u forms, %u register fields, %u trusted; %u forms kept (unseen), %u seen in both "
              "(agreeing; %u fields the base left untrusted now trusted), %u new\n",
              base, ls.base_forms, ls.base_tokens, ls.base_tokens - ls.base_untrusted, ls.kept, ls.both,
              ls.newly_trusted, ls.added);
    fprintf(stderr, "learned %u forms from %d cubins: %u register fields, %u trusted, %u not (ambiguous or no fit)\n",
            ls.forms, nin, ls.tokens, ls.tokens - ls.untrusted, ls.untrusted);
    free(src);
  }
  if (!learn)
    printf("total: %u instructions, %u reproduced, %u fields re-encoded, %u untrusted, %u forms unknown\n", tot.insts,
           tot.reproduced, tot.tokens, tot.untrusted, tot.unknown_forms);
  rs_sass_learner_free(L);
  return status;
}

static int regcounts(int argc, char **argv) {
  int status = argc > 2 ? 0 : 2;
  for (int i = 2; i < argc; i++) {
    rs_err e = {{0}};
    rs_cubin c;
    rs_nvinfo_func *nf = NULL;
    if (rs_cubin_load(argv[i], &c, &e) || rs_nvinfo_read(&c, argv[i], &nf, &e)) {
      fprintf(stderr, "regsweep lower: %s\n", e.msg);
      status = 2;
    }
    for (uint32_t k = 0; nf && k < c.nfuncs; k++)
      printf("%s\tsm_%u\t%s\tEIATTR_REGCOUNT %u\tsh_info registers %u\n", argv[i], c.sm, nf[k].name, nf[k].regcount,
             nf[k].sh_info >> 24);
    free(nf);
    rs_cubin_free(&c);
  }
  return status;
}

/* `lower hazards X.cubin=L.sass...`: scoreboard hazards of each listing against the cubin's
 * control bits (0 on ptxas's own). */
static int hazards(int argc, char **argv) {
  int status = argc > 2 ? 0 : 2;
  uint32_t total = 0, files = 0;
  for (int i = 2; i < argc; i++) {
    rs_err e = {{0}};
    rs_cubin c;
    char *listing = NULL, first[400];
    uint32_t n = 0;
    if (load_pair(argv[i], NULL, &c, &listing, &e) || rs_sass_hazards_listing(&c, listing, argv[i], &n, first, sizeof first, &e)) {
      fprintf(stderr, "regsweep lower: %s\n", e.msg);
      status = 2;
    } else {
      files++;
      total += n;
      if (n) printf("%s: %u hazards; first: %s\n", argv[i], n, first), status = status ? status : 1;
    }
    free(listing);
    rs_cubin_free(&c);
  }
  printf("hazards: %u listings, %u hazards\n", files, total);
  return status;
}

static void print_xcheck(const rs_crosscheck_stats *x) {
  bool ok = rs_crosscheck_ok(x);
  printf("crosscheck (nvdisasm): %u functions, %u instructions, %u mismatches; other lines %u, %u differ; register "
         "counts %u/%u as meant, -plr's registers within the count on %u, past it on %u; -plr live-before rows %u: %u "
         "fewer, %u more, %u other uniform counts: %s\n",
         x->funcs, x->insts, x->mismatches, x->attrs, x->attr_mismatches, x->regcount_ok, x->funcs, x->plr_ok,
         x->plr_over, x->live_rows, x->live_fewer, x->live_more, x->uniform_rows, ok ? "ok" : "MISMATCH");
  if (!ok) fprintf(stderr, "crosscheck: first mismatch: %s\n", x->first);
}

int rs_lower_file(const char *cubin, const char *orig, const char *next, const uint32_t *regcount, const char *out,
                  const char *nvd, bool crosscheck, bool must_be_identical) {
  rs_err e = {{0}};
  rs_cubin c;
  if (rs_cubin_load(cubin, &c, &e)) {
    fprintf(stderr, "regsweep lower: %s\n", e.msg);
    rs_cubin_free(&c);
    return 2;
  }
  /* the scheduling bits stay ptxas's: refuse a recolouring that races an in-flight instruction */
  uint32_t nh = 0;
  char hz[400];
  bool encoder_check = !out; /* --encoder-check: into a temporary file, crosschecked, removed */
  char tmp[] = "/tmp/regsweep-encoder-check-XXXXXX";
  if (encoder_check) {
    int fd = mkstemp(tmp);
    if (fd < 0) {
      fprintf(stderr, "regsweep lower: cannot create a temporary file: %s\n", strerror(errno));
      rs_cubin_free(&c);
      return 2;
    }
    close(fd);
    out = tmp;
  }
  /* spill accesses free mode rewrote as MOV/NOP (sass/spills.h): written from scratch, hazards
   * walked on their new control bits (cubin/spilllower.c) */
  uint32_t nrw = 0;
  if (rs_spills_count_rewritten(orig, next, cubin, &nrw, &e)) {
    fprintf(stderr, "regsweep lower: %s\n", e.msg);
    rs_cubin_free(&c);
    if (encoder_check) unlink(tmp);
    return 2;
  }
  if (!nrw && (rs_sass_hazards_listing(&c, next, cubin, &nh, hz, sizeof hz, &e) || (nh && !encoder_check))) {
    if (nh) fprintf(stderr, "regsweep lower: %s: %u scoreboard hazard%s with ptxas's control bits, first: %s: the "
                            "kernel is refused\n", cubin, nh, nh == 1 ? "" : "s", hz);
    else fprintf(stderr, "regsweep lower: %s\n", e.msg);
    rs_cubin_free(&c);
    if (encoder_check) unlink(tmp);
    return nh ? 1 : 2;
  }
  if (nh) printf("lower: %u scoreboard hazards (first: %s): checking the encoding only, no cubin is kept\n", nh, hz);
  uint8_t *before = must_be_identical ? rs_xmalloc(c.len) : NULL;
  if (before) memcpy(before, c.bytes, c.len);
  rs_lower_stats st;
  double t0 = rs_now();
  rs_spill_lower_stats sst;
  int rc = nrw ? rs_spills_lower(&c, orig, next, regcount, cubin, &sst, &e) : rs_sass_lower(&c, orig, next, regcount, cubin, &st, &e);
  if (nrw && !rc) st = sst.low;
  double ms = (rs_now() - t0) * 1e3;
  int status = 0;
  if (rc) {
    fprintf(stderr, "regsweep lower: %s\n", e.msg);
    status = strstr(e.msg, "refused") ? 1 : 2;
  } else if (before && memcmp(before, c.bytes, c.len)) {
    fprintf(stderr, "regsweep lower: %s: pinned lowering changed the cubin (must be byte-identical)\n", cubin);
    status = 1;
  } else if (rs_cubin_write(&c, out, &e)) {
    fprintf(stderr, "regsweep lower: %s\n", e.msg);
    status = 2;
  } else {
    printf("lower: %s: sm_%u, %u functions, %u instructions, %u re-encoded (%u register fields), registers",
           out, c.sm, st.funcs, st.insts, st.changed, st.tokens);
    for (uint32_t k = 0; k < st.funcs && k < 8; k++) printf(" %u -> %u", st.regs_before[k], st.regs_after[k]);
    if (nrw) printf(", %u spill accesses rewritten (%u MOV, %u NOP; 0 hazards with their control bits)", sst.rewritten,
                    sst.movs, sst.nops);
    printf("%s (%.2f ms)\n", before ? ", byte-identical to the input" : "", ms);
  }
  free(before);
  rs_cubin_free(&c);
  if (status || !crosscheck) {
    if (encoder_check) unlink(tmp);
    return status;
  }
  rs_nvdisasm nd;
  rs_crosscheck_stats x;
  if (rs_nvdisasm_open(nvd, &nd, &e) || rs_sass_crosscheck(&nd, out, cubin, next, regcount, &x, &e)) {
    fprintf(stderr, "regsweep lower: crosscheck: %s\n", e.msg);
    unlink(out);
    return 2;
  }
  print_xcheck(&x);
  if (encoder_check) unlink(tmp);
  if (!rs_crosscheck_ok(&x)) {
    if (!encoder_check) fprintf(stderr, "regsweep lower: %s removed: nvdisasm does not read back what we meant\n", out);
    if (!encoder_check) unlink(out);
    return 1;
  }
  return 0;
}

/* The register count each function of cubin `path` needs under `listing` (its lifted
 * functions: widths known), into *out (malloc'd, per cubin function). 0, or 2 with a message. */
int rs_lower_counts(const char *path, const char *lname, const char *listing, uint32_t **out) {
  *out = NULL;
  rs_err e = {{0}};
  rs_module *m = rs_module_parse(lname, rs_xstrndup(listing, strlen(listing)), strlen(listing), RS_SRC_SASS, NULL, &e);
  rs_cubin c;
  memset(&c, 0, sizeof c);
  int status = 0;
  if (!m || rs_cubin_load(path, &c, &e)) {
    fprintf(stderr, "regsweep lower: %s\n", e.msg);
    status = 2;
  } else {
    uint32_t *rc = rs_xcalloc(c.nfuncs + 1, sizeof *rc);
    for (uint32_t k = 0; k < c.nfuncs && !status; k++) {
      uint32_t j = 0;
      while (j < m->nfuncs && strcmp(m->funcs[j]->name, c.funcs[k].name)) j++;
      if (j == m->nfuncs) {
        fprintf(stderr, "regsweep lower: %s: no function %s\n", lname, c.funcs[k].name);
        status = 2;
      } else {
        rc[k] = rs_sass_regcount_of(m->funcs[j]);
      }
    }
    if (status) free(rc);
    else *out = rc;
  }
  rs_cubin_free(&c);
  rs_module_free(m);
  return status;
}

/* NEW must be a recolouring of ORIG: both lifted, every operand reads the same definitions, and
 * NEW's registers colour ORIG's Problem (the verifier's checks: classes, conflicts, fixed
 * registers). A cubin is never written from an unverified assignment. 0, 1 (not a valid
 * recolouring, with the reason) or 2 (a listing that does not parse). */
static int verify_recolouring(const char *on, const char *orig, const char *nn, const char *next) {
  rs_err e = {{0}};
  rs_module *a = rs_module_parse(on, rs_xstrndup(orig, strlen(orig)), strlen(orig), RS_SRC_SASS, NULL, &e);
  rs_module *b = a ? rs_module_parse(nn, rs_xstrndup(next, strlen(next)), strlen(next), RS_SRC_SASS, NULL, &e) : NULL;
  int status = 0;
  if (!b) {
    fprintf(stderr, "regsweep lower: %s\n", e.msg);
    status = 2;
  } else if (a->nfuncs != b->nfuncs) {
    fprintf(stderr, "regsweep lower: %s has %u functions, %s %u\n", nn, b->nfuncs, on, a->nfuncs);
    status = 1;
  }
  uint32_t values = 0;
  for (uint32_t k = 0; !status && k < a->nfuncs; k++) {
    const rs_func *f = a->funcs[k], *g = b->funcs[k];
    int32_t *map = rs_xmalloc(sizeof *map * (f->nvregs + 1));
    char why[300];
    rs_problem *p = NULL;
    /* spill accesses rewritten as MOV/NOP (sass/spills.h): the same definitions through the copies
     * and the frame words, instead of the same partition */
    uint8_t *rw = rs_xcalloc(f->ninsts + 1, 1);
    uint32_t nrw = 0;
    for (uint32_t i = 0; i < f->ninsts && i < g->ninsts && !strcmp(f->name, g->name); i++) {
      const char *x = rs_func_opcode(f, &f->insts[i]), *y = rs_func_opcode(g, &g->insts[i]);
      rw[i] = (!strncmp(x, "STL", 3) || !strncmp(x, "LDL", 3)) && (!strcmp(y, "MOV") || !strcmp(y, "NOP"));
      nrw += rw[i];
    }
    if (nrw) {
      uint32_t uses = 0, bad = rs_spills_check(f, g, rw, &uses, why, sizeof why);
      if (bad) {
        fprintf(stderr, "regsweep lower: %s: %s: not a rewrite of %s: %u reads differ, first: %s\n", nn, g->name, on, bad, why);
        status = 1;
      } else {
        printf("lower: %s: %s: %u spill accesses rewritten, every read of the rest the same definitions (%u reads)\n", nn,
               g->name, nrw, uses);
      }
      free(rw);
      free(map);
      continue;
    }
    free(rw);
    if (strcmp(f->name, g->name) || rs_sass_same_values(f, g, map, why, sizeof why)) {
      fprintf(stderr, "regsweep lower: %s: %s: not a recolouring of %s: %s\n", nn, g->name, on,
              strcmp(f->name, g->name) ? "another function" : why);
      status = 1;
    } else if (!(p = rs_problem_build(f, &e))) {
      fprintf(stderr, "regsweep lower: %s\n", e.msg);
      status = 2;
    } else {
      rs_preg *as = rs_xcalloc(f->nvregs + 1, sizeof *as);
      for (uint32_t v = 0; v < f->nvregs; v++)
        if (map[v] >= 0 && g->truth) as[v] = g->truth[map[v]];
      uint32_t nonmember = 0, viol = rs_truth_check(p, as, &nonmember);
      if (viol || nonmember) {
        fprintf(stderr, "regsweep lower: %s: %s: the new registers violate %u constraints of %s's Problem (%u outside "
                        "their class)\n", nn, g->name, viol == UINT32_MAX ? 0 : viol, on, nonmember);
        status = 1;
      }
      values += p->nvars;
      free(as);
    }
    rs_problem_free(p);
    free(map);
  }
  if (!status) printf("lower: %s is a recolouring of %s: %u values, the same definitions, the verifier's checks pass\n",
                      nn, on, values);
  rs_module_free(a);
  rs_module_free(b);
  return status;
}

static int lower_cmd(int argc, char **argv) {
  const char *pos[3] = {0}, *out = NULL, *nvd = NULL;
  int np = 0;
  bool xc = true, enc = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(argv[i], "--nvdisasm") && i + 1 < argc) nvd = argv[++i];
    else if (!strcmp(argv[i], "--no-crosscheck")) xc = false;
    else if (!strcmp(argv[i], "--encoder-check")) enc = true;
    else if (argv[i][0] != '-' && np < 3) pos[np++] = argv[i];
    else {
      fprintf(stderr, "regsweep lower: unexpected argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (np != 3 || !out == !enc || (enc && !xc)) {
    rs_usage_lower();
    return 2;
  }
  rs_err e = {{0}};
  size_t n;
  char *orig = rs_read_file(pos[1], &n, &e), *next = orig ? rs_read_file(pos[2], &n, &e) : NULL;
  if (!next) {
    fprintf(stderr, "regsweep lower: %s\n", e.msg);
    free(orig);
    return 2;
  }
  uint32_t *rc = NULL;
  int status = verify_recolouring(pos[1], orig, pos[2], next);
  if (!status) status = rs_lower_counts(pos[0], pos[2], next, &rc);
  if (!status) status = rs_lower_file(pos[0], orig, next, rc, out, nvd, xc, !strcmp(orig, next));
  free(rc);
  free(orig);
  free(next);
  return status;
}

int rs_cmd_lower(int argc, char **argv) {
  if (argc < 2 || rs_cli_wants_help(argc, argv)) {
    rs_usage_lower();
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "learn")) return learn_or_check(argc, argv, true);
  if (!strcmp(argv[1], "check")) return learn_or_check(argc, argv, false);
  if (!strcmp(argv[1], "regcounts")) return regcounts(argc, argv);
  if (!strcmp(argv[1], "hazards")) return hazards(argc, argv);
  if (!strcmp(argv[1], "crosscheck")) {
    const char *nvd = argc == 7 && !strcmp(argv[5], "--nvdisasm") ? argv[6] : NULL;
    if (argc != 5 && !nvd) {
      rs_usage_lower();
      return 2;
    }
    rs_err e = {{0}};
    size_t n;
    char *want = rs_read_file(argv[4], &n, &e);
    rs_nvdisasm nd;
    rs_crosscheck_stats x;
    uint32_t *rc = NULL;
    if (!want) {
      fprintf(stderr, "regsweep lower: %s\n", e.msg);
      return 2;
    }
    if (rs_lower_counts(argv[2], argv[4], want, &rc)) {
      free(want);
      return 2;
    }
    if (rs_nvdisasm_open(nvd, &nd, &e) || rs_sass_crosscheck(&nd, argv[2], argv[3], want, rc, &x, &e)) {
      fprintf(stderr, "regsweep lower: %s\n", e.msg);
      free(want);
      free(rc);
      return 2;
    }
    free(want);
    free(rc);
    print_xcheck(&x);
    return rs_crosscheck_ok(&x) ? 0 : 1;
  }
  return lower_cmd(argc, argv);
}

/* `regalloc FILE.cubin [--listing L.sass] --pinned|--free [-o OUT.cubin]` and `regalloc FILE.sass
 * --cubin C.cubin ...`: the listing (nvdisasm's completed one unless given) goes through the
 * ordinary regalloc into a temporary listing, which is lowered into OUT.cubin and crosschecked.
 * Pinned must give a cubin byte-identical to the input. */
int rs_regalloc_cubin(int argc, char **argv) {
  const char *cubin = NULL, *listing = NULL, *out = NULL, *nvd = NULL;
  char **av = rs_xcalloc((size_t)argc + 6, sizeof *av);
  int ac = 0;
  bool pin = false, scoreboards = true;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    size_t n = strlen(a);
    if (i && (!strcmp(a, "--cubin") || !strcmp(a, "--listing") || !strcmp(a, "--nvdisasm") || !strcmp(a, "-o")) &&
        i + 1 < argc) {
      const char **dst = a[2] == 'c' ? &cubin : a[2] == 'l' ? &listing : a[2] == 'n' ? &nvd : &out;
      *dst = argv[++i];
      continue;
    }
    if ((!strcmp(a, "--function") || !strcmp(a, "--target")) && i + 1 < argc) {
      av[ac++] = argv[i++];
      av[ac++] = argv[i];
      continue;
    }
    if (!strcmp(a, "--no-scoreboards")) scoreboards = false;
    else if (i && a[0] != '-' && n > 6 && !strcmp(a + n - 6, ".cubin")) cubin = a;
    else if (i && a[0] != '-' && !listing) listing = a;
    else av[ac++] = argv[i];
    pin |= !strcmp(a, "--pinned");
  }
  rs_err e = {{0}};
  char *orig = NULL, tin[] = "/tmp/regsweep-ra-in-XXXXXX", tout[] = "/tmp/regsweep-ra-out-XXXXXX";
  int status = 0, fi = -1, fo = -1;
  size_t n;
  if (!cubin || (out && (n = strlen(out), n < 6 || strcmp(out + n - 6, ".cubin")))) {
    fprintf(stderr, "regsweep regalloc: %s\n", !cubin ? "which cubin? (FILE.cubin, or --cubin with a listing)"
                                                        : "-o must name a .cubin when the input is a cubin");
    free(av);
    return 2;
  }
  if (listing) {
    orig = rs_read_file(listing, &n, &e);
  } else {
    rs_nvdisasm nd;
    rs_sass_stats st;
    static const char *const args[] = {"-c", NULL};
    if (!rs_nvdisasm_open(nvd, &nd, &e)) rs_sass_disasm(&nd, cubin, args, &orig, &st, &e);
  }
  if (!orig) {
    fprintf(stderr, "regsweep regalloc: %s\n", e.msg);
    free(av);
    return 2;
  }
  fi = mkstemp(tin);
  fo = mkstemp(tout);
  FILE *f = fi >= 0 ? fdopen(fi, "w") : NULL;
  if (!f || fo < 0 || fputs(orig, f) < 0 || fclose(f)) {
    fprintf(stderr, "regsweep regalloc: cannot write a temporary listing: %s\n", strerror(errno));
    status = 2;
  }
  if (fo >= 0) close(fo);
  /* the ordinary run on the listing (its output, messages and status) */
  av[ac++] = tin;
  if (scoreboards) { /* ptxas's control bits are kept: its scoreboards join the Problem */
    av[ac++] = "--scoreboards";
    av[ac++] = (char *)cubin;
  }
  if (!pin && out) {
    av[ac++] = "-o";
    av[ac++] = tout;
  }
  av[ac] = NULL;
  if (!status) status = rs_cmd_regalloc(ac, av);
  if (!status && out) {
    char *next = pin ? rs_xstrndup(orig, strlen(orig)) : rs_read_file(tout, &n, &e);
    uint32_t *rc = NULL;
    if (!next) {
      fprintf(stderr, "regsweep regalloc: %s\n", e.msg);
      status = 2;
    } else if (!(status = rs_lower_counts(cubin, pin ? tin : tout, next, &rc))) {
      status = rs_lower_file(cubin, orig, next, rc, out, nvd, true, pin);
    }
    free(rc);
    free(next);
  }
  unlink(tin);
  unlink(tout);
  free(orig);
  free(av);
  return status;
}
