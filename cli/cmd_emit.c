/* cmd_emit.c - `regsweep emit`: a passing answer to assembly / an HSA code object via llc. */
#include "cli/cli.h"
#include "corpus/truth.h"
#include "emit/emit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rs_usage_emit(void) {
  puts("usage: regsweep emit (--corpus corpus.h5 --instance ID | FILE.mir) ANSWER.json -o OUT.s|OUT.hsaco|OUT.mir\n"
       "       [--function NAME] [--force] [--opt N] [--llc PATH] [--lld PATH] [--keep DIR]\n"
       "       regsweep emit (--corpus corpus.h5 --instance ID | FILE.sass) ANSWER.json -o OUT.cubin\n"
       "       [--cubin FILE.cubin] [--nvdisasm PATH] [--no-crosscheck]\n"
       "\n"
       "NVIDIA (a form-sass instance, OUT.cubin): the answer must pass our verifier; the listing is written\n"
       "back under it and re-lifted (every operand reading the same definitions), the changed instructions\n"
       "are re-encoded into a copy of the instance's cubin (the corpus keeps it; else --cubin) with the\n"
       "register count set, and nvdisasm reads the result back: every instruction as meant, .nv.info as the\n"
       "original's but the count (docs/lower.md). A cubin is never written from a rejected answer.\n"
       "\n"
       "Substitutes the answer's registers for the virtual registers of the instance's MIR (prera or\n"
       "postsplit form) and lets llc-14 finish after register allocation (-start-after=virtregrewriter,1,\n"
       "with -verify-machineinstrs: LLVM's MachineVerifier checks every emitted kernel): OUT.s is the\n"
       "assembly, OUT.hsaco an HSA code object (llc -filetype=obj, ld.lld-14 -shared), OUT.mir the\n"
       "rewritten MIR. ANSWER.json as for `regsweep verify` ('-' reads stdin; 'truth' takes the corpus\n"
       "instance's ground truth). Prints the verdict, what the rewrite did, and the kernel's register\n"
       "counts next to the verifier's. Loading the code object with HIP: docs/emit.md.\n"
       "  --force     emit a rejected answer anyway (debugging; the output's first line says so; .s/.mir only)\n"
       "  --opt N     llc -O level (default: the corpus variant's opt axis, else 2)\n"
       "  --keep DIR  keep the work files (kernel.mir, kernel.s) in DIR\n"
       "Exit status: 0 emitted, 1 refused (the verifier rejects the answer) or llc rejected it\n"
       "(a verifier bug when the answer passed), 2 bad input or a tool failure.");
}

static char *read_answer(const char *path, size_t *len, rs_err *e) {
  if (strcmp(path, "-")) return rs_read_file(path, len, e);
  size_t cap = 65536, n = 0, r;
  char *b = rs_xmalloc(cap);
  while ((r = fread(b + n, 1, cap - n - 1, stdin)) > 0) {
    n += r;
    if (n + 1 >= cap) {
      if (cap > (8u << 20)) break;
      b = rs_xrealloc(b, cap *= 2);
    }
  }
  b[n] = 0;
  *len = n;
  return b;
}

/* The answer text: a file, '-' (stdin) or 'truth' (the instance's ground truth). NULL on error. */
static char *answer_text(const rs_loaded *l, const char *ans_path, const char *what, size_t *len) {
  rs_err e = {{0}};
  char *text;
  if (!strcmp(ans_path, "truth")) {
    if (!l->row.truth && l->f->truth && l->p) { /* a SASS listing file: its own registers */
      text = rs_truth_json(l->p, l->f->truth);
      *len = strlen(text);
      return text;
    }
    if (!l->row.truth) {
      fprintf(stderr, "regsweep emit: %s has no ground truth (%s)\n", l->row.id[0] ? l->row.id : what,
              l->row.truth_reason[0] ? l->row.truth_reason : "not a corpus instance");
      return NULL;
    }
    text = rs_xstrndup(l->row.truth, strlen(l->row.truth));
    *len = strlen(text);
    return text;
  }
  if (!(text = read_answer(ans_path, len, &e))) fprintf(stderr, "regsweep emit: %s\n", e.msg);
  return text;
}

/* emit ... -o OUT.cubin: a form-sass instance (emit/sass.c). */
static int emit_cubin(const char *corpus, const char *instance, const char *file, const char *function,
                      const char *ans_path, const char *out, const char *cubin_path, const char *nvd, bool xc) {
  rs_err e = {{0}};
  rs_loaded l;
  if (rs_load_named(corpus, instance, file, function, &l, &e)) {
    fprintf(stderr, "regsweep emit: %s\n", e.msg);
    return 2;
  }
  size_t len = 0, clen = 0;
  char *text = answer_text(&l, ans_path, file, &len);
  uint8_t *cub = NULL;
  if (text && cubin_path && !(cub = (uint8_t *)rs_read_file(cubin_path, &clen, &e)))
    fprintf(stderr, "regsweep emit: %s\n", e.msg);
  int status = 2;
  if (text && (cub || !cubin_path)) {
    rs_emit_sass_result r;
    int rc = rs_emit_sass(&l, text, len, cub ? cub : l.row.cubin, cub ? clen : l.row.cubin_len, out, nvd, xc, &r, &e);
    const char *id = l.row.id[0] ? l.row.id : file;
    if (rc < 0) {
      fprintf(stderr, "regsweep emit: %s\n", e.msg);
    } else {
      printf("%s: %s: verifier %s\n", id, l.f->name, rs_verdict_str(r.verdict.verdict));
      for (uint32_t i = 0; i < r.verdict.ndiag; i++) printf("  - %s\n", r.verdict.diag[i]);
      if (r.refused || r.encode_refused) {
        printf("refused: %s\n", r.why);
      } else {
        printf("lower: %u instructions, %u re-encoded (%u register fields), registers %u -> %u (%.2f ms)\n",
               r.low.insts, r.low.changed, r.low.tokens, r.low.regs_before[0], r.regs[0], r.lower_s * 1e3);
        if (r.crosschecked)
          printf("crosscheck (nvdisasm): %u instructions, %u mismatches; other lines %u, %u differ; register counts "
                 "%u/%u as meant; -plr above the count: %u (%.2f s): %s\n",
                 r.x.insts, r.x.mismatches, r.x.attrs, r.x.attr_mismatches, r.x.regcount_ok, r.x.funcs, r.x.plr_over,
                 r.xcheck_s, rs_crosscheck_ok(&r.x) ? "ok" : "MISMATCH (removed)");
        else
          printf("crosscheck: not run (--no-crosscheck)\n");
        if (r.crosschecked && !rs_crosscheck_ok(&r.x)) printf("first mismatch: %s\n", r.x.first);
        else printf("wrote %s\n", out);
      }
      status = rc;
    }
  }
  free(cub);
  free(text);
  rs_loaded_free(&l);
  return status;
}

int rs_cmd_emit(int argc, char **argv) {
  const char *corpus = NULL, *instance = NULL, *function = NULL, *out = NULL, *pos[2] = {0, 0};
  int npos = 0, opt = -1;
  const char *cubin_path = NULL, *nvdisasm = NULL;
  bool crosscheck = true;
  rs_emit_opts o;
  memset(&o, 0, sizeof o);
  rs_llc_opts_default(&o.llc);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool v = i + 1 < argc;
    if (!strcmp(a, "--corpus") && v) corpus = argv[++i];
    else if (!strcmp(a, "--instance") && v) instance = argv[++i];
    else if (!strcmp(a, "--function") && v) function = argv[++i];
    else if (!strcmp(a, "-o") && v) out = argv[++i];
    else if (!strcmp(a, "--opt") && v) opt = atoi(argv[++i]);
    else if (!strcmp(a, "--llc") && v) o.llc.llc = argv[++i];
    else if (!strcmp(a, "--lld") && v) o.llc.lld = argv[++i];
    else if (!strcmp(a, "--keep") && v) o.keep_dir = argv[++i];
    else if (!strcmp(a, "--force")) o.force = true;
    else if (!strcmp(a, "--cubin") && v) cubin_path = argv[++i];
    else if (!strcmp(a, "--nvdisasm") && v) nvdisasm = argv[++i];
    else if (!strcmp(a, "--no-crosscheck")) crosscheck = false;
    else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "regsweep emit: unknown option '%s'\n", a);
      return 2;
    } else if (npos < 2) pos[npos++] = a;
    else {
      fprintf(stderr, "regsweep emit: too many arguments\n");
      return 2;
    }
  }
  const char *ans_path = corpus ? pos[0] : pos[1];
  if (!out || !ans_path || (corpus && (!instance || npos != 1)) || (!corpus && npos != 2) || opt > 3) {
    rs_usage_emit();
    return 2;
  }
  size_t ol = strlen(out);
  if (ol > 6 && !strcmp(out + ol - 6, ".cubin")) return emit_cubin(corpus, instance, pos[0], function, ans_path, out,
                                                                    cubin_path, nvdisasm, crosscheck);
  int kind = rs_emit_kind_of(out);
  if (kind < 0) {
    fprintf(stderr, "regsweep emit: %s: the output must end in .s, .hsaco (or .co) or .mir\n", out);
    return 2;
  }
  rs_err e = {{0}};
  rs_loaded l;
  if (rs_load_named(corpus, instance, pos[0], function, &l, &e)) {
    fprintf(stderr, "regsweep emit: %s\n", e.msg);
    return 2;
  }
  size_t len = 0;
  char *text = answer_text(&l, ans_path, pos[0], &len);
  if (!text) {
    rs_loaded_free(&l);
    return 2;
  }
  o.llc.opt = opt >= 0 ? opt : rs_emit_variant_opt(l.row.variant, l.row.params);
  rs_emit_result r;
  int rc = rs_emit_answer(&l, text, len, out, (enum rs_emit_kind)kind, &o, &r, &e);
  const rs_check_result *v = &r.verdict;
  int status = 0;
  if (rc < 0) {
    fprintf(stderr, "regsweep emit: %s\n", e.msg);
    status = 2;
  } else {
    printf("%s: %s: verifier %s", l.row.id[0] ? l.row.id : pos[0], l.f->name, rs_verdict_str(v->verdict));
    for (int k = 0; k < RS_VK__N; k++)
      if (v->counts[k]) printf(" %s %u", rs_vkind_str((rs_vkind)k), v->counts[k]);
    printf("\n");
    for (uint32_t i = 0; i < v->ndiag; i++) printf("  - %s\n", v->diag[i]);
    if (r.refused) {
      printf("refused: the verifier rejects this answer (--force emits it anyway, marked)\n");
      status = 1;
    } else {
      printf("rewrite: %u operands, %u identity copies removed, %u kept as KILL, %u block live-ins, %u spill slots "
             "renumbered, %u wave32 implicit $vcc_lo spelled $vcc, %u IR functions without MIR declared (%.1f ms)\n",
             r.rw.operands, r.rw.copies_removed, r.rw.copies_killed, r.rw.liveins_added, r.rw.slots_moved,
             r.rw.vcc_respelled, r.rw.ir_declared, r.rewrite_s * 1e3);
      if (r.llc_rejected) {
        char sum[4096];
        printf("llc REJECTED the rewritten kernel%s:\n%s\n",
               v->verdict == RS_V_PASS ? " (the verifier passed it: a verifier bug, please report)" : "",
               rs_emit_llc_summary(r.llc_diag, sum, sizeof sum));
        status = 1;
      } else {
        const rs_kernel_counts *c = &r.counts;
        printf("llc: MachineVerifier ok (%.2f s); kernel: vgpr %d agpr %d (total %d, .vgpr_count %d) sgpr %d "
               "(.sgpr_count %d) occupancy %d scratch %d\n",
               r.llc_s, c->vgpr, c->agpr, c->total_vgpr, c->vgpr_count, c->sgpr, c->sgpr_count, c->occupancy,
               c->scratch);
        printf("counts vs verifier: %s%s%s%s%s\n", r.counts_diff[0] ? "DIFFER: " : "equal", r.counts_diff,
               r.counts_note[0] ? " (" : "", r.counts_note, r.counts_note[0] ? ")" : "");
        printf("wrote %s%s\n", out, v->verdict == RS_V_PASS ? "" : " (forced: marked as rejected)");
      }
    }
  }
  rs_emit_result_free(&r);
  free(text);
  rs_loaded_free(&l);
  return status;
}
