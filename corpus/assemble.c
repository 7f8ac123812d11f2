/* assemble.c - compiled variant directories -> corpus rows. */
#include "front/front.h"
#include "corpus/assemble.h"
#include "corpus/grid.h"
#include "llvm/llc.h"
#include "corpus/truth.h"
#include "mcode/mcode.h"
#include "sass/sass.h"
#include "corpus/ptxtruth.h"
#include "corpus/normalize.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t rs_ir_hash(const rs_func *f) {
  uint32_t *ren = rs_xcalloc(f->nvregs + 1, sizeof *ren), next = 1;
  uint64_t h = 0x52535745ull;
  for (uint32_t b = 0; b < f->nblocks; b++) {
    const rs_block *blk = &f->blocks[b];
    h = rs_hash_bytes(&blk->nsuccs, sizeof blk->nsuccs, h);
    for (uint32_t s = 0; s < blk->nsuccs; s++) h = rs_hash_bytes(&blk->succs[s], sizeof blk->succs[s], h);
    for (uint32_t k = 0; k < blk->ninsts; k++) {
      const rs_inst *in = &f->insts[blk->first_inst + k];
      const char *op = rs_func_opcode(f, in);
      h = rs_hash_bytes(op, strlen(op), h);
      for (uint32_t o = 0; o < in->nops; o++) {
        const rs_operand *x = &f->ops[in->first_op + o];
        uint64_t w[3] = {x->kind, x->flags & RS_F_DEF, x->lanes};
        h = rs_hash_bytes(w, sizeof w, h);
        if (x->kind == RS_OP_VREG) {
          if (!ren[x->reg]) ren[x->reg] = next++;
          uint32_t r[2] = {ren[x->reg], (uint32_t)f->vregs[x->reg].cls};
          h = rs_hash_bytes(r, sizeof r, h);
        } else if (x->kind == RS_OP_PREG || x->kind == RS_OP_BLOCK) {
          h = rs_hash_bytes(&x->reg, sizeof x->reg, h);
        } else {
          h = rs_hash_bytes(f->src + x->text_off, x->text_len, h);
        }
      }
    }
  }
  free(ren);
  return h;
}

static unsigned mir_number(const char *text, const char *key) {
  const char *c = strstr(text, key);
  return c ? (unsigned)strtoul(c + strlen(key), NULL, 10) : 0;
}

typedef struct {
  uint64_t *keys;
  uint32_t cap, n;
} hset;

static bool hset_add(hset *s, uint64_t k) { /* false if present */
  if (!k) k = 1;
  if (s->n * 2 >= s->cap) {
    uint32_t nc = s->cap ? s->cap * 2 : 4096;
    uint64_t *nk = rs_xcalloc(nc, sizeof *nk);
    for (uint32_t i = 0; i < s->cap; i++)
      if (s->keys[i]) {
        uint32_t j = (uint32_t)s->keys[i] & (nc - 1);
        while (nk[j]) j = (j + 1) & (nc - 1);
        nk[j] = s->keys[i];
      }
    free(s->keys);
    s->keys = nk;
    s->cap = nc;
  }
  uint32_t j = (uint32_t)k & (s->cap - 1);
  while (s->keys[j]) {
    if (s->keys[j] == k) return false;
    j = (j + 1) & (s->cap - 1);
  }
  s->keys[j] = k;
  s->n++;
  return true;
}

typedef struct {
  const rs_compile_opts *o;
  uint64_t seed;
  rs_corpus *c;
  rs_assemble_stats *st;
  hset seen;
  uint8_t *cubin;       /* form sass: the listing's cubin, stored beside it (lower/emit need it) */
  size_t cubin_len;
  const char *inferred; /* form sass: ` inferred_forms="..."` for the params ("" none; sass_instance) */
} A;

static int fail(A *a, const rs_variant *v, const char *target, const char *msg, rs_err *e) {
  rs_build_failure f;
  memset(&f, 0, sizeof f);
  snprintf(f.variant, sizeof f.variant, "%s", v->name);
  snprintf(f.family, sizeof f.family, "%s", v->family);
  snprintf(f.target, sizeof f.target, "%s", target);
  snprintf(f.params, sizeof f.params, "%s", v->params);
  snprintf(f.message, sizeof f.message, "%s", msg);
  a->st->failures++;
  double t = rs_now();
  int rc = rs_corpus_add_failure(a->c, &f, e);
  a->st->store_s += rs_now() - t;
  return rc;
}

/* Fill the fields every instance has, from its function; then dedup and store. */
static int emit(A *a, const rs_variant *v, const char *target, const char *form, const rs_func *f,
                const rs_problem *p, char *raw, char *truth, const char *reason, const unsigned *ref,
                unsigned spill, rs_err *e) {
  rs_instance in;
  memset(&in, 0, sizeof in);
  in.ir_hash = rs_ir_hash(f);
  char key[64];
  snprintf(key, sizeof key, "%s/%s", target, form);
  if (!hset_add(&a->seen, in.ir_hash ^ rs_hash_bytes(key, strlen(key), 0))) {
    a->st->duplicates++;
    free(raw);
    free(truth);
    return 0;
  }
  snprintf(in.id, sizeof in.id, "%s/%s/%s/%s", v->family, v->name, target, form);
  snprintf(in.family, sizeof in.family, "%s", v->family);
  snprintf(in.kind, sizeof in.kind, "%s", v->kind);
  snprintf(in.target, sizeof in.target, "%s", target);
  snprintf(in.form, sizeof in.form, "%s", form);
  snprintf(in.variant, sizeof in.variant, "%s", v->name);
  snprintf(in.params, sizeof in.params, "%s%s%s%s%s", v->params,
           !strcmp(v->vendor, "amd") ? " -O" : "", !strcmp(v->vendor, "amd") ? (v->opt == 3 ? "3" : "2") : "",
           v->fastmath ? " -use_fast_math" : "", !strcmp(form, "sass") && a->inferred ? a->inferred : "");
  snprintf(in.function, sizeof in.function, "%s", f->name);
  double t0 = rs_now();
  rs_norm *nm = rs_normalize(f, e);
  if (!nm) {
    free(raw);
    free(truth);
    return -1;
  }
  a->st->analyze_s += rs_now() - t0;
  in.raw = raw;
  in.norm = nm->text;
  in.name_map = rs_norm_map_json(nm);
  in.truth = truth;
  in.cubin = a->cubin; /* owned by a (sass_instance) */
  in.cubin_len = a->cubin ? a->cubin_len : 0;
  snprintf(in.truth_reason, sizeof in.truth_reason, "%s", truth ? "" : reason);
  in.nvregs = p->nvars;
  in.ninsts = f->ninsts;
  in.nblocks = f->nblocks;
  in.nconf = p->nconf;
  const rs_target *tg = f->tgt;
  for (uint32_t k = 0; k < RS_CORPUS_NFILES && k < tg->nfiles; k++) {
    in.maxp[k] = p->maxp[k];
    in.ref_regs[k] = ref ? ref[k] : 0;
  }
  /* av_* values may use either vector file: only the union is bounded; budgets are the
   * function's (its launch bounds lower them: analysis/problem.h) */
  in.infeasible = rs_problem_infeasible(p);
  in.spill_bytes = spill;
  char sk[320];
  snprintf(sk, sizeof sk, "%s/%s/%s", v->family, v->vendor, v->name);
  in.split = (rs_hash_bytes(sk, strlen(sk), a->seed) % 100) < 80 ? RS_SPLIT_TRAIN : RS_SPLIT_TEST;
  in.same_nv = tg->vendor == RS_NV;
  in.same_amd = tg->vendor == RS_AMD;
  in.raw_lines = nm->st.raw_lines;
  in.raw_tokens = nm->st.raw_tokens;
  in.norm_lines = nm->st.norm_lines;
  in.norm_tokens = nm->st.norm_tokens;
  a->st->instances++;
  a->st->infeasible += in.infeasible;
  a->st->with_truth += truth != NULL;
  double t1 = rs_now();
  int rc = rs_corpus_append(a->c, &in, e);
  a->st->store_s += rs_now() - t1;
  in.norm = NULL; /* owned by nm */
  in.cubin = NULL;
  rs_norm_free(nm);
  rs_instance_clear(&in);
  return rc;
}

static rs_module *load_stage(const char *dir, const char *file, const char *target, rs_err *e) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  return rs_module_load(path, target, e);
}

static int amd_variant(A *a, const rs_variant *v, const char *dir, rs_err *e) {
  rs_err pe = {{0}};
  const char *arch = rs_variant_arch(v); /* archs: the variant's architecture */
  rs_module *pre = load_stage(dir, "prera.mir", arch, &pe), *ps = NULL, *fin = NULL;
  if (pre) ps = load_stage(dir, "postsplit.mir", arch, &pe);
  if (ps) fin = load_stage(dir, "final.mir", arch, &pe);
  int rc = 0;
  if (!fin) {
    char msg[600];
    snprintf(msg, sizeof msg, "compiler output rejected: %s", pe.msg);
    rc = fail(a, v, arch, msg, e);
    goto out;
  }
  unsigned lds = mir_number(fin->text, "ldsSize:");
  /* LDS per work-group: 64 KiB on every AMD architecture of the corpus but gfx950 (160 KiB) */
  unsigned lds_max = !strcmp(arch, "gfx950") ? 160 * 1024 : 64 * 1024;
  if (lds > lds_max) {
    char msg[128];
    snprintf(msg, sizeof msg, "LDS %u bytes exceeds the %u KiB per work-group of %s", lds, lds_max / 1024, arch);
    rc = fail(a, v, arch, msg, e);
    goto out;
  }
  unsigned ref[RS_MAX_FILES];
  rs_func_regs_used(fin->funcs[0], ref);
  unsigned spill = mir_number(fin->text, "stackSize:");
  double t0 = rs_now();
  rs_problem *pp = rs_problem_build(pre->funcs[0], e), *pq = rs_problem_build(ps->funcs[0], e);
  a->st->analyze_s += rs_now() - t0;
  /* ground truth: postsplit exactly (align with final), prera through greedy */
  t0 = rs_now();
  rs_alignment al;
  char reason_ps[160] = "", reason_pre[360] = "";
  char *truth_ps = NULL, *truth_pre = NULL;
  rs_module *sm = NULL; /* the split instance, when the prera row is one (truth.h) */
  rs_problem *sp = NULL;
  if (rs_truth_postsplit(ps->funcs[0], fin->funcs[0], &al, &pe) == 0) {
    uint32_t nm;
    uint32_t bad = rs_truth_check(pq, al.assign, &nm);
    if (bad == 0 && nm == 0) truth_ps = rs_truth_json(pq, al.assign);
    else {
      snprintf(reason_ps, sizeof reason_ps, "LLVM's allocation violates %u constraints of the MIR (%u class)",
               bad == UINT32_MAX ? 0 : bad, nm);
      a->st->truth_violations++;
    }
    rs_preg *as = rs_xcalloc(pre->funcs[0]->nvregs + 1, sizeof *as);
    uint32_t nsplit = rs_truth_prera(pre->funcs[0], ps->funcs[0], &al, as);
    if (nsplit) {
      /* the split label: each split value in one of the registers LLVM gave it, when that keeps
       * every constraint; else the split instance: the pre-RA MIR with greedy's split copies, each
       * piece in LLVM's register (docs/real-suite.md); else why neither exists */
      rs_preg *as0 = rs_xmalloc((pre->funcs[0]->nvregs + 1) * sizeof *as0);
      memcpy(as0, as, (pre->funcs[0]->nvregs + 1) * sizeof *as0);
      bool over = rs_problem_infeasible(pp);
      uint32_t k = over ? UINT32_MAX : rs_truth_prera_split(pre->funcs[0], ps->funcs[0], &al, pp, as);
      char why[256] = "", path[1200];
      if (!over && k == 0) {
        truth_pre = rs_truth_json(pp, as);
        a->st->split_labels++;
      } else {
        snprintf(path, sizeof path, "%s/prera.mir", dir);
        sm = rs_truth_split_instance(pre->funcs[0], ps->funcs[0], &al, as0, path, arch, &sp, &truth_pre, why, sizeof why);
        char why2[200] = "";
        if (!sm && strstr(why, "split in the SGPR round")) {
          sm = rs_truth_sground_instance(arch, v->opt, dir, ps->funcs[0], &al, &sp, &truth_pre, why2, sizeof why2);
          if (!sm) snprintf(why + strlen(why), sizeof why - strlen(why), ": %s", why2);
        }
      }
      if (sm) a->st->split_instances++;
      else if (!truth_pre) {
        if (over) /* LLVM spilled: the pre-RA pressure exceeds the budget: no map of one register per value */
          snprintf(reason_pre, sizeof reason_pre, "LLVM split or spilled %u values (pressure above the budget; %s)",
                   nsplit, why);
        else
          snprintf(reason_pre, sizeof reason_pre,
                   "LLVM split or spilled %u values (in one of its registers each: %u constraints; %s)",
                   nsplit, k == UINT32_MAX ? 0 : k, why);
        a->st->truth_split++;
      }
      free(as0);
    } else {
      bad = rs_truth_check(pp, as, &nm);
      if (bad == 0 && nm == 0) truth_pre = rs_truth_json(pp, as);
      else {
        /* every value kept one register through greedy, yet the map breaks the pre-RA MIR's
         * constraints. Measured (full build, 17 rows): llc-16's in-memory liveness was not that
         * of the MIR it printed (SIOptimizeExecMaskingPreRA's `S_ANDN2 $exec, %cc` far from
         * %cc's def, llvm-project#56051; greedy re-run from prera.mir is consistent: 14), greedy
         * moved a VGPR tuple into AGPRs (class inflation: 2), not explained (1) */
        snprintf(reason_pre, sizeof reason_pre,
                 "LLVM's final map does not carry back to the pre-RA MIR: %u conflicts, %u registers outside the class",
                 bad == UINT32_MAX ? 0 : bad, nm);
        a->st->truth_violations++;
      }
    }
    free(as);
    rs_alignment_free(&al);
  } else {
    snprintf(reason_ps, sizeof reason_ps, "stages do not align: %.100s", pe.msg);
    snprintf(reason_pre, sizeof reason_pre, "%s", reason_ps);
  }
  a->st->align_s += rs_now() - t0;
  if (!rc && sm) rc = emit(a, v, arch, "prera", sm->funcs[0], sp, rs_xstrndup(sm->text, sm->len), truth_pre, "", ref, spill, e);
  else if (!rc) rc = emit(a, v, arch, "prera", pre->funcs[0], pp, rs_xstrndup(pre->text, pre->len), truth_pre, reason_pre, ref, spill, e);
  else free(truth_pre);
  if (!rc) rc = emit(a, v, arch, "postsplit", ps->funcs[0], pq, rs_xstrndup(ps->text, ps->len), truth_ps, reason_ps, ref, spill, e);
  else free(truth_ps);
  rs_problem_free(pp);
  rs_problem_free(pq);
  rs_problem_free(sp);
  rs_module_free(sm);
out:
  rs_module_free(pre);
  rs_module_free(ps);
  rs_module_free(fin);
  return rc;
}

/* `ptxas -v` of one target: registers used and spill stores. */
static void ptxas_counts(const char *dir, const char *tg, unsigned ref[RS_MAX_FILES], unsigned *spill) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s.ptxas.txt", dir, tg);
  rs_err pe = {{0}};
  char *px = rs_read_file(path, NULL, &pe);
  memset(ref, 0, sizeof *ref * RS_MAX_FILES);
  *spill = 0;
  if (!px) return;
  const char *u = strstr(px, "Used ");
  if (u) ref[0] = (unsigned)strtoul(u + 5, NULL, 10);
  const char *s = strstr(px, "bytes spill stores");
  if (s) {
    while (s > px && s[-1] == ' ') s--;
    while (s > px && s[-1] >= '0' && s[-1] <= '9') s--;
    *spill = (unsigned)strtoul(s, NULL, 10);
  }
  free(px);
}

/* A target-level failure file (T.FAILED, T.sass.FAILED) as one line, or NULL. */
static char *failure_text(const char *dir, const char *file) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  if (access(path, F_OK)) return NULL;
  rs_err pe = {{0}};
  char *msg = rs_read_file(path, NULL, &pe);
  if (!msg) return rs_xstrndup(pe.msg, strlen(pe.msg));
  for (char *c = msg; *c; c++)
    if (*c == '\n') *c = ' ';
  return msg;
}

/* Form sass: the completed nvdisasm listing; its registers are the exact truth. */
static int sass_instance(A *a, const rs_variant *v, const char *dir, const char *tg, const unsigned *ref,
                         unsigned spill, rs_err *e) {
  char file[64], msg[700];
  snprintf(file, sizeof file, "%s.sass.FAILED", tg);
  char *why = failure_text(dir, file);
  if (why) {
    snprintf(msg, sizeof msg, "sass: %s", why);
    free(why);
    return fail(a, v, tg, msg, e);
  }
  snprintf(file, sizeof file, "%s.sass", tg);
  rs_err pe = {{0}};
  /* a listing with nvdisasm's -plr columns (`corpus disasm --plr`) reads a form the table lacks
   * with the row they give, kept only if pinned reproduces ptxas and the liveness is -plr's
   * (mcode/load.c); the rows go into the row's params (inferred_forms), read back from there */
  char path[1200], inferred[256];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  rs_mc mc;
  if (rs_mc_listing(&mc, path, tg, NULL, &pe)) {
    snprintf(msg, sizeof msg, "sass: listing rejected: %s", pe.msg);
    return fail(a, v, tg, msg, e);
  }
  const rs_module *m = mc.m;
  if (!m->nfuncs) { /* its one function refused alone (an unknown form): the row says why */
    snprintf(msg, sizeof msg, "sass: refused %s: %s", m->nrefused ? m->refused[0].form : "?",
             m->nrefused ? m->refused[0].why : "no function");
    rs_mc_free_input(&mc);
    return fail(a, v, tg, msg, e);
  }
  const rs_func *f = m->funcs[0];
  int ninf = rs_sass_inferred_param(mc.inferred, f->name, inferred, sizeof inferred);
  if (ninf < 0 || strlen(v->params) + strlen(" -use_fast_math") + strlen(inferred) >= sizeof ((rs_instance *)0)->params) {
    snprintf(msg, sizeof msg, "sass: the rows inferred from nvdisasm -plr for %s do not fit the row's params", f->name);
    rs_mc_free_input(&mc);
    return fail(a, v, tg, msg, e);
  }
  a->inferred = inferred;
  char cp[1200];
  snprintf(cp, sizeof cp, "%s/%s.cubin", dir, tg);
  rs_err ce = {{0}};
  a->cubin = (uint8_t *)rs_read_file(cp, &a->cubin_len, &ce); /* NULL: the row has none */
  double t0 = rs_now();
  /* the Problem as written back: the truth is checked against what every consumer verifies */
  rs_problem *p = rs_sass_problem(f, a->cubin, a->cubin_len, cp, NULL, &pe);
  a->st->analyze_s += rs_now() - t0;
  int rc = -1;
  if (!p) {
    snprintf(msg, sizeof msg, "sass: %s", pe.msg);
    rc = fail(a, v, tg, msg, e);
  } else {
    t0 = rs_now();
    char *truth = NULL, reason[128] = "";
    uint32_t nm = 0, bad = f->truth ? rs_truth_check(p, f->truth, &nm) : UINT32_MAX;
    if (bad == 0 && nm == 0) truth = rs_truth_json(p, f->truth);
    else {
      snprintf(reason, sizeof reason, "ptxas's allocation violates %u constraints of our SASS liveness (%u class)",
               bad == UINT32_MAX ? 0 : bad, nm);
      a->st->truth_violations++;
    }
    a->st->align_s += rs_now() - t0;
    rc = emit(a, v, tg, "sass", f, p, rs_xstrndup(m->text, m->len), truth, reason, ref, spill, e);
  }
  free(a->cubin);
  a->cubin = NULL;
  a->inferred = "";
  rs_problem_free(p);
  rs_mc_free_input(&mc);
  return rc;
}

static int nv_variant(A *a, const rs_variant *v, const char *dir, rs_err *e) {
  const char *tg[RS_GRID_MAX_TARGETS];
  int nt = rs_grid_targets(v->vendor, a->o->targets, tg), rc = 0;
  for (int i = 0; i < nt && !rc; i++) {
    char file[64];
    snprintf(file, sizeof file, "%s.FAILED", tg[i]);
    char *why = failure_text(dir, file);
    if (why) { /* nvcc or ptxas refused this target: both forms fail */
      rc = fail(a, v, tg[i], why, e);
      free(why);
      continue;
    }
    unsigned ref[RS_MAX_FILES], spill;
    ptxas_counts(dir, tg[i], ref, &spill);
    if (rs_grid_ptx_target(tg[i]) && !v->sass_only) {
      snprintf(file, sizeof file, "%s.ptx", tg[i]);
      rs_err pe = {{0}};
      rs_module *m = load_stage(dir, file, tg[i], &pe);
      if (!m) {
        char msg[600];
        snprintf(msg, sizeof msg, "compiler output rejected: %s", pe.msg);
        rc = fail(a, v, tg[i], msg, e);
      } else {
        double t0 = rs_now();
        rs_problem *p = rs_problem_build(m->funcs[0], e);
        a->st->analyze_s += rs_now() - t0;
        /* truth: ptxas's SASS registers matched back to the PTX values (corpus/ptxtruth.c) */
        char reason[128];
        int broken = 0;
        t0 = rs_now();
        char *truth = p ? rs_ptxtruth_for_dir(dir, tg[i], m->funcs[0], p, reason, sizeof reason, &broken) : NULL;
        a->st->align_s += rs_now() - t0;
        a->st->truth_violations += (uint32_t)broken;
        rc = p ? emit(a, v, tg[i], "ptx", m->funcs[0], p, rs_xstrndup(m->text, m->len), truth, reason, ref, spill, e)
               : -1;
        rs_problem_free(p);
        rs_module_free(m);
      }
    }
    if (!rc && a->o->nvdisasm) rc = sass_instance(a, v, dir, tg[i], ref, spill, e);
  }
  return rc;
}

int rs_assemble(const rs_variant *v, uint32_t n, const rs_compile_opts *o, uint64_t seed, rs_corpus *c,
                rs_assemble_stats *st, rs_err *e) {
  memset(st, 0, sizeof *st);
  A a = {o, seed, c, st, {0}, NULL, 0, ""};
  int rc = 0;
  char dir[1024], f[1100];
  for (uint32_t i = 0; i < n && !rc; i++) {
    rs_variant_dir(o, &v[i], dir, sizeof dir);
    snprintf(f, sizeof f, "%s/FAILED", dir);
    char *msg = access(f, F_OK) == 0 ? rs_read_file(f, NULL, e) : NULL;
    if (msg) {
      for (char *c2 = msg; *c2; c2++)
        if (*c2 == '\n') *c2 = ' ';
      const char *tg[RS_GRID_MAX_TARGETS];
      int nt = rs_variant_arch(&v[i]) ? 1 : rs_grid_targets(v[i].vendor, o->targets, tg);
      if (rs_variant_arch(&v[i])) tg[0] = rs_variant_arch(&v[i]);
      for (int k = 0; k < nt && !rc; k++) rc = fail(&a, &v[i], tg[k], msg, e);
      free(msg);
      continue;
    }
    rc = !strcmp(v[i].vendor, "amd") ? amd_variant(&a, &v[i], dir, e) : nv_variant(&a, &v[i], dir, e);
    if (o->progress && (i + 1) % 200 == 0)
      fprintf(stderr, "corpus: assembled %u/%u variants, %u instances\n", i + 1, n, st->instances);
  }
  free(a.seen.keys);
  return rc;
}
