/* check.c - `sweep --emit-check N`: LLVM as an independent judge of our verifier. For each model,
 * up to N passing answers of the run (the first pass of each AMD instance, spread evenly when
 * there are more) are emitted with llc's MachineVerifier on. A passing answer LLVM rejects is a
 * bug in our verifier (or in the rewrite): it is listed with both messages and its rewritten MIR
 * is kept (RUN_DIR/emit-check/reject-K.mir) to reproduce it with llc. NVIDIA answers (form sass)
 * are lowered into their instance's cubin and read back by nvdisasm (emit/sass.c): a passing
 * answer that joins values when written back is a verifier gap, a crosscheck mismatch an encoder
 * bug. */
#include "emit/emit.h"
#include "storage/run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
  uint64_t row;
  uint32_t inst;
} pick;

/* First passing attempt per (model, instance) with its text, in run order. */
static int collect(rs_runfile *rf, uint32_t nmodels, pick **picks, uint32_t *npicks, rs_err *e) {
  uint64_t n = rs_runfile_count(rf);
  uint32_t *cap = rs_xcalloc(nmodels + 1, sizeof *cap);
  int rc = 0;
  for (uint64_t i = 0; i < n && !rc; i++) {
    rs_attempt a;
    if (rs_runfile_get(rf, i, &a, 1, e)) {
      rc = -1;
      break;
    }
    size_t il = strlen(a.instance);
    bool sass = il > 5 && !strcmp(a.instance + il - 5, "/sass"); /* NVIDIA: lowered into its cubin */
    if (a.verdict == RS_V_PASS && a.candidate && a.model < nmodels && (strstr(a.instance, "/gfx") || sass)) {
      bool seen = false;
      for (uint32_t k = 0; k < npicks[a.model] && !seen; k++) seen = picks[a.model][k].inst == a.inst_index;
      if (!seen) {
        pick p = {i, a.inst_index};
        RS_PUSH(picks[a.model], npicks[a.model], cap[a.model], p);
      }
    }
    rs_attempt_clear(&a);
  }
  free(cap);
  return rc;
}

static void tsv_field(FILE *f, const char *s) {
  for (; s && *s; s++) fputc(*s == '\t' || *s == '\n' ? ' ' : *s, f);
}

static const unsigned nv_sms[RS_EMIT_CHECK_NV_ARCHS] = {75, 80, 86, 87, 89, 90};

/* One NVIDIA answer: lower into the instance's cubin and let nvdisasm read it back. Its TSV row
 * goes to cx->tsv, the outcome to st->last_outcome; st counts it overall and per arch. */
static void nv_one(rs_emit_check_ctx *cx, const rs_loaded *l, const rs_attempt *a, const char *model,
                   rs_emit_check_stats *st) {
  const char *work = cx->work;
  char msg[1200] = "";
  size_t n = sizeof msg;
  char out[1300];
  snprintf(out, sizeof out, "%s/kernel.cubin", work);
  mkdir(work, 0755);
  rs_emit_sass_result r;
  rs_err le = {{0}};
  int rc = rs_emit_sass(l, a->candidate, strlen(a->candidate), l->row.cubin, l->row.cubin_len, out, NULL, true, &r, &le);
  unsigned sm = (unsigned)atoi(l->row.target + 3), k = 0;
  while (k < RS_EMIT_CHECK_NV_ARCHS && nv_sms[k] != sm) k++;
  st->nv_checked++;
  int what;
  if (rc < 0) {
    what = 4;
    snprintf(msg, n, "%s", le.msg);
  } else if (r.refused && r.verdict.verdict != RS_V_PASS) {
    what = 4;
    snprintf(msg, n, "recorded as pass, verifier now says %s", rs_verdict_str(r.verdict.verdict));
  } else if (r.refused && strstr(r.why, "is not printed")) {
    what = 1; /* a hidden descriptor's value moved: it cannot be written */
    snprintf(msg, n, "%s", r.why);
  } else if (r.refused) {
    what = 2; /* passes our verifier, but written back it reads other definitions: a verifier gap */
    snprintf(msg, n, "our verifier: pass; written back: %s", r.why);
  } else if (r.encode_refused) {
    what = 1;
    snprintf(msg, n, "%s", r.why);
  } else if (!rs_crosscheck_ok(&r.x)) {
    what = 3;
    snprintf(msg, n, "nvdisasm: %s", r.x.first);
  } else {
    what = 0;
    snprintf(msg, n, "%u instructions re-encoded, registers %u -> %u, crosscheck %u instructions, 0 mismatches",
             r.low.changed, r.low.regs_before[0], r.regs[0], r.x.insts);
  }
  uint32_t *c[] = {&st->nv_ok, &st->nv_encode_refused, &st->nv_gap, &st->nv_mismatch, &st->errors};
  (*c[what])++;
  if (k < RS_EMIT_CHECK_NV_ARCHS) st->nv_arch[k][what]++;
  static const char *const names[] = {"ok", "encode-refused", "VERIFIER-GAP:write-back", "ENCODER-BUG:crosscheck",
                                      "error"};
  snprintf(st->last_outcome, sizeof st->last_outcome, "%s", names[what]);
  unlink(out);
  fprintf(cx->tsv, "%s\t%s\t%u\t%s\t-1\t-1\t-1\t-1\t0\t0\t0\t", a->instance, model, a->attempt, st->last_outcome);
  tsv_field(cx->tsv, msg);
  fputc('\n', cx->tsv);
}

/* One AMD answer: rewrite its MIR and let llc (MachineVerifier on) finish it to assembly; the
 * kernel's register counts are compared with the verifier's. Its TSV row goes to cx->tsv. */
static void llc_one(rs_emit_check_ctx *cx, const rs_loaded *l, const rs_attempt *a, const char *model,
                    rs_emit_check_stats *st) {
  rs_emit_result r;
  memset(&r, 0, sizeof r);
  const char *outcome = "ok";
  char msg[1200] = "";
  rs_err le = {{0}};
  rs_emit_opts o;
  memset(&o, 0, sizeof o);
  rs_llc_opts_default(&o.llc);
  o.llc.opt = rs_emit_variant_opt(l->row.variant, l->row.params);
  o.keep_dir = cx->work;
  int rc = rs_emit_answer(l, a->candidate, strlen(a->candidate), cx->out, RS_EMIT_ASM, &o, &r, &le);
  st->checked++;
  if (rc < 0) {
    outcome = "error";
    snprintf(msg, sizeof msg, "%s", le.msg);
    st->errors++;
  } else if (r.refused) {
    outcome = "error";
    snprintf(msg, sizeof msg, "recorded as pass, verifier now says %s: %s", rs_verdict_str(r.verdict.verdict),
             r.verdict.ndiag ? r.verdict.diag[0] : "");
    st->errors++;
  } else if (r.llc_rejected) {
    char sum[800], kp[1300], keep[1300];
    outcome = "VERIFIER-BUG:llc-rejected";
    snprintf(kp, sizeof kp, "%s/kernel.mir", cx->work);
    snprintf(keep, sizeof keep, "%s/reject-%u.mir", cx->dir, cx->rejects++);
    if (rename(kp, keep)) keep[0] = 0;
    /* the kept path may be cut to fit the row; the directory and the message say where */
    snprintf(msg, sizeof msg, "our verifier: pass; llc: %s%s%.300s", rs_emit_llc_summary(r.llc_diag, sum, sizeof sum),
             keep[0] ? "; MIR kept in " : "", keep);
    st->llc_rejected++;
  } else {
    st->llc_ok++;
    if (r.counts_diff[0]) {
      outcome = "counts-differ";
      snprintf(msg, sizeof msg, "%s", r.counts_diff);
      st->counts_mismatch++;
    } else {
      snprintf(msg, sizeof msg, "%s", r.counts_note); /* why equal in effect, or "" */
    }
  }
  int fv = -1, fa = -1;
  for (uint32_t k = 0; k < l->p->tgt->nfiles; k++) {
    if (!strcmp(l->p->tgt->files[k].name, "vgpr")) fv = (int)k;
    if (!strcmp(l->p->tgt->files[k].name, "agpr")) fa = (int)k;
  }
  fprintf(cx->tsv, "%s\t%s\t%u\t%s\t%d\t%d\t%d\t%d\t%u\t%u\t%u\t", a->instance, model, a->attempt, outcome,
          r.counts_checked ? r.counts.vgpr : -1, r.counts_checked ? r.counts.agpr : -1,
          r.counts_checked ? r.counts.sgpr : -1, r.counts_checked ? r.counts.occupancy : -1,
          fv >= 0 ? r.verdict.used[fv] : 0, fa >= 0 ? r.verdict.used[fa] : 0, r.verdict.occupancy);
  tsv_field(cx->tsv, msg);
  fputc('\n', cx->tsv);
  rs_emit_result_free(&r);
}

static const rs_emitter emitters[] = {{"llc", llc_one}, {"cubin", nv_one}};

const rs_emitter *rs_emitter_by_name(const char *name) {
  for (size_t k = 0; k < sizeof emitters / sizeof *emitters; k++)
    if (!strcmp(emitters[k].name, name)) return &emitters[k];
  return NULL;
}

const rs_emitter *rs_emitter_for(const rs_target *t) { return rs_emitter_by_name(t->emitter); }

int rs_emit_check_run(const char *run_path, const char *corpus_path, const char *const *models, uint32_t nmodels,
                      uint32_t n, const char *out_dir, rs_emit_check_stats *stats, rs_err *e) {
  memset(stats, 0, sizeof *stats * nmodels);
  rs_runfile *rf = rs_runfile_open(run_path, e);
  if (!rf) return -1;
  pick **picks = rs_xcalloc(nmodels + 1, sizeof *picks);
  uint32_t *npicks = rs_xcalloc(nmodels + 1, sizeof *npicks);
  int rc = collect(rf, nmodels, picks, npicks, e);
  rs_corpus *c = rc ? NULL : rs_corpus_open(corpus_path, e);
  if (!rc && !c) rc = -1;
  char dir[1100], work[1200], tsv[1200], out[1300];
  snprintf(dir, sizeof dir, "%s/emit-check", out_dir);
  snprintf(work, sizeof work, "%s/work", dir);
  snprintf(tsv, sizeof tsv, "%s/emit-check.tsv", out_dir);
  snprintf(out, sizeof out, "%s/kernel.s", work);
  if (!rc && mkdir(dir, 0755) && errno != EEXIST) rc = rs_errf(e, dir, 0, "cannot create: %s", strerror(errno));
  FILE *f = rc ? NULL : fopen(tsv, "w");
  if (!rc && !f) rc = rs_errf(e, tsv, 0, "cannot write");
  if (f)
    fprintf(f, "instance\tmodel\tattempt\toutcome\tvgpr\tagpr\tsgpr\toccupancy\tverifier_vgpr\tverifier_agpr\t"
               "verifier_occupancy\tmessage\n");
  rs_emit_check_ctx cx = {work, dir, out, f, 0};
  for (uint32_t m = 0; m < nmodels && !rc; m++) {
    uint32_t have = npicks[m], take = have < n ? have : n;
    for (uint32_t j = 0; j < take && !rc; j++) {
      const pick *pk = &picks[m][take == have ? j : (uint32_t)((uint64_t)j * have / take)];
      rs_attempt a;
      if (rs_runfile_get(rf, pk->row, &a, 1, e)) {
        rc = -1;
        break;
      }
      rs_loaded l;
      rs_err le = {{0}};
      int lrc = rs_instance_load(c, a.inst_index, &l, &le); /* l is zeroed or loaded either way */
      if (!lrc && !strcmp(l.row.id, a.instance)) { /* the target's emitter: llc (AMD), cubin (NVIDIA) */
        rs_emitter_for(l.p->tgt)->check_one(&cx, &l, &a, models[m], &stats[m]);
        rs_loaded_free(&l);
        rs_attempt_clear(&a);
        continue;
      }
      if (!lrc) snprintf(le.msg, sizeof le.msg, "corpus row %u is not %s", a.inst_index, a.instance);
      const char *outcome = "error";
      char msg[1200];
      snprintf(msg, sizeof msg, "%s", le.msg);
      stats[m].errors++;
      rs_loaded_free(&l);
      fprintf(f, "%s\t%s\t%u\t%s\t-1\t-1\t-1\t-1\t0\t0\t0\t", a.instance, models[m], a.attempt, outcome);
      tsv_field(f, msg);
      fputc('\n', f);
      rs_attempt_clear(&a);
    }
  }
  /* work files of the last emit */
  char p[1400];
  snprintf(p, sizeof p, "%s/kernel.mir", work);
  unlink(p);
  snprintf(p, sizeof p, "%s/kernel.s", work);
  unlink(p);
  unlink(out);
  snprintf(p, sizeof p, "%s/kernel.cubin", work);
  unlink(p);
  rmdir(work);
  if (f && fclose(f) && !rc) rc = rs_errf(e, tsv, 0, "write failed");
  if (c) rs_corpus_close(c, NULL);
  rs_runfile_close(rf, NULL);
  for (uint32_t m = 0; m < nmodels; m++) free(picks[m]);
  free(picks);
  free(npicks);
  return rc;
}

int rs_emit_check_sweep(const char *run_path, const char *corpus_path, const char *const *models, uint32_t nmodels,
                        uint32_t n, const char *out_dir, FILE *report, rs_err *e) {
  rs_emit_check_stats *st = rs_xcalloc(nmodels + 1, sizeof *st);
  int rc = rs_emit_check_run(run_path, corpus_path, models, nmodels, n, out_dir, st, e);
  uint32_t bugs = 0;
  if (!rc) {
    fprintf(report, "\nemit-check (llc MachineVerifier on up to %u passing answers per model; %s/emit-check.tsv):\n",
            n, out_dir);
    for (uint32_t m = 0; m < nmodels; m++) {
      if (st[m].checked || !st[m].nv_checked)
        fprintf(report, "  %-28s checked %u: llc accepted %u, REJECTED %u (verifier bugs), counts differ %u, errors %u\n",
                models[m], st[m].checked, st[m].llc_ok, st[m].llc_rejected, st[m].counts_mismatch, st[m].errors);
      if (st[m].nv_checked) {
        fprintf(report, "  %-28s NVIDIA lowered %u: crosscheck ok %u, encode refused %u, VERIFIER GAPS %u, ENCODER "
                        "BUGS %u\n", st[m].checked ? "" : models[m], st[m].nv_checked, st[m].nv_ok, st[m].nv_encode_refused, st[m].nv_gap,
                st[m].nv_mismatch);
        for (unsigned k = 0; k < RS_EMIT_CHECK_NV_ARCHS; k++) {
          const uint32_t *x = st[m].nv_arch[k];
          if (x[0] + x[1] + x[2] + x[3] + x[4])
            fprintf(report, "  %-28s   sm_%u: ok %u, encode refused %u, verifier gaps %u, encoder bugs %u, errors %u\n",
                    "", nv_sms[k], x[0], x[1], x[2], x[3], x[4]);
        }
      }
      bugs += st[m].llc_rejected + st[m].nv_gap + st[m].nv_mismatch;
    }
    if (bugs) fprintf(report, "  %u passing answer(s) rejected by LLVM, joined on write-back or misencoded: see the "
                              "VERIFIER-BUG, VERIFIER-GAP and ENCODER-BUG rows\n", bugs);
  }
  free(st);
  return rc ? -1 : bugs ? 1 : 0;
}
