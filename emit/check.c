/* check.c - `sweep --emit-check N`: LLVM as an independent judge of our verifier. For each model,
 * up to N passing answers of the run (the first pass of each AMD instance, spread evenly when
 * there are more) are emitted with llc's MachineVerifier on. A passing answer LLVM rejects is a
 * bug in our verifier (or in the rewrite): it is listed with both messages and its rewritten MIR
 * is kept (RUN_DIR/emit-check/reject-K.mir) to reproduce it with llc. */
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
    if (a.verdict == RS_V_PASS && a.candidate && a.model < nmodels && strstr(a.instance, "/gfx")) {
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
  uint32_t rejects = 0;
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
      rs_emit_result r;
      memset(&r, 0, sizeof r);
      const char *outcome = "ok";
      char msg[1200] = "";
      rs_err le = {{0}};
      int lrc = rs_instance_load(c, a.inst_index, &l, &le); /* l is zeroed or loaded either way */
      if (lrc || strcmp(l.row.id, a.instance)) {
        if (!lrc) snprintf(le.msg, sizeof le.msg, "corpus row %u is not %s", a.inst_index, a.instance);
        outcome = "error";
        snprintf(msg, sizeof msg, "%s", le.msg);
        stats[m].errors++;
        rs_loaded_free(&l);
      } else {
        rs_emit_opts o;
        memset(&o, 0, sizeof o);
        rs_llc_opts_default(&o.llc);
        o.llc.opt = rs_emit_variant_opt(l.row.variant, l.row.params);
        o.keep_dir = work;
        int st = rs_emit_answer(&l, a.candidate, strlen(a.candidate), out, RS_EMIT_ASM, &o, &r, &le);
        stats[m].checked++;
        if (st < 0) {
          outcome = "error";
          snprintf(msg, sizeof msg, "%s", le.msg);
          stats[m].errors++;
        } else if (r.refused) {
          outcome = "error";
          snprintf(msg, sizeof msg, "recorded as pass, verifier now says %s: %s", rs_verdict_str(r.verdict.verdict),
                   r.verdict.ndiag ? r.verdict.diag[0] : "");
          stats[m].errors++;
        } else if (r.llc_rejected) {
          char sum[800], kp[1300], keep[1300];
          outcome = "VERIFIER-BUG:llc-rejected";
          snprintf(kp, sizeof kp, "%s/kernel.mir", work);
          snprintf(keep, sizeof keep, "%s/reject-%u.mir", dir, rejects++);
          if (rename(kp, keep)) keep[0] = 0;
          /* the kept path may be cut to fit the row; the directory and the message say where */
          snprintf(msg, sizeof msg, "our verifier: pass; llc: %s%s%.300s", rs_emit_llc_summary(r.llc_diag, sum, sizeof sum),
                   keep[0] ? "; MIR kept in " : "", keep);
          stats[m].llc_rejected++;
        } else {
          stats[m].llc_ok++;
          if (r.counts_diff[0]) {
            outcome = "counts-differ";
            snprintf(msg, sizeof msg, "%s", r.counts_diff);
            stats[m].counts_mismatch++;
          } else {
            snprintf(msg, sizeof msg, "%s", r.counts_note); /* why equal in effect, or "" */
          }
        }
        int fv = -1, fa = -1;
        for (uint32_t k = 0; k < l.p->tgt->nfiles; k++) {
          if (!strcmp(l.p->tgt->files[k].name, "vgpr")) fv = (int)k;
          if (!strcmp(l.p->tgt->files[k].name, "agpr")) fa = (int)k;
        }
        fprintf(f, "%s\t%s\t%u\t%s\t%d\t%d\t%d\t%d\t%u\t%u\t%u\t", a.instance, models[m], a.attempt, outcome,
                r.counts_checked ? r.counts.vgpr : -1, r.counts_checked ? r.counts.agpr : -1,
                r.counts_checked ? r.counts.sgpr : -1, r.counts_checked ? r.counts.occupancy : -1,
                fv >= 0 ? r.verdict.used[fv] : 0, fa >= 0 ? r.verdict.used[fa] : 0, r.verdict.occupancy);
        tsv_field(f, msg);
        fputc('\n', f);
        rs_emit_result_free(&r);
        rs_loaded_free(&l);
        rs_attempt_clear(&a);
        continue;
      }
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
      fprintf(report, "  %-28s checked %u: llc accepted %u, REJECTED %u (verifier bugs), counts differ %u, errors %u\n",
              models[m], st[m].checked, st[m].llc_ok, st[m].llc_rejected, st[m].counts_mismatch, st[m].errors);
      bugs += st[m].llc_rejected;
    }
    if (bugs) fprintf(report, "  %u passing answer(s) rejected by LLVM: see the VERIFIER-BUG rows\n", bugs);
  }
  free(st);
  return rc ? -1 : bugs ? 1 : 0;
}
