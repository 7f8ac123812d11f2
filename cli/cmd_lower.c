/* cmd_lower.c - `regsweep lower`: its options and lines. Lowering a recolouring into a cubin
 * (and its crosscheck, hazards) is mcode/'s pipeline (mcode/mcode.h), the learned register
 * fields (learn, check) and register counts cubin/'s (cubin/lower.h); cli/lowered.c prints a
 * lowering. */
#include "cli/cli.h"
#include "mcode/mcode.h"
#include "sass/sass.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rs_usage_lower(void) {
  puts("usage: regsweep lower FILE.cubin ORIG.sass NEW.sass -o OUT.cubin [--nvdisasm PATH] [--no-crosscheck]\n"
       "       regsweep lower FILE.cubin ORIG.sass NEW.sass --encoder-check [--nvdisasm PATH]\n"
       "       regsweep lower learn [-o cubin/fields.c] [--merge BASE.c] [--probe] [--nvdisasm PATH] IN...\n"
       "       regsweep lower check [--no-probe] [--nvdisasm PATH] IN...\n"
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
       "           come out identical (what makes a field trusted),\n"
       "           and nvdisasm's probe of one instruction per form (cubin/probe.c) must put every trusted field\n"
       "           where the table does (--no-probe: skip it). learn --probe: the probe decides what the samples leave\n"
       "           tied or open and replaces a base field it contradicts.\n"
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
  if (rs_nvdisasm_open(nvd, &nd, e) || rs_sass_disasm_loaded(&nd, c, path, path, args, listing, &st, e)) return -1;
  return 0;
}

static int learn_or_check(int argc, char **argv, bool learn) {
  const char *out = NULL, *nvd = NULL, *base = NULL;
  rs_sass_learner *L = learn ? rs_sass_learner_new() : NULL;
  rs_sass_fieldcheck tot = {0};
  rs_sass_probecheck ptot = {0};
  rs_sass_probe_stats lprobe = {0};
  int status = 0, nin = 0;
  bool probe = !learn; /* check: every row against nvdisasm's probe; learn: with --probe */
  for (int i = 2; i < argc; i++)
    if (!strcmp(argv[i], "--nvdisasm") && i + 1 < argc) nvd = argv[++i];
    else if (!strcmp(argv[i], "--probe")) probe = true;
    else if (!strcmp(argv[i], "--no-probe")) probe = false;
  rs_nvdisasm nd;
  if (probe) {
    rs_err e = {{0}};
    if (rs_nvdisasm_open(nvd, &nd, &e)) {
      fprintf(stderr, "regsweep lower: the probe needs nvdisasm: %s\n", e.msg);
      rs_sass_learner_free(L);
      return 2;
    }
  }
  for (int i = 2; i < argc && status != 2; i++) {
    if (!strcmp(argv[i], "--probe") || !strcmp(argv[i], "--no-probe")) continue;
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
      rs_sass_probecheck pc = {0};
      if (probe && rs_sass_fields_probecheck(&nd, &c, listing, argv[i], &pc, &e)) {
        fprintf(stderr, "PROBE %s\n", e.msg);
        status = 1;
      }
      ptot.forms += pc.forms, ptot.confirmed += pc.confirmed, ptot.open += pc.open;
      ptot.probe.runs += pc.probe.runs, ptot.probe.variants += pc.probe.variants, ptot.probe.ms += pc.probe.ms;
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
  if (learn && status == 0 && probe) {
    rs_err e = {{0}};
    if (rs_sass_learn_probe(L, &nd, &lprobe, &e)) fprintf(stderr, "regsweep lower: probe: %s\n", e.msg), status = 2;
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
    if (probe)
      fprintf(stderr,
              "probe (nvdisasm): %u forms, %u fields found in %u variants, %u nvdisasm runs (%u variants rejected), "
              "%.0f ms; %u fields agreed, %u set by it (%u the samples alone had elsewhere, %u of the base's "
              "replaced)\n",
              lprobe.insts, lprobe.fields, lprobe.variants, lprobe.runs, lprobe.rejected, lprobe.ms, ls.probe_confirmed,
              ls.probe_set, ls.probe_contradicted, ls.probe_replaced);
    free(src);
  }
  if (!learn)
    printf("total: %u instructions, %u reproduced, %u fields re-encoded, %u untrusted, %u forms unknown\n", tot.insts,
           tot.reproduced, tot.tokens, tot.untrusted, tot.unknown_forms);
  if (!learn && probe)
    printf("probe: %u forms (one instruction each, per listing), %u table fields confirmed by nvdisasm, %u it left "
           "open, 0 contradicted%s; %u variants in %u nvdisasm runs, %.0f ms\n", ptot.forms, ptot.confirmed,
           ptot.open, status ? " (but see PROBE above)" : "", ptot.probe.variants, ptot.probe.runs, ptot.probe.ms);
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

/* A listing file lifted as SASS (its own name in messages). */
static rs_module *lift_file(const char *path, char **text, rs_err *e) {
  size_t n;
  if (!(*text = rs_read_file(path, &n, e))) return NULL;
  return rs_sass_from_text(path, rs_xstrndup(*text, n), n, NULL, NULL, e);
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
  rs_mc mc;
  memset(&mc, 0, sizeof mc);
  char *next = NULL;
  rs_module *b = NULL;
  /* NEW must be a recolouring of ORIG: a cubin is never written from an unverified assignment */
  int status = rs_mc_cubin(&mc, pos[0], pos[1], NULL, nvd, true, &e) || !(b = lift_file(pos[2], &next, &e)) ? 2 : 0;
  uint32_t values = 0;
  if (!status) status = rs_mc_is_recolouring(&mc, b, &values, &e);
  if (status) {
    fprintf(stderr, "regsweep lower: %s\n", e.msg);
  } else {
    printf("lower: %s is a recolouring of %s: %u values, the same definitions, the verifier's checks pass\n", pos[2],
           pos[1], values);
    /* a function no field can write, or that races, keeps ptxas's code (exit 1, named) */
    rs_mc_lower_opts o = {.out = out, .nvd = nvd, .crosscheck = xc, .must_be_identical = !strcmp(mc.m->text, next),
                          .hazards_refuse = true, .keep_refused = out != NULL, .probe_only = rs_lower_probe_only()};
    rs_mc_lowered r;
    status = rs_lower_print(&mc, &o, &r, rs_mc_lower(&mc, next, b, &o, &r, &e), &e);
    rs_mc_lowered_free(&r);
  }
  rs_module_free(b);
  free(next);
  if (mc.m) rs_mc_free_input(&mc);
  return status;
}

/* `lower crosscheck WRITTEN ORIG INTENDED`: the counts INTENDED needs, nvdisasm's verdict. */
static int crosscheck_cmd(int argc, char **argv) {
  const char *nvd = argc == 7 && !strcmp(argv[5], "--nvdisasm") ? argv[6] : NULL;
  if (argc != 5 && !nvd) {
    rs_usage_lower();
    return 2;
  }
  rs_err e = {{0}};
  rs_cubin w;
  memset(&w, 0, sizeof w);
  char *want = NULL;
  rs_module *n = lift_file(argv[4], &want, &e);
  uint32_t *rc = NULL;
  rs_nvdisasm nd;
  rs_crosscheck_stats x;
  int status = !n || rs_cubin_load(argv[2], &w, &e) || rs_mc_regcounts(&w, n, argv[4], &rc, &e) ||
                       rs_nvdisasm_open(nvd, &nd, &e) || rs_sass_crosscheck(&nd, argv[2], argv[3], want, rc, &x, &e)
                   ? 2
                   : 0;
  if (status) fprintf(stderr, "regsweep lower: %s\n", e.msg);
  else rs_print_xcheck(&x), status = rs_crosscheck_ok(&x) ? 0 : 1;
  free(rc);
  free(want);
  rs_module_free(n);
  rs_cubin_free(&w);
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
  if (!strcmp(argv[1], "crosscheck")) return crosscheck_cmd(argc, argv);
  return lower_cmd(argc, argv);
}
