/* cmd_regalloc.c - `regsweep regalloc`: register allocation on machine code (NVIDIA SASS), its
 * options and its lines. The work is mcode/'s pipeline (mcode/mcode.h): the input loaded once
 * (a listing, a cubin, or every form-sass row of a corpus), pinned or free colouring, the
 * write-back's independent check and, for a cubin with -o, lowering and nvdisasm's crosscheck.
 * docs/ARCHITECTURE.md follows `regalloc --free K.cubin -o OUT.cubin` through it. */
#include "cli/cli.h"
#include "mcode/mcode.h"
#include "sass/sass.h"
#include "storage/corpus.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rs_usage_regalloc(void) {
  puts("usage: regsweep regalloc FILE.sass --pinned [-q] [--function NAME] [--target T]\n"
       "       regsweep regalloc FILE.sass --free [-o OUT.sass] [-q] [--target T] [--scoreboards C.cubin] [--no-spills]\n"
       "       regsweep regalloc CORPUS.h5 --pinned|--free [-q]   (every form-sass instance)\n"
       "       regsweep regalloc FILE.cubin [--listing L.sass] --pinned|--free [-o OUT.cubin] [--nvdisasm P]\n"
       "       regsweep regalloc FILE.sass --cubin C.cubin --pinned|--free [-o OUT.cubin] [--no-scoreboards]\n"
       "\n"
       "--pinned: rebuild liveness and interference, colour with the listing's own registers (they\n"
       "must be a valid colouring of the Problem), write the listing back and compare it with the\n"
       "input register for register. Prints per function 'identical' (or, with -q, nothing); a\n"
       "failure names the function, the instruction address and the expected and actual register.\n"
       "--free: recolour every function with Chaitin-Briggs over R, UR, P, UP and B together,\n"
       "minimising R, each value then moved to the lowest register that fits; print 'R: N -> M\n"
       "registers, occupancy A -> B warps/SM' (N, M as ptxas counts: highest R + 3). Never worse\n"
       "than ptxas: where ptxas's own colouring, lowered the same way, is cheaper, it is the result\n"
       "and the line says \"ptxas's own colouring kept|lowered (ours needed K R)\" (or \"ours left K\n"
       "values without a register\"). Write the recoloured listing to OUT;\n"
       "check it by re-lifting it (same values, every use reading the same definitions: 'contributor\n"
       "sets equivalent (N uses)') and against the verifier's checks ('verifier: pass'). One colouring\n"
       "('1 round'): the Problem keeps apart what a re-lift would join; a join is a failure.\n"
       "A cubin: its completed nvdisasm listing (or L.sass) is allocated as above; with -o the result is\n"
       "lowered into a copy of the cubin (regsweep lower: changed instructions re-encoded, register count\n"
       "set; pinned must be byte-identical) and crosschecked by nvdisasm; a mismatch removes OUT.\n"
       "--scoreboards C.cubin lends a listing its cubin's control bits (a cubin input, or a corpus row\n"
       "that keeps one, passes its own). Lowering keeps them, so ptxas's scoreboards join the Problem:\n"
       "a value an in-flight load, store or MUFU still reads or writes conflicts with every value\n"
       "written (or touched) before the wait on it (cubin/scoreboard.c, cubin/hazard.c's walk; 'S\n"
       "scoreboard conflicts' on the line; pinned checks ptxas's colouring against them too).\n"
       "--no-scoreboards leaves them out (to measure what they cost: lowering then refuses a kernel\n"
       "with a race).\n"
       "Spill slots ([R1+k] words of STL/LDL, sass/spills.h) are values of free mode: where a register\n"
       "below the kernel's register count is free for one, its STL and loads become MOV (or NOP) in place;\n"
       "'spills: S stores, L loads -> s, l (frame F -> f bytes)' per function. --no-spills keeps them.\n"
       "A form the opcode table lacks is read with the row nvdisasm -plr gives (a cubin, or a listing\n"
       "with -plr columns: corpus disasm --plr); each line using one ends 'inferred rows (nvdisasm -plr):\n"
       "FORM/N ...', and a function is kept only if pinned reproduces ptxas with them; a form not\n"
       "inferred refuses its function by name. Free: a function whose colouring the check refuses keeps\n"
       "ptxas's colouring, its line says why, and a summary line counts them (exit 1).\n"
       "Exit status: 0 identical / valid, 1 a failure, a refused function or a kept colouring, 2 bad input\n"
       "(file:line: message).");
}

static void print_msgs(const rs_mc_msgs *l) {
  for (uint32_t i = 0; i < l->n; i++) fprintf(stderr, "%s\n", l->v[i]);
}

/* "; inferred rows FORM/N ..." when f was read with rows from nvdisasm -plr (sass/infer.c) */
static void inferred_note(const rs_mc *mc, const char *func, char *buf, size_t cap) {
  char rows[300];
  *buf = 0;
  if (mc && rs_sass_inferred_in(mc->inferred, func, rows, sizeof rows))
    snprintf(buf, cap, "; inferred rows (nvdisasm -plr): %s", rows);
}

static void print_pinned(const rs_mc *mc, const rs_mc_pin *r, bool quiet) {
  print_msgs(&r->msgs);
  char inf[360];
  inferred_note(mc, r->name, inf, sizeof inf);
  if (!r->fails && !quiet)
    printf("regalloc(pinned): %s: identical (%u values, %u instructions, %u interference edges)%s\n", r->name, r->nvars,
           r->ninsts, r->nconf, inf);
  else if (r->fails)
    fprintf(stderr, "regalloc(pinned): %s: %u failure(s)\n", r->name, r->fails);
}

static void print_free(const rs_mc *mc, const rs_mc_recolour *r, bool quiet) {
  if (r->fails == UINT32_MAX) return;
  print_msgs(&r->msgs);
  for (uint32_t k = 0; k < r->nfuncs; k++) {
    const rs_mc_fn *f = &r->fn[k];
    print_msgs(&f->msgs);
    char contrib[96], floor[320] = "", sb[48] = "";
    if (r->scoreboards) snprintf(sb, sizeof sb, " %u scoreboard conflicts,", f->nsb);
    if (!r->checked) snprintf(contrib, sizeof contrib, "contributor sets not checked (no written listing)");
    else if (f->differ) snprintf(contrib, sizeof contrib, "contributor sets DIFFER (%u of %u uses)", f->differ, f->uses);
    else snprintf(contrib, sizeof contrib, "contributor sets equivalent (%u uses)", f->uses);
    if (f->kept) /* the one line saying why (function, reason): counted, exit 1 */
      snprintf(floor, sizeof floor, "; ptxas's own colouring kept (free mode could not colour it validly%.240s)",
               f->kept_why);
    else if (f->extern_call)
      snprintf(floor, sizeof floor, "; ptxas's own colouring kept (an external call, CALL.ABS.NOINC: its ABI is not modelled)");
    else if (f->floored && f->uncoloured)
      snprintf(floor, sizeof floor, "; ptxas's own colouring %s (ours left %u values without a register)",
               f->after < f->before ? "lowered" : "kept", f->uncoloured);
    else if (f->floored)
      snprintf(floor, sizeof floor, "; ptxas's own colouring %s (ours needed %u R)",
               f->after < f->before ? "lowered" : "kept", f->ours);
    char spl[400], inf[360];
    rs_mc_spills_line(r, k, spl, sizeof spl);
    inferred_note(mc, f->name, inf, sizeof inf);
    if (!quiet)
      printf("regalloc(free): %s: R: %u -> %u registers, occupancy %u -> %u warps/SM (%u values, 1 round,%s %.1f ms); "
             "%s, verifier: %s%s%s%s\n",
             f->name, f->before, f->after, f->occ_before, f->occ_after, f->nvars, sb, f->secs * 1e3, contrib,
             f->vpass ? "pass" : "FAIL", floor, spl, inf);
  }
}

/* Functions free mode kept in ptxas's colouring (it could not colour them validly): counted on
 * one line; the run exits 1 when there is any (as for a refused function). */
static uint32_t kept_summary(const rs_mc_recolour *r, const char *path) {
  uint32_t kept = 0;
  for (uint32_t k = 0; k < r->nfuncs && r->fn; k++) kept += r->fn[k].kept;
  if (kept) fprintf(stderr, "regsweep regalloc: %s: %u of %u functions kept ptxas's colouring (free mode could not colour them validly)\n", path, kept, r->nfuncs);
  return kept;
}

/* Pinned over the functions of mc (or the one named); returns failures, status 2 set on bad input. */
static uint32_t run_pinned(const rs_mc *mc, const char *function, bool quiet, bool stop_on_bad, int *status,
                           uint32_t *done, rs_err *e) {
  uint32_t fails = 0;
  for (uint32_t k = 0; k < mc->m->nfuncs; k++) {
    if (function && strcmp(mc->m->funcs[k]->name, function)) continue;
    (*done)++;
    rs_mc_pin r;
    uint32_t b = rs_mc_pinned(mc, k, &r, e);
    if (b != UINT32_MAX) print_pinned(mc, &r, quiet);
    rs_mc_pin_free(&r);
    if (b == UINT32_MAX) {
      *status = 2;
      if (stop_on_bad) return UINT32_MAX;
      fprintf(stderr, "regsweep regalloc: %s\n", e->msg);
    } else {
      fails += b;
    }
  }
  return fails;
}

/* Every form-sass instance of a corpus: pinned or free on each listing, one line per instance
 * ("instance ID: identical|valid|FAILED, T ms": wall clock of parse + lift + the run), then the
 * totals. Returns 0, 1 (a failure) or 2 (bad input). */
static int corpus_mode(const char *path, bool pin, bool quiet) {
  /* line by line: a failed instance's lines go to stderr, and a reader of both streams
   * (2>&1) must get whole lines in order, each instance's function lines before its own */
  setvbuf(stdout, NULL, _IOLBF, 0);
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_open(path, &e);
  if (!c) {
    fprintf(stderr, "regsweep regalloc: %s\n", e.msg);
    return 2;
  }
  uint64_t n = rs_corpus_count(c);
  uint32_t done = 0, failed = 0, bad = 0, kept = 0;
  for (uint64_t i = 0; i < n; i++) {
    rs_instance in;
    if (rs_corpus_get(c, i, &in, 1, &e)) {
      fprintf(stderr, "regsweep regalloc: %s\n", e.msg);
      bad++;
      break;
    }
    if (strcmp(in.form, "sass") || !in.raw) {
      rs_instance_clear(&in);
      continue;
    }
    double t0 = rs_now();
    rs_err pe = {{0}};
    rs_mc mc;
    uint32_t fails = rs_mc_instance(&mc, &in, &pe) ? UINT32_MAX : 0;
    if (!fails && mc.m && mc.m->nrefused) fails = rs_cli_refusals("regalloc", in.id, mc.m, true); /* named */
    int st = 0;
    uint32_t nd = 0, ikept = 0;
    if (!fails && pin) fails = run_pinned(&mc, NULL, quiet, true, &st, &nd, &pe);
    if (!fails && !pin) {
      rs_mc_recolour r;
      fails = rs_mc_free(&mc, &r, &pe);
      print_free(&mc, &r, quiet);
      if (fails != UINT32_MAX) ikept = kept_summary(&r, in.id);
      rs_mc_recolour_free(&r);
    }
    char inf[300] = ""; /* the row's params inferred_forms, read by the parser */
    for (uint32_t j = 0; mc.inferred && j < mc.inferred->n; j++) {
      if (!mc.inferred->v[j].nfuncs) continue; /* the table read it (RS_TEST_MASK_ROWS unset) */
      size_t l = strlen(inf);
      snprintf(inf + l, sizeof inf - l, "%s%s/%u", *inf ? ", " : "; inferred forms (nvdisasm -plr): ",
               mc.inferred->v[j].form, mc.inferred->v[j].nops);
    }
    if (mc.m) rs_mc_free_input(&mc);
    double ms = (rs_now() - t0) * 1e3;
    done++;
    if (fails == UINT32_MAX) fprintf(stderr, "instance %s: bad input: %s\n", in.id, pe.msg), bad++;
    else if (fails) fprintf(stderr, "instance %s: FAILED (%u), %.1f ms\n", in.id, fails, ms), failed++;
    else if (!quiet) printf("instance %s: %s%s%s, %.1f ms\n", in.id, pin ? "identical" : "valid",
                            ikept ? " (ptxas's colouring kept where free mode could not colour validly)" : "", inf, ms);
    kept += ikept;
    rs_instance_clear(&in);
  }
  rs_corpus_close(c, &e);
  if (!quiet || failed || bad)
    printf("regalloc(%s): %s: %u sass instances, %u failures, %u refused, %u functions kept ptxas's colouring\n",
           pin ? "pinned" : "free", path, done, failed, bad, kept);
  return bad ? 2 : failed || kept ? 1 : 0;
}

int rs_cmd_regalloc(int argc, char **argv) {
  const char *file = NULL, *function = NULL, *target = NULL, *out = NULL, *cpath = NULL, *listing = NULL,
             *nvd = NULL;
  bool pin = false, quiet = false, recolour = false, scoreboards = true, cubin_in = false, spills = true;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    size_t n = strlen(a);
    bool v = i + 1 < argc;
    if (!strcmp(a, "--pinned")) pin = true;
    else if (!strcmp(a, "--free")) recolour = true;
    else if (!strcmp(a, "-o") && v) out = argv[++i];
    else if (!strcmp(a, "-q")) quiet = true;
    else if (!strcmp(a, "--function") && v) function = argv[++i];
    else if (!strcmp(a, "--target") && v) target = argv[++i];
    else if (!strcmp(a, "--scoreboards") && v) cpath = argv[++i];
    else if (!strcmp(a, "--cubin") && v) cpath = argv[++i], cubin_in = true;
    else if (!strcmp(a, "--listing") && v) listing = argv[++i], cubin_in = true;
    else if (!strcmp(a, "--nvdisasm") && v) nvd = argv[++i];
    else if (!strcmp(a, "--no-scoreboards")) scoreboards = false;
    else if (!strcmp(a, "--no-spills")) spills = false;
    else if (a[0] != '-' && n > 6 && !strcmp(a + n - 6, ".cubin") && !cpath) cpath = a, cubin_in = true;
    else if (a[0] != '-' && !file) file = a;
    else {
      fprintf(stderr, "regsweep regalloc: unexpected argument '%s'\n", a);
      return 2;
    }
  }
  if (cubin_in) { /* a cubin in, or out: lowered around the run on its listing */
    size_t n;
    if (!cpath || (out && (n = strlen(out), n < 6 || strcmp(out + n - 6, ".cubin")))) {
      fprintf(stderr, "regsweep regalloc: %s\n", !cpath ? "which cubin? (FILE.cubin, or --cubin with a listing)"
                                                         : "-o must name a .cubin when the input is a cubin");
      return 2;
    }
    if (file && listing) {
      fprintf(stderr, "regsweep regalloc: unexpected argument '%s'\n", file);
      return 2;
    }
    if (file) listing = file;
  }
  if (!cubin_in && (nvd || !scoreboards)) { /* a cubin's options */
    fprintf(stderr, "regsweep regalloc: unexpected argument '%s'\n", nvd ? "--nvdisasm" : "--no-scoreboards");
    return 2;
  }
  if ((!file && !cubin_in) || pin == recolour || (out && !recolour && !cubin_in)) {
    rs_usage_regalloc();
    return 2;
  }
  size_t fl = file ? strlen(file) : 0;
  if (!cubin_in && fl > 3 && !strcmp(file + fl - 3, ".h5")) {
    if (out || function || target) {
      fprintf(stderr, "regsweep regalloc: a corpus takes no -o, --function or --target\n");
      return 2;
    }
    return corpus_mode(file, pin, quiet);
  }
  rs_err e = {{0}};
  rs_mc mc;
  if (cubin_in ? rs_mc_cubin(&mc, cpath, listing, target, nvd, scoreboards, &e)
               : rs_mc_listing(&mc, file, target, cpath, &e)) {
    fprintf(stderr, "regsweep regalloc: %s\n", e.msg);
    return 2;
  }
  if (mc.codeless) { /* a host-only unit's cubin: read, nothing to allocate; -o: ptxas's bytes */
    int st = 0;
    if (function) fprintf(stderr, "regsweep regalloc: %s: no function '%s' (a cubin without code)\n", cpath, function), st = 2;
    else printf("regalloc(%s): %s: no functions (no .text.<function> section: a cubin without code): nothing to "
                "allocate%s\n", pin ? "pinned" : "free", cpath, out ? "; written unchanged" : "");
    if (!st && out && rs_cubin_write(&mc.cub, out, &e)) fprintf(stderr, "regsweep regalloc: %s\n", e.msg), st = 2;
    rs_mc_free_input(&mc);
    return st;
  }
  /* functions refused alone (an unknown form): named, the others go on, exit 1 (issue 42) */
  uint32_t refused = rs_cli_refusals("regalloc", cubin_in ? cpath : file, mc.m, quiet);
  int status = 0;
  uint32_t kept = 0;
  rs_mc_recolour r;
  memset(&r, 0, sizeof r);
  mc.no_spills = !spills;
  if (recolour) {
    uint32_t fails = rs_mc_free(&mc, &r, &e);
    print_free(&mc, &r, quiet);
    if (fails != UINT32_MAX) kept = kept_summary(&r, cubin_in ? cpath : file);
    if (fails == UINT32_MAX) fprintf(stderr, "regsweep regalloc: %s\n", e.msg);
    status = fails == UINT32_MAX ? 2 : fails ? 1 : 0;
    if (!status && out && !cubin_in) { /* the recoloured listing */
      FILE *fp = fopen(out, "w");
      if (!fp || fputs(r.text, fp) < 0 || fclose(fp)) {
        fprintf(stderr, "regsweep regalloc: %s: cannot write the recoloured listing\n", out);
        status = 2;
      }
    }
  } else {
    uint32_t done = 0, fails = run_pinned(&mc, function, quiet, false, &status, &done, &e);
    if (function && !done && !refused) {
      fprintf(stderr, "regsweep regalloc: %s: no function '%s'\n", cubin_in ? mc.m->path : file, function);
      status = 2;
    }
    if (!status && fails) status = 1;
  }
  if (!status && cubin_in && out) { /* lowered into OUT.cubin and crosschecked; pinned: byte-identical */
    /* free: a function no field can write, or that races, keeps ptxas's code (exit 1, named) */
    rs_mc_lower_opts o = {.out = out, .nvd = nvd, .crosscheck = true, .must_be_identical = pin, .hazards_refuse = true,
                          .keep_refused = !pin, .probe_only = rs_lower_probe_only()};
    rs_mc_lowered lr;
    int ls = rs_mc_lower(&mc, pin ? mc.m->text : r.text, pin ? mc.m : r.relift, &o, &lr, &e);
    status = rs_lower_print(&mc, &o, &lr, ls, &e);
    rs_mc_lowered_free(&lr);
  }
  rs_mc_recolour_free(&r);
  rs_mc_free_input(&mc);
  return !status && (refused || kept) ? 1 : status;
}
