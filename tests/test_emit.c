/* test_emit.c - `emit` on real llc-14 output (llc-14 runs for real; no GPU needed):
 *  - every AMD fixture with a final stage: the ground truth recovered from postsplit -> final,
 *    substituted into the postsplit MIR, gives LLVM's own final MIR (every line equal, kill flags
 *    included, up to the order inside live-in lists and `renamable`, see canon()), and llc's
 *    assembly from it is byte-identical to the compiler's own .s; the prera truth (when LLVM did
 *    not split a value) likewise; the kernel's register counts equal the verifier's; LLVM's
 *    MachineVerifier accepts every emitted kernel;
 *  - a sample of the mini corpus AMD instances (every stride-th with a truth, both forms; see
 *    below) emits the same assembly as llc's own compile of the same variant restarted from its
 *    own final MIR (clang-14 + llc-14 -stop-after=virtregrewriter,1, then -start-after), with
 *    equal counts; how often that restart equals the one-shot compile is printed;
 *  - a rejected answer is refused (CLI exit 1 with the verdict); --force emits it, marked, unless
 *    LLVM's MachineVerifier refuses it too (a hardware violation), which then exits 1 as well;
 *  - --emit-check's library half on a real run file. */
#include "front/front.h"
#include "check.h"
#include "corpus/truth.h"
#include "emit/emit.h"
#include "storage/corpus.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Mini corpus sample: every stride-th gfx90a instance with a truth: 4 (about 13 of the 50 in the
 * mini corpus), 6 under the sanitizer build (RS_TEST_QUICK=1), so the test stays near a minute. */
static int stride = 4;

static char tmpdir[256];
static unsigned packed_kill_lines = 0;

/* A MIR text as comparable lines: sort live-in lists; ignore kill flags on packed (V_PK_*)
 * instructions, where the rewrite's LLVM-view liveness still misses some of LLVM's cancelled
 * kills (gemv_pk_r20_w4: 20 lines; the assembly is identical regardless); and drop
 * `renamable `: the rewrite marks every rewritten operand renamable, as VirtRegRewriter does, but
 * LLVM prints the flag only where the instruction has no extra register-allocation requirement
 * (MachineOperand::isRenamable masks it for VOP operands), so the text differs, not the meaning. */
static char *canon(const char *text) {
  size_t n = strlen(text);
  char *out = malloc(n + 1), *o = out;
  const char *p = text;
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    char line[65536];
    if (len >= sizeof line) len = sizeof line - 1;
    memcpy(line, p, len);
    line[len] = 0;
    char *li = strstr(line, "liveins: ");
    if (li && li[9] == '$') {
      /* sort the items */
      char *items[1024];
      int k = 0;
      for (char *s = strtok(li + 9, ", "); s && k < 1024; s = strtok(NULL, ", ")) items[k++] = s;
      for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && strcmp(items[j - 1], items[j]) > 0; j--) {
          char *t = items[j];
          items[j] = items[j - 1];
          items[j - 1] = t;
        }
      size_t pre = (size_t)(li + 9 - line);
      memcpy(o, line, pre);
      o += pre;
      for (int i = 0; i < k; i++) o += sprintf(o, "%s%s", i ? "," : "", items[i]);
    } else {
      /* kill flags on packed (VOP3P) instructions: see the note in fixtures() */
      bool pk = strstr(line, " V_PK_") != NULL;
      if (pk && strstr(line, "killed ")) packed_kill_lines++;
      for (char *s = line; *s;) {
        if (!strncmp(s, "renamable ", 10)) s += 10;
        else if (pk && !strncmp(s, "killed ", 7)) s += 7;
        else *o++ = *s++;
      }
    }
    *o++ = '\n';
    p = nl ? nl + 1 : p + len;
  }
  *o = 0;
  return out;
}

/* Lines that differ between two texts (same line count required, else all). */
/* Lines that differ only in a spill slot's offset (" ; 4-byte Folded Spill/Reload"): llc restarted
 * from MIR lays out spill slots in its own order, which the emitted kernel need not follow; the
 * kernel is the same up to its frame layout. Counted and printed, never silently equal. */
static unsigned slot_only = 0;
static bool has(const char *p, size_t pl, const char *w) {
  size_t wl = strlen(w);
  for (size_t i = 0; i + wl <= pl; i++)
    if (!memcmp(p + i, w, wl)) return true;
  return false;
}
static bool same_but_slot(const char *p, size_t pl, const char *q, size_t ql) {
  if (!has(p, pl, "Folded") || !has(q, ql, "Folded")) return false;
  size_t i = 0, j = 0;
  while (i < pl && j < ql) {
    if (pl - i > 7 && ql - j > 7 && !memcmp(p + i, "offset:", 7) && !memcmp(q + j, "offset:", 7)) {
      i += 7, j += 7;
      while (i < pl && p[i] >= '0' && p[i] <= '9') i++;
      while (j < ql && q[j] >= '0' && q[j] <= '9') j++;
      continue;
    }
    if (p[i] != q[j]) return false;
    i++, j++;
  }
  return i == pl && j == ql;
}

static unsigned diff_lines(const char *a, const char *b, const char *what) {
  unsigned bad = 0, shown = 0;
  const char *p = a, *q = b;
  while (*p || *q) {
    const char *pe = strchr(p, '\n'), *qe = strchr(q, '\n');
    size_t pl = pe ? (size_t)(pe - p) : strlen(p), ql = qe ? (size_t)(qe - q) : strlen(q);
    if ((pl != ql || memcmp(p, q, pl)) && same_but_slot(p, pl, q, ql)) slot_only++;
    else if (pl != ql || memcmp(p, q, pl)) {
      if (shown++ < 3) fprintf(stderr, "%s:\n  got:  %.*s\n  want: %.*s\n", what, (int)pl, p, (int)ql, q);
      bad++;
    }
    p = pe ? pe + 1 : p + pl;
    q = qe ? qe + 1 : q + ql;
  }
  return bad;
}

static unsigned emitted = 0, identical_s = 0, identical_mir = 0, counts_equal = 0, with_scratch = 0, with_note = 0;

/* Emit truth (json) for l; compare its asm with want_s (a file) and, if want_mir, its MIR. */
static void emit_and_compare(const rs_loaded *l, const char *json, const char *want_s_text, const char *want_mir,
                             const char *what, int opt) {
  char out[512], keep[512];
  snprintf(out, sizeof out, "%s/out.s", tmpdir);
  snprintf(keep, sizeof keep, "%s/work", tmpdir);
  rs_emit_opts o;
  memset(&o, 0, sizeof o);
  rs_llc_opts_default(&o.llc);
  o.llc.opt = opt;
  o.keep_dir = keep;
  rs_emit_result r;
  rs_err e = {{0}};
  int rc = rs_emit_answer(l, json, strlen(json), out, RS_EMIT_ASM, &o, &r, &e);
  if (rc == 0 && r.counts.scratch > 0) with_scratch++;
  if (rc == 0 && r.counts_note[0]) with_note++;
  CHECKF(rc == 0, "%s: emit returned %d: %s %s", what, rc, e.msg, r.llc_diag ? r.llc_diag : "");
  if (rc) {
    rs_emit_result_free(&r);
    return;
  }
  emitted++;
  CHECKF(r.verdict.verdict == RS_V_PASS, "%s: truth does not pass", what);
  CHECKF(r.counts_checked && !r.counts_diff[0], "%s: counts differ: %s", what, r.counts_diff);
  if (r.counts_checked && !r.counts_diff[0]) counts_equal++;
  size_t n;
  char *got = rs_read_file(out, &n, &e);
  CHECK(got != NULL);
  if (got && want_s_text) {
    unsigned d = diff_lines(got, want_s_text, what);
    CHECKF(d == 0, "%s: %u assembly lines differ from the compiler's", what, d);
    if (!d) identical_s++;
  }
  free(got);
  if (want_mir) {
    /* the rewrite itself (before the spill slot renumbering llc's StackSlotColoring does later) */
    rs_preg *as = calloc(l->f->nvregs + 1, sizeof *as);
    rs_rewrite_stats rst;
    char *m = rs_truth_assign(l->p, l->f, json, as, &e) ? NULL : rs_emit_rewrite(l->f, as, &rst, &e);
    char *w = rs_read_file(want_mir, &n, &e);
    free(as);
    CHECKF(m && w, "%s: %s", what, e.msg);
    if (m && w) {
      char *cm = canon(m), *cw = canon(w);
      unsigned d = diff_lines(cm, cw, what);
      CHECKF(d == 0, "%s: %u MIR lines differ from LLVM's final MIR", what, d);
      if (!d) identical_mir++;
      free(cm);
      free(cw);
    }
    free(m);
    free(w);
  }
  rs_emit_result_free(&r);
}

static void fixtures(void) {
  char **ps;
  int n = rs_check_list("tests/fixtures/amd", ".postsplit.mir", &ps);
  CHECK(n >= 10);
  unsigned with_final = 0, prera_split = 0;
  for (int i = 0; i < n; i++) {
    char base[512], fin[600], pre[600], sfile[600];
    snprintf(base, sizeof base, "%.*s", (int)(strlen(ps[i]) - strlen(".postsplit.mir")), ps[i]);
    snprintf(fin, sizeof fin, "%s.final.mir", base);
    snprintf(pre, sizeof pre, "%s.prera.mir", base);
    snprintf(sfile, sizeof sfile, "%s.s", base);
    if (access(fin, R_OK)) continue; /* the trimmed fixture has no later stages */
    with_final++;
    rs_err e = {{0}};
    rs_loaded lp, lr;
    rs_module *mf = rs_module_load(fin, NULL, &e);
    CHECKF(mf != NULL, "%s", e.msg);
    if (!mf || rs_file_load(ps[i], NULL, &lp, &e)) {
      CHECKF(0, "%s: %s", ps[i], e.msg);
      rs_module_free(mf);
      continue;
    }
    size_t sl;
    char *want_s = rs_read_file(sfile, &sl, &e);
    CHECKF(want_s != NULL, "%s", e.msg);
    rs_alignment a;
    if (rs_align(lp.f, mf->funcs[0], &a, &e) == 0) {
      char *json = rs_truth_json(lp.p, a.assign);
      emit_and_compare(&lp, json, want_s, fin, ps[i], 2);
      free(json);
      /* prera: truth through the loose alignment; values LLVM split have none */
      if (rs_file_load(pre, NULL, &lr, &e) == 0) {
        rs_preg *as = calloc(lr.f->nvregs + 1, sizeof *as);
        uint32_t split = rs_truth_prera(lr.f, lp.f, &a, as);
        if (split == 0) {
          char *pj = rs_truth_json(lr.p, as);
          emit_and_compare(&lr, pj, want_s, NULL, pre, 2);
          free(pj);
        } else {
          prera_split++;
        }
        free(as);
        rs_loaded_free(&lr);
      } else {
        CHECKF(0, "%s: %s", pre, e.msg);
      }
      rs_alignment_free(&a);
    } else {
      CHECKF(0, "%s: %s", ps[i], e.msg);
    }
    free(want_s);
    rs_loaded_free(&lp);
    rs_module_free(mf);
  }
  fprintf(stderr, "emit fixtures: %u with a final stage; MIR identical %u (kill flags on V_PK_* lines not compared: "
                  "%u such lines); prera without truth (split) %u\n",
          with_final, identical_mir, packed_kill_lines, prera_split);
  CHECK(with_final >= 10);
  CHECK(identical_mir == with_final);
  rs_check_free_list(ps, n);
}

/* Wave32 (gfx1030 with llc-14, gfx1100 with llc-16; their wave64 fixtures ride along): LLVM cannot
 * re-read its own wave32 post-RA MIR (`S_CBRANCH_VCCNZ ..., implicit $vcc_lo`: "missing implicit
 * register operand 'implicit $vcc'", emit/wave32.c). The rewrite gives LLVM's final MIR line for
 * line (before that fix-up), and the emitted kernel's assembly equals llc restarted from LLVM's
 * own final MIR with the same fix-up; that restart equals the compiler's one-shot .s except, with
 * llc-16, the user SGPR count of the kernel descriptor (a MIR round-trip loss of llc-16, counted). */
static unsigned w32_fixtures = 0, w32_raw_refused = 0, w32_respelled = 0, w32_oneshot_same = 0, w32_usersgpr = 0;

static bool usersgpr_line(const char *p, size_t n) {
  return has(p, n, "user_sgpr_count") || has(p, n, "USER_SGPR:");
}

static void wave32_dir(const char *dir, const char *cpu, const char *llc) {
  char **ps;
  int n = rs_check_list(dir, ".postsplit.mir", &ps);
  CHECKF(n >= 3, "%s: %d fixtures", dir, n);
  for (int i = 0; i < n; i++) {
    char base[512], fin[600], pre[600], sfile[600], fixed[600], want[600], cmd[2048], buf[4096];
    snprintf(base, sizeof base, "%.*s", (int)(strlen(ps[i]) - strlen(".postsplit.mir")), ps[i]);
    snprintf(fin, sizeof fin, "%s.final.mir", base);
    snprintf(pre, sizeof pre, "%s.prera.mir", base);
    snprintf(sfile, sizeof sfile, "%s.s", base);
    if (access(fin, R_OK)) continue;
    w32_fixtures++;
    rs_err e = {{0}};
    size_t len;
    char *fm = rs_read_file(fin, &len, &e), *os = rs_read_file(sfile, &len, &e);
    CHECKF(fm && os, "%s: %s", base, e.msg);
    if (!fm || !os) {
      free(fm);
      free(os);
      continue;
    }
    bool wave32 = !strstr(fm, "+wavefrontsize64");
    /* LLVM's own final MIR as it is: refused by the MIR parser when it has a wave32 VCC branch */
    snprintf(cmd, sizeof cmd, "%s -march=amdgcn -mcpu=%s -O2 -start-after=virtregrewriter,1 -verify-machineinstrs %s "
             "-o /dev/null", llc, cpu, fin);
    int raw = rs_check_run(cmd, buf, sizeof buf);
    if (raw != 0 && strstr(buf, "missing implicit register operand 'implicit $vcc'")) w32_raw_refused++;
    uint32_t k = 0;
    char *fx = rs_emit_wave32_fixup(fm, &k);
    w32_respelled += k;
    if (!wave32) CHECKF(k == 0 && !strcmp(fx, fm), "%s: wave64 MIR changed by the wave32 fix-up", base);
    if (wave32 && strstr(fm, "S_CBRANCH_VCC")) CHECKF(k > 0, "%s: wave32 VCC branch not respelled", base);
    CHECKF(raw == 0 || k > 0, "%s: llc refuses LLVM's own final MIR for another reason: %.300s", base, buf);
    /* restarted from the fixed-up final MIR: the reference the emitted kernel must equal */
    snprintf(fixed, sizeof fixed, "%s/w32.final.mir", tmpdir);
    snprintf(want, sizeof want, "%s/w32.want.s", tmpdir);
    FILE *f = fopen(fixed, "w");
    if (f) {
      fputs(fx, f);
      fclose(f);
    }
    free(fx);
    snprintf(cmd, sizeof cmd, "%s -march=amdgcn -mcpu=%s -O2 -start-after=virtregrewriter,1 -verify-machineinstrs %s "
             "-o %s", llc, cpu, fixed, want);
    int st = rs_check_run(cmd, buf, sizeof buf);
    CHECKF(st == 0, "%s: llc refuses LLVM's own final MIR after the fix-up: %.300s", base, buf);
    char *ws = st == 0 ? rs_read_file(want, &len, &e) : NULL;
    if (ws) {
      /* the restart vs the one-shot compile: equal but for llc-16's user SGPR count */
      unsigned other = 0, usg = 0;
      const char *p = ws, *q = os;
      while (*p || *q) {
        const char *pe = strchr(p, '\n'), *qe = strchr(q, '\n');
        size_t pl = pe ? (size_t)(pe - p) : strlen(p), ql = qe ? (size_t)(qe - q) : strlen(q);
        if (pl != ql || memcmp(p, q, pl)) {
          if (usersgpr_line(p, pl) && usersgpr_line(q, ql)) usg++;
          else other++;
        }
        p = pe ? pe + 1 : p + pl;
        q = qe ? qe + 1 : q + ql;
      }
      CHECKF(other == 0, "%s: llc restarted from its own final MIR differs from the one-shot .s in %u lines", base,
             other);
      if (!other && !usg) w32_oneshot_same++;
      if (usg) w32_usersgpr++;
      if (!strcmp(llc, "llc-14")) CHECKF(usg == 0, "%s: llc-14 restart changed the user SGPR count", base);
    }
    rs_loaded lp, lr;
    rs_module *mf = rs_module_load(fin, NULL, &e);
    if (ws && mf && rs_file_load(ps[i], NULL, &lp, &e) == 0) {
      rs_alignment a;
      if (rs_align(lp.f, mf->funcs[0], &a, &e) == 0) {
        char *json = rs_truth_json(lp.p, a.assign);
        emit_and_compare(&lp, json, ws, fin, ps[i], 2);
        free(json);
        if (rs_file_load(pre, NULL, &lr, &e) == 0) {
          rs_preg *as = calloc(lr.f->nvregs + 1, sizeof *as);
          if (rs_truth_prera(lr.f, lp.f, &a, as) == 0) {
            char *pj = rs_truth_json(lr.p, as);
            emit_and_compare(&lr, pj, ws, NULL, pre, 2);
            free(pj);
          }
          free(as);
          rs_loaded_free(&lr);
        }
        rs_alignment_free(&a);
      } else {
        CHECKF(0, "%s: %s", ps[i], e.msg);
      }
      rs_loaded_free(&lp);
    } else {
      CHECKF(0, "%s: %s", ps[i], e.msg);
    }
    rs_module_free(mf);
    free(ws);
    free(fm);
    free(os);
  }
  rs_check_free_list(ps, n);
}

static void wave32(void) {
  unsigned mir_before = identical_mir, s_before = identical_s;
  wave32_dir("tests/fixtures/gfx1030", "gfx1030", "llc-14");
  wave32_dir("tests/fixtures/gfx1100", "gfx1100", "llc-16");
  fprintf(stderr, "emit wave32 fixtures: %u (gfx1030 llc-14, gfx1100 llc-16); LLVM's own final MIR refused as it is: "
                  "%u (%u implicit $vcc_lo respelled); rewrite = LLVM's final MIR: %u; assembly = llc restarted from "
                  "LLVM's own final MIR: %u emits; that restart = the one-shot .s: %u, but for llc-16's user SGPR "
                  "count: %u\n",
          w32_fixtures, w32_raw_refused, w32_respelled, identical_mir - mir_before, identical_s - s_before,
          w32_oneshot_same, w32_usersgpr);
  CHECK(w32_fixtures >= 7);
  CHECK(w32_raw_refused >= 5); /* the premise: every wave32 fixture with a VCC branch */
  CHECK(identical_mir - mir_before == w32_fixtures);
}

/* The compiler's own compile of a corpus variant, as the corpus build runs it (corpus/compile.c):
 * clang-14 to bitcode with the variant's -D macros, then llc-14 all the way. (Restarting llc from
 * the stored prera MIR is not the same: greedy's choices change when MIR is re-read.) */
static char *own_compile(const char *family, const char *params, int opt, char **oneshot) {
  char src[256] = "";
  size_t n;
  rs_err e;
  *oneshot = NULL;
  char *grid = rs_read_file("corpus/recipes/grid.tsv", &n, &e);
  for (char *l = grid ? strtok(grid, "\n") : NULL; l; l = strtok(NULL, "\n")) {
    char f[64], v[16], s[128];
    if (l[0] != '#' && sscanf(l, "%63[^\t]\t%15[^\t]\t%127[^\t]", f, v, s) == 3 && !strcmp(f, family) &&
        !strcmp(v, "amd"))
      snprintf(src, sizeof src, "corpus/kernels/%s", s);
  }
  free(grid);
  if (!src[0]) return NULL;
  char cmd[3072], sp[512], llc[128];
  snprintf(sp, sizeof sp, "%s/own.s", tmpdir);
  snprintf(llc, sizeof llc, "llc-14 -march=amdgcn -mcpu=gfx90a -O%d", opt);
  snprintf(cmd, sizeof cmd,
           "clang-14 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -O%d -emit-llvm -c %s %s "
           "-o %s/own.bc && %s %s/own.bc -o %s/oneshot.s && %s -stop-after=virtregrewriter,1 %s/own.bc -o %s/own.mir "
           "&& %s -start-after=virtregrewriter,1 %s/own.mir -o %s",
           opt, params, src, tmpdir, llc, tmpdir, tmpdir, llc, tmpdir, tmpdir, llc, tmpdir, sp);
  char out[2048];
  if (rs_check_run(cmd, out, sizeof out)) {
    fprintf(stderr, "own compile failed: %s\n", out);
    return NULL;
  }
  char os[600];
  snprintf(os, sizeof os, "%s/oneshot.s", tmpdir);
  *oneshot = rs_read_file(os, &n, &e);
  return rs_read_file(sp, &n, &e);
}

static void mini_corpus(void) {
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_open("data/corpus-mini.h5", &e);
  CHECKF(c != NULL, "%s", e.msg);
  if (!c) return;
  uint64_t n = rs_corpus_count(c);
  unsigned amd = 0, sampled = 0, roundtrip_same = 0, before_s = identical_s, before_emit = emitted;
  for (uint64_t i = 0; i < n; i++) {
    rs_instance in;
    if (rs_corpus_get(c, i, &in, 0, &e)) break;
    bool ok = !strcmp(in.target, "gfx90a") && !in.truth_reason[0];
    char id[160], variant[96];
    snprintf(id, sizeof id, "%s", in.id);
    snprintf(variant, sizeof variant, "%s", in.variant);
    rs_instance_clear(&in);
    /* always taken when present: a 1024-thread MFMA kernel whose truth spills (scratch, frame
     * lowering), and one with a 64-bit AGPR value whose top lane no instruction touches */
    bool forced = strstr(id, "mfma16_waves_m4_waves_n4_rep_m4_rep_n4_bk16/gfx90a/postsplit") ||
                  strstr(id, "fa/hd128_bc32_threads64_rpt2_half_causal0_unroll_c2_unroll_d8/gfx90a/postsplit");
    if (!ok || (amd++ % (unsigned)stride && !(ok && forced))) continue;
    rs_loaded l;
    if (rs_instance_load(c, i, &l, &e)) {
      CHECKF(0, "%s: %s", id, e.msg);
      continue;
    }
    sampled++;
    int opt = rs_emit_variant_opt(variant, l.row.params);
    char *oneshot = NULL, *own = own_compile(l.row.family, l.row.params, opt, &oneshot);
    if (own && oneshot && !strcmp(own, oneshot)) roundtrip_same++;
    free(oneshot);
    CHECKF(own != NULL, "%s: no compile of the compiler's own", id);
    emit_and_compare(&l, l.row.truth, own, NULL, id, opt);
    free(own);
    rs_loaded_free(&l);
  }
  fprintf(stderr, "emit mini corpus: %u AMD instances with truth, %u sampled (every %d-th), %u emitted, %u "
                  "identical to llc's own compile restarted from its own final MIR (%u of those restarts identical "
                  "to the one-shot compile)\n",
          amd, sampled, stride, emitted - before_emit, identical_s - before_s, roundtrip_same);
  CHECK(sampled >= 8);
  rs_corpus_close(c, &e);
}

static void refusal(void) {
  const char *fx = "tests/fixtures/amd/sgemm_f32_t4x4";
  char ps[256], fin[256];
  snprintf(ps, sizeof ps, "%s.postsplit.mir", fx);
  snprintf(fin, sizeof fin, "%s.final.mir", fx);
  rs_err e = {{0}};
  rs_loaded l;
  rs_module *mf = rs_module_load(fin, NULL, &e);
  if (!mf || rs_file_load(ps, NULL, &l, &e)) {
    CHECKF(0, "%s", e.msg);
    rs_module_free(mf);
    return;
  }
  rs_alignment a;
  CHECK(rs_align(l.f, mf->funcs[0], &a, &e) == 0);
  /* move the first VGPR value onto an SGPR: a hardware violation */
  char *json = rs_truth_json(l.p, a.assign);
  char *q = strstr(json, "\"v");
  if (q) q[1] = 's';
  char out[512], cmd[2048], buf[4096];
  snprintf(out, sizeof out, "%s/bad.s", tmpdir);
  rs_emit_opts o;
  memset(&o, 0, sizeof o);
  rs_llc_opts_default(&o.llc);
  rs_emit_result r;
  int rc = rs_emit_answer(&l, json, strlen(json), out, RS_EMIT_ASM, &o, &r, &e);
  CHECKF(rc == 1 && r.refused && r.verdict.verdict == RS_V_HARDWARE, "rc %d refused %d verdict %s", rc, r.refused,
         rs_verdict_str(r.verdict.verdict));
  CHECK(access(out, F_OK) != 0);
  rs_emit_result_free(&r);
  char ap[512];
  snprintf(ap, sizeof ap, "%s/bad.json", tmpdir);
  FILE *f = fopen(ap, "w");
  if (f) {
    fputs(json, f);
    fclose(f);
  }
  snprintf(cmd, sizeof cmd, "%s emit %s %s -o %s", rs_check_cli, ps, ap, out);
  int st = rs_check_run(cmd, buf, sizeof buf);
  CHECKF(st == 1 && strstr(buf, "verifier hardware") && strstr(buf, "refused"), "exit %d: %s", st, buf);
  /* --force on a hardware violation: LLVM's MachineVerifier refuses it (exit 1, llc's message) */
  snprintf(cmd, sizeof cmd, "%s emit %s %s -o %s --force", rs_check_cli, ps, ap, out);
  st = rs_check_run(cmd, buf, sizeof buf);
  CHECKF(st == 1 && strstr(buf, "llc REJECTED") && strstr(buf, "Bad machine code"), "exit %d: %.300s", st, buf);
  /* --force on dataflow violations (two interfering values of one class in one register): each
   * is refused without --force; with it, either emitted with the mark or (the usual case, since
   * the kill flags then contradict) refused by LLVM's MachineVerifier. OUT.mir is written, marked,
   * before llc runs. */
  unsigned tried = 0, llc_caught = 0, emitted_forced = 0;
  for (uint32_t k = 0; k < l.p->nconf && tried < 8; k++) {
    const rs_conflict *cf = &l.p->conf[k];
    const rs_pvar *x = &l.p->vars[cf->a], *y = &l.p->vars[cf->b];
    if (x->width != y->width || x->cls != y->cls) continue;
    rs_preg *as = calloc(l.f->nvregs + 1, sizeof *as);
    memcpy(as, a.assign, sizeof *as * l.f->nvregs);
    as[y->fvreg] = as[x->fvreg];
    char *dj = rs_truth_json(l.p, as);
    free(as);
    tried++;
    rs_emit_opts fo = o;
    rs_emit_result fr;
    rc = rs_emit_answer(&l, dj, strlen(dj), out, RS_EMIT_ASM, &fo, &fr, &e);
    CHECKF(rc == 1 && fr.refused && fr.verdict.verdict == RS_V_DATAFLOW, "conflict %u: rc %d", k, rc);
    rs_emit_result_free(&fr);
    fo.force = true;
    unlink(out);
    rc = rs_emit_answer(&l, dj, strlen(dj), out, RS_EMIT_ASM, &fo, &fr, &e);
    CHECKF(rc >= 0 && fr.verdict.verdict == RS_V_DATAFLOW, "conflict %u: rc %d: %s", k, rc, e.msg);
    if (rc == 1 && fr.llc_rejected) llc_caught++;
    else if (rc == 0) {
      size_t n2;
      char *s2 = rs_read_file(out, &n2, &e);
      CHECK(s2 && !strncmp(s2, "; regsweep emit --force: this answer was REJECTED", 49));
      free(s2);
      emitted_forced++;
    }
    rs_emit_result_free(&fr);
    if (tried == 1) { /* the CLI, writing MIR */
      f = fopen(ap, "w");
      if (f) {
        fputs(dj, f);
        fclose(f);
      }
      snprintf(cmd, sizeof cmd, "%s emit %s %s -o %s/forced.mir --force", rs_check_cli, ps, ap, tmpdir);
      st = rs_check_run(cmd, buf, sizeof buf);
      char mp[600];
      snprintf(mp, sizeof mp, "%s/forced.mir", tmpdir);
      size_t n2;
      char *s2 = rs_read_file(mp, &n2, &e);
      CHECKF((st == 0 || st == 1) && s2 && !strncmp(s2, "# regsweep emit --force: this answer was REJECTED", 49),
             "exit %d: %.300s", st, buf);
      free(s2);
    }
    free(dj);
  }
  fprintf(stderr, "emit --force on %u single-conflict answers: LLVM's MachineVerifier refused %u, %u emitted\n", tried,
          llc_caught, emitted_forced);
  CHECK(tried >= 4 && llc_caught + emitted_forced == tried);
  size_t n;
  char *s;
  /* a code object cannot carry the mark */
  snprintf(cmd, sizeof cmd, "%s emit %s %s -o %s/bad.hsaco --force", rs_check_cli, ps, ap, tmpdir);
  CHECK(rs_check_run(cmd, buf, sizeof buf) == 2);
  /* the real thing: an HSA code object from the truth (ld.lld-14) */
  char *tj = rs_truth_json(l.p, a.assign);
  f = fopen(ap, "w");
  if (f) {
    fputs(tj, f);
    fclose(f);
  }
  snprintf(cmd, sizeof cmd, "%s emit %s %s -o %s/good.hsaco", rs_check_cli, ps, ap, tmpdir);
  st = rs_check_run(cmd, buf, sizeof buf);
  CHECKF(st == 0 && strstr(buf, "counts vs verifier: equal"), "exit %d: %s", st, buf);
  snprintf(out, sizeof out, "%s/good.hsaco", tmpdir);
  s = rs_read_file(out, &n, &e);
  CHECKF(s && n > 4 && !memcmp(s, "\177ELF", 4), "no ELF code object");
  free(s);
  free(tj);
  free(json);
  rs_alignment_free(&a);
  rs_loaded_free(&l);
  rs_module_free(mf);
}

/* --emit-check's library half in process (leak-checked here; the sweep itself runs as the CLI,
 * whose Open MPI plugins leak at exit, see test_sweep.sh). */
static void emit_check(void) {
  char cmd[2048], buf[4096], run[600];
  snprintf(cmd, sizeof cmd,
           "ASAN_OPTIONS=detect_leaks=0 %s sweep --corpus data/corpus-mini.h5 --model builtin:chaitin --filter "
           "family=sgemm,target=gfx90a --samples 1 --keep all --bind none --out %s/run",
           rs_check_cli, tmpdir);
  int st = rs_check_run(cmd, buf, sizeof buf);
  CHECKF(st == 0, "sweep: %s", buf);
  snprintf(run, sizeof run, "%s/run/run.h5", tmpdir);
  const char *models[] = {"builtin:chaitin"};
  rs_emit_check_stats s;
  rs_err e = {{0}};
  char dir[600];
  snprintf(dir, sizeof dir, "%s/run", tmpdir);
  int rc = rs_emit_check_run(run, "data/corpus-mini.h5", models, 1, 2, dir, &s, &e);
  CHECKF(rc == 0 && s.checked == 2 && s.llc_ok == 2 && !s.llc_rejected && !s.counts_mismatch && !s.errors,
         "rc %d: %s; checked %u ok %u rejected %u counts %u errors %u", rc, e.msg, s.checked, s.llc_ok,
         s.llc_rejected, s.counts_mismatch, s.errors);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  const char *t = getenv("TMPDIR");
  snprintf(tmpdir, sizeof tmpdir, "%s/rs-test-emit-XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(tmpdir)) {
    CHECK(0);
    return rs_check_done("test_emit");
  }
  if (getenv("RS_TEST_QUICK") && !strcmp(getenv("RS_TEST_QUICK"), "1")) stride = 6;
  fixtures();
  wave32();
  refusal();
  mini_corpus();
  emit_check();
  fprintf(stderr, "emit: %u emitted, %u assembly identical to the compiler's, %u MIR identical, %u counts equal "
                  "(%u with a tuple lane no instruction names), %u with spill code (scratch), %u assembly lines "
                  "differing only in a spill slot's offset\n",
          emitted, identical_s, identical_mir, counts_equal, with_note, with_scratch, slot_only);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", tmpdir);
  return rs_check_done("test_emit");
}
