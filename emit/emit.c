/* emit.c - one answer to one kernel: verify, rewrite, llc (MachineVerifier on), compare counts. */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include "emit/emit.h"
#include "corpus/grid.h"
#include "verify/verifier.h"
#include <dirent.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rs_emit_kind_of(const char *path) {
  const char *dot = strrchr(path, '.');
  if (!dot) return -1;
  if (!strcmp(dot, ".s")) return RS_EMIT_ASM;
  if (!strcmp(dot, ".hsaco") || !strcmp(dot, ".co")) return RS_EMIT_HSACO;
  if (!strcmp(dot, ".mir")) return RS_EMIT_MIR;
  return -1;
}

int rs_emit_variant_opt(const char *variant, const char *params) {
  /* variant names lower-case every axis: an `optN` token may be a kernel's own OPT macro (conv2d),
   * which the grid point's -D macros show; only the other one is the -O level */
  for (const char *p = variant ? strstr(variant, "opt") : NULL; p; p = strstr(p + 1, "opt")) {
    if (!(p == variant || p[-1] == '_')) continue;
    if (!(p[3] >= '0' && p[3] <= '3' && (p[4] == '_' || !p[4]))) continue;
    char mac[16];
    snprintf(mac, sizeof mac, "-DOPT=%c", p[3]);
    const char *m = params ? strstr(params, mac) : NULL;
    if (m && (m[7] == ' ' || !m[7])) continue;
    return p[3] - '0';
  }
  return 2;
}

void rs_emit_result_free(rs_emit_result *r) {
  free(r->llc_diag);
  r->llc_diag = NULL;
}

static int write_file(const char *path, const char *head, const char *text, size_t n, rs_err *e) {
  FILE *f = fopen(path, "wb");
  if (!f) return rs_errf(e, path, 0, "cannot write");
  if (head) fputs(head, f);
  size_t w = fwrite(text, 1, n, f);
  if (fclose(f) || w != n) return rs_errf(e, path, 0, "write failed");
  return 0;
}

static int file_index(const rs_target *t, const char *name) {
  for (uint32_t f = 0; f < t->nfiles; f++)
    if (!strcmp(t->files[f].name, name)) return (int)f;
  return -1;
}

/* The emitted kernel must use what the verifier said the answer uses (VGPRs, AGPRs, occupancy). */
static void compare_counts(const rs_target *t, const rs_check_result *v, const unsigned *named, int lds_occ,
                           const rs_kernel_counts *c, char *out, size_t n, char *note, size_t nn) {
  int fv = file_index(t, "vgpr"), fa = file_index(t, "agpr"), fs = file_index(t, "sgpr");
  size_t k = 0;
  out[0] = note[0] = 0;
  if (fv >= 0 && c->vgpr < (int)v->used[fv] && c->vgpr == (int)named[fv])
    snprintf(note, nn, "vgpr %d: the verifier's %u includes a tuple lane no instruction names", c->vgpr, v->used[fv]);
  if (fa >= 0 && c->agpr < (int)v->used[fa] && c->agpr == (int)named[fa])
    snprintf(note + strlen(note), nn - strlen(note), "%sagpr %d: the verifier's %u includes a tuple lane no instruction names",
             note[0] ? "; " : "", c->agpr, v->used[fa]);
  /* below the verifier's figure only where no instruction names the top register (an unused lane
   * of a tuple): LLVM counts registers instructions name */
  if (fv >= 0 && c->vgpr != (int)v->used[fv] && !(c->vgpr < (int)v->used[fv] && c->vgpr == (int)named[fv]))
    k += (size_t)snprintf(out + k, n - k, "vgpr %d vs verifier %u; ", c->vgpr, v->used[fv]);
  /* above it only where the extra AGPRs are LLVM's own: it spilled VGPRs into free AGPRs after
   * allocation (gfx90a/gfx940 at 256 VGPRs) and no other instruction names them */
  bool agpr_spilled = fa >= 0 && c->agpr > (int)v->used[fa] && c->agpr == c->agpr_spill &&
                      c->agpr_named <= (int)v->used[fa];
  if (agpr_spilled)
    snprintf(note + strlen(note), nn - strlen(note), "%sagpr %d: LLVM spilled VGPRs into AGPRs above the answer's %u "
             "(Reload Reuse)", note[0] ? "; " : "", c->agpr, v->used[fa]);
  if (fa >= 0 && c->agpr != (int)v->used[fa] && !(c->agpr < (int)v->used[fa] && c->agpr == (int)named[fa]) &&
      !agpr_spilled && k < n)
    k += (size_t)snprintf(out + k, n - k, "agpr %d vs verifier %u; ", c->agpr, v->used[fa]);
  /* SGPRs are reported, not compared: LLVM's figure adds VCC, FLAT_SCRATCH and XNACK_MASK and
   * leaves out registers that post-RA passes left unused (reduce_t256_v8_kahan's prera truth:
   * 13 vs the verifier's 14) */
  int occ = (int)v->occupancy;
  if (lds_occ > 0 && lds_occ < occ) occ = lds_occ;
  /* LLVM's SGPR count of the emitted kernel bounds it as the target's formula counts it: the
   * verifier's figure leaves out what LLVM adds to the answer's SGPRs (VCC, FLAT_SCRATCH and
   * XNACK_MASK: rocRAND sobol64's SGPR-round instances on gfx942, s0-s99 named, 106 counted, 7
   * waves, not 8), and an instance whose SGPRs are all physical (llc-22's postsplit: its SGPR round
   * is done) gives the answer no SGPR at all */
  int sgpr_occ = 0;
  if (fs >= 0 && c->sgpr > (int)v->used[fs] && t->occupancy) {
    unsigned u[RS_MAX_FILES];
    memcpy(u, v->used, sizeof u);
    u[fs] = (unsigned)c->sgpr;
    sgpr_occ = (int)t->occupancy(t, u);
    if (sgpr_occ < occ) occ = sgpr_occ;
  }
  if (c->occupancy >= 0 && c->occupancy != occ && k < n)
    k += (size_t)snprintf(out + k, n - k, "occupancy %d vs verifier %u (LDS bound %d, LLVM's SGPRs' bound %d); ",
                          c->occupancy, v->occupancy, lds_occ, sgpr_occ);
  if (k >= 2 && k < n) out[k - 2] = 0;
}

/* LLVM's occupancy bound from LDS and the work-group size (the target's lds_occupancy hook,
 * target/amdgpu.c): the group size is the "amdgpu-flat-work-group-size" maximum (256 when
 * absent). 0 when the MIR does not say its LDS size. */
static int lds_occupancy(const rs_func *f) {
  const char *p = f->src;
  for (uint32_t line = 1; *p && line < f->line; p++)
    if (*p == '\n') line++;
  const char *l = strstr(p, "\n  ldsSize:");
  if (!l || !f->tgt->lds_occupancy) return 0;
  long lds = strtol(l + 11, NULL, 10), wgs = 256;
  const char *w = strstr(f->src, "\"amdgpu-flat-work-group-size\"=\"");
  if (w) {
    const char *c = strchr(w + 31, ',');
    if (c) wgs = strtol(c + 1, NULL, 10);
  }
  if (wgs < 1) wgs = 1;
  if (lds < 0) lds = 0;
  return (int)f->tgt->lds_occupancy(f->tgt, (unsigned)lds, (unsigned)wgs);
}

static void rm_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *de;
  char p[1400];
  while ((de = readdir(d)))
    if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
      if (snprintf(p, sizeof p, "%.1100s/%.255s", dir, de->d_name) >= (int)sizeof p) continue;
      unlink(p);
    }
  closedir(d);
  rmdir(dir);
}

int rs_emit_answer(const rs_loaded *l, const char *answer, size_t len, const char *out_path, enum rs_emit_kind kind,
                   const rs_emit_opts *o, rs_emit_result *res, rs_err *e) {
  memset(res, 0, sizeof *res);
  const rs_problem *p = l->p;
  const rs_func *f = l->f;
  if (f->kind != RS_SRC_MIR || p->tgt->vendor != RS_AMD)
    return rs_errf(e, f->path, 0,
                   "%s: emit is for AMDGPU MIR; NVIDIA (PTX, SASS) has no assembler here: analysis only "
                   "(docs/emit.md)",
                   f->name);
  if (o->force && kind == RS_EMIT_HSACO)
    return rs_errf(e, out_path, 0, "--force writes .s or .mir only: a code object cannot carry the 'rejected' mark");
  rs_verifier vf;
  if (rs_verifier_open(&vf, RS_VERIFIER_NATIVE, p, 10000, e)) return -1;
  rs_candidate cand;
  rs_verify_text(&vf, &l->names, answer, len, &cand, &res->verdict, NULL);
  rs_verifier_close(&vf);
  int rc = 0;
  bool pass = res->verdict.verdict == RS_V_PASS;
  if (!pass && !o->force) {
    res->refused = true;
    rs_candidate_free(&cand);
    return 1;
  }
  rs_preg *assign = rs_xcalloc(f->nvregs + 1, sizeof *assign);
  for (uint32_t v = 0; v < p->nvars && !rc; v++) {
    if (!cand.reg || !cand.reg[v].lanes) {
      rc = rs_errf(e, f->path, 0, "the answer gives no register for %s: nothing to emit", p->vars[v].name);
      break;
    }
    assign[p->vars[v].fvreg] = (rs_preg){cand.reg[v].unit, p->vars[v].full};
  }
  rs_candidate_free(&cand);
  double t0 = rs_now();
  char *mir = rc ? NULL : rs_emit_rewrite(f, assign, &res->rw, e);
  free(assign);
  if (mir) { /* wave32: what llc's MIR parser needs to read it back (wave32.c) */
    char *fx = rs_emit_wave32_fixup(mir, &res->rw.vcc_respelled);
    free(mir);
    mir = rs_emit_declare_unlowered(fx, &res->rw.ir_declared);
    free(fx);
  }
  res->rewrite_s = rs_now() - t0;
  if (!mir) return -1;
  char mark[400] = "";
  if (!pass)
    snprintf(mark, sizeof mark,
             "%c regsweep emit --force: this answer was REJECTED by the verifier (%s: %.200s); for debugging only\n",
             kind == RS_EMIT_MIR ? '#' : ';', rs_verdict_str(res->verdict.verdict),
             res->verdict.ndiag ? res->verdict.diag[0] : "");
  char dir[1100], kp[1200], sp[1200];
  if (o->keep_dir) {
    snprintf(dir, sizeof dir, "%s", o->keep_dir);
    mkdir(dir, 0755); /* may exist */
  }
  else {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/rs-emit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
      free(mir);
      return rs_errf(e, dir, 0, "cannot create a work directory");
    }
  }
  snprintf(kp, sizeof kp, "%s/kernel.mir", dir);
  snprintf(sp, sizeof sp, "%s/kernel.s", dir);
  size_t mlen = strlen(mir);
  rc = write_file(kp, NULL, mir, mlen, e);
  rs_llc_opts lo = o->llc;
  /* the architecture without the wave64 suffix (the wave size is in the IR's target-features),
   * and the llc that produced the MIR (rs_arch_llvm: llc-16 for gfx940 and gfx1100, llc-22 for
   * gfx942, gfx950, gfx1200, gfx1201) unless RS_LLC or the caller chose one (an older llc cannot
   * read a newer one's MIR) */
  char cpu[32];
  snprintf(cpu, sizeof cpu, "%s", p->tgt->name);
  char *w64 = strstr(cpu, "w64");
  if (w64) *w64 = 0;
  if (!lo.mcpu) lo.mcpu = cpu;
  char llc[32], lld[32];
  int ver = rs_arch_llvm(cpu);
  if (ver && ver != 14 && lo.llc && !strcmp(lo.llc, "llc-14") && !(getenv("RS_LLC") && *getenv("RS_LLC"))) {
    snprintf(llc, sizeof llc, "llc-%d", ver);
    lo.llc = llc;
    if (lo.lld && !strcmp(lo.lld, "ld.lld-14") && ver >= 22) { /* lld-14 predates gfx942's e_flags */
      snprintf(lld, sizeof lld, "ld.lld-%d", ver);
      lo.lld = lld;
    }
  }
  if (!rc && !lo.start_after[0]) { /* where llc's allocation ends: its last round's rewriter */
    rs_rounds r;
    if (rs_llc_rounds(&lo, &r, e)) rc = -1;
    else snprintf(lo.start_after, sizeof lo.start_after, "%s", r.rewriter_last);
  }
  t0 = rs_now();
  if (!rc && strstr(mir, "type: spill-slot")) {
    /* spill slots in the order a one-shot compile gives them (slots.c) */
    char *bfi = NULL;
    rc = rs_emit_bfi(kp, &lo, &bfi, e);
    if (rc == 1) {
      res->llc_rejected = true;
      res->llc_diag = bfi;
      bfi = NULL;
    }
    char *col = rc ? NULL : rs_emit_color_slots(mir, bfi, &res->rw.slots_moved, e);
    free(bfi);
    if (col) {
      free(mir);
      mir = col;
      mlen = strlen(mir);
      rc = write_file(kp, NULL, mir, mlen, e);
    } else if (rc == 0) {
      rc = -1;
    }
  }
  if (rc != -1 && kind == RS_EMIT_MIR) { /* written even when llc refuses it: for debugging */
    int wr = write_file(out_path, mark[0] ? mark : NULL, mir, mlen, e);
    if (wr) rc = wr;
  }
  free(mir);
  if (!rc) {
    int st = rs_emit_llc(kp, sp, RS_EMIT_ASM, &lo, &res->llc_diag, e);
    if (st < 0) rc = -1;
    else if (st > 0) {
      res->llc_rejected = true;
      rc = 1;
    }
  }
  if (!rc) {
    size_t n = 0;
    char *as = rs_read_file(sp, &n, e);
    if (!as) rc = -1;
    else {
      if (rs_emit_counts(as, &res->counts, e)) rc = -1;
      else {
        res->lds_occupancy = lds_occupancy(f);
        compare_counts(p->tgt, &res->verdict, res->rw.named, res->lds_occupancy, &res->counts, res->counts_diff, sizeof res->counts_diff,
                       res->counts_note, sizeof res->counts_note);
        res->counts_checked = true;
      }
      if (!rc && kind == RS_EMIT_ASM) rc = write_file(out_path, mark[0] ? mark : NULL, as, n, e);
      free(as);
    }
  }
  if (!rc && kind == RS_EMIT_HSACO) {
    int st = rs_emit_llc(kp, out_path, RS_EMIT_HSACO, &lo, &res->llc_diag, e);
    if (st) {
      if (st > 0) res->llc_rejected = true;
      rc = st > 0 ? 1 : -1;
    }
  }
  res->llc_s = rs_now() - t0;
  if (!o->keep_dir) rm_tree(dir);
  return rc;
}
