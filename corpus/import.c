/* import.c - compile import units (one shell job each), split them per kernel into grid-style
 * variant directories, assemble them with corpus/assemble.c and merge into the corpus. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "corpus/import.h"
#include "cubin/cubin.h"
#include "cubin/disasm.h"
#include <ftw.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

/* The unit's directory: its name plus a hash of its job (every command and flag) and the
 * prelude, so that a changed recipe line or pipeline compiles again while an unchanged one is
 * taken as done. */
static void unit_dir(const rs_import_opts *o, const rs_imp_unit *u, const char *cubin_target, const rs_rounds_cache *rc,
                     char *buf, size_t n) {
  char *sc = rs_import_job(o, u, "", cubin_target, rc);
  uint64_t h = rs_hash_bytes(sc, strlen(sc), rs_hash_bytes(rs_import_prelude, strlen(rs_import_prelude), 0));
  free(sc);
  snprintf(buf, n, "%s/units/%s-%08x", o->work, u->name, (unsigned)(h & 0xffffffffu));
}

/* A cubin's target from its ELF header (EM_CUDA); an ELF object of another machine is searched
 * for cubins embedded uncompressed (an nvcc -c object's fatbin), each written to WORK/cubins. */
static int cubin_target(const char *path, char *tg, size_t n, rs_err *e) {
  rs_cubin c;
  if (rs_cubin_load(path, &c, e)) return -1;
  snprintf(tg, n, "sm_%u", c.sm);
  rs_cubin_free(&c);
  return 0;
}

/* MIR stages belong to the one architecture llc wrote them for: the IR's "target-cpu" when the
 * module has one (it must be asked for, or nothing was asked), else the first target asked. */
static int mir_target(rs_imp_unit *u, rs_err *e) {
  char *text = rs_read_file(u->source, NULL, e);
  if (!text) return -1;
  const char *c = strstr(text, "\"target-cpu\"=\"");
  char cpu[32] = "";
  if (c) snprintf(cpu, sizeof cpu, "%.*s", (int)strcspn(c + 14, "\""), c + 14);
  free(text);
  if (!cpu[0]) {
    u->targets[strcspn(u->targets, ",")] = 0;
    return 0;
  }
  if (!rs_arch_llvm(cpu))
    return rs_errf(e, u->source, 0, "MIR for %s, not an architecture the corpus reads (%s)", cpu, rs_amd_archs);
  if (!rs_list_has(u->targets, cpu))
    return rs_errf(e, u->source, 0, "MIR for %s, but the targets asked are %s", cpu, u->targets);
  snprintf(u->targets, sizeof u->targets, "%s", cpu);
  return 0;
}

static int extract_cubins(const char *path, const char *work, rs_imp_unit **units, uint32_t *nu, uint32_t *cap,
                          const rs_imp_unit *proto, rs_err *e) {
  size_t len;
  uint8_t *b = (uint8_t *)rs_read_file(path, &len, e);
  if (!b) return -1;
  int found = 0;
  for (size_t i = 1; i + 64 <= len; i++) {
    if (memcmp(b + i, "\x7f" "ELF\x02\x01", 6) || (b[i + 18] | b[i + 19] << 8) != 190) continue;
    /* its length: the furthest of the section table, the program header table and every
     * section's bytes */
    const uint8_t *h = b + i;
    uint64_t shoff, phoff, eh;
    uint16_t shentsize, shnum, phentsize, phnum;
    memcpy(&phoff, h + 0x20, 8);
    memcpy(&shoff, h + 0x28, 8);
    memcpy(&phentsize, h + 0x36, 2);
    memcpy(&phnum, h + 0x38, 2);
    memcpy(&shentsize, h + 0x3a, 2);
    memcpy(&shnum, h + 0x3c, 2);
    eh = shoff + (uint64_t)shentsize * shnum;
    if (!shoff || shentsize < 64 || eh > len - i) continue;
    if (phoff + (uint64_t)phentsize * phnum > eh) eh = phoff + (uint64_t)phentsize * phnum;
    for (uint16_t k = 0; k < shnum; k++) {
      const uint8_t *sh = h + shoff + (uint64_t)k * shentsize;
      uint32_t type;
      uint64_t off, size;
      memcpy(&type, sh + 4, 4);
      memcpy(&off, sh + 0x18, 8);
      memcpy(&size, sh + 0x20, 8);
      if (type != 8 /* SHT_NOBITS */ && off + size > eh) eh = off + size;
    }
    if (eh > len - i) continue;
    char dir[1100], out[1200];
    snprintf(dir, sizeof dir, "%s/cubins", work);
    if (rs_mkdirs(dir)) return rs_errf(e, dir, 0, "cannot create: %s", strerror(errno));
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(out, sizeof out, "%s/%.*s.%d.cubin", dir, (int)strcspn(base, "."), base, found);
    FILE *f = fopen(out, "wb");
    if (!f || fwrite(b + i, 1, eh, f) != eh || fclose(f)) {
      free(b);
      return rs_errf(e, out, 0, "cannot write");
    }
    rs_imp_unit u = *proto;
    snprintf(u.source, sizeof u.source, "%.500s", out);
    RS_PUSH(*units, *nu, *cap, u);
    found++;
    i += eh - 1;
  }
  free(b);
  if (!found)
    return rs_errf(e, path, 0, "no uncompressed cubin found in this ELF object (a compressed fatbin?): give the "
                               "cubin itself (nvcc -cubin, or cuobjdump -xelf all)");
  return 0;
}

/* A compiled unit is one job for all its targets, cached by the job's hash: a unit whose targets
 * mix the LLVM-22 architectures with earlier ones becomes two (the earlier ones first, in
 * their order; then the LLVM-22 ones), so that adding the new architectures to a recipe line
 * leaves the earlier ones' cached job as it was. Both keep one name (rs_imp_name_units). */
static bool split_llvm22(rs_imp_unit *a, rs_imp_unit *b) {
  if (!rs_imp_lang_amd(a->lang) || a->lang == RS_IMP_MIR) return false;
  char old[sizeof a->targets] = "", new22[sizeof a->targets] = "";
  for (const char *tg = a->targets; *tg;) {
    const char *c = strchr(tg, ',');
    int k = (int)(c ? c - tg : (long)strlen(tg));
    char t[16];
    snprintf(t, sizeof t, "%.*s", k, tg);
    char *to = rs_arch_llvm(t) == 22 ? new22 : old;
    snprintf(to + strlen(to), sizeof old - strlen(to), "%s%s", to[0] ? "," : "", t);
    tg = c ? c + 1 : tg + k;
  }
  if (!old[0] || !new22[0]) return false;
  *b = *a;
  snprintf(b->targets, sizeof b->targets, "%s", old);
  snprintf(a->targets, sizeof a->targets, "%s", new22);
  return true;
}

/* The llc each target of an AMD unit runs (as rs_import_job picks it) and its allocation rounds. */
static int probe_unit(const rs_imp_unit *u, const rs_import_opts *o, rs_rounds_cache *c, rs_err *e) {
  for (const char *tg = u->targets; *tg;) {
    const char *cm = strchr(tg, ',');
    char t[16];
    snprintf(t, sizeof t, "%.*s", (int)(cm ? cm - tg : (long)strlen(tg)), tg);
    tg = cm ? cm + 1 : tg + strlen(tg);
    bool dl;
    int ver = rs_import_llvm(o, u, t, &dl);
    if (!rs_rounds_probe(c, ver, t, u->opt, e)) return -1;
  }
  return 0;
}

/* Compile every unit, N jobs at a time; a unit's directory present = done. */
static int compile_units(rs_imp_unit *u, uint32_t n, char (*cubin_tg)[16], const rs_rounds_cache *rcache,
                         const rs_import_opts *o, rs_import_stats *st, rs_err *e) {
  int jobs = o->jobs > 0 ? o->jobs : 1, running = 0, rc = 0;
  uint32_t next = 0;
  char dir[1100];
  while ((next < n || running) && !rc) {
    while (running < jobs && next < n && !rc) {
      uint32_t i = next++;
      unit_dir(o, &u[i], cubin_tg[i], rcache, dir, sizeof dir);
      struct stat sbuf;
      if (stat(dir, &sbuf) == 0) {
        st->cached++;
        continue;
      }
      char parent[1100];
      snprintf(parent, sizeof parent, "%s/units", o->work);
      if (rs_mkdirs(parent)) {
        rc = rs_errf(e, parent, 0, "cannot create: %s", strerror(errno));
        break;
      }
      char *sc = rs_import_job(o, &u[i], dir, cubin_tg[i], rcache);
      pid_t pid = fork();
      if (pid == 0) {
        execl("/bin/sh", "sh", "-c", sc, (char *)NULL);
        _exit(127);
      }
      free(sc);
      if (pid < 0) rc = rs_errf(e, o->work, 0, "fork: %s", strerror(errno));
      else running++, st->compiled++;
    }
    if (!running) break;
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      rc = rs_errf(e, o->work, 0, "waitpid: %s", strerror(errno));
      break;
    }
    running--;
    if (!WIFEXITED(status) || WEXITSTATUS(status)) rc = rs_errf(e, o->work, 0, "compile job ended abnormally (%d)", status);
    if (o->progress)
      fprintf(stderr, "import: compiled %u/%u units (%u cached)\n", st->compiled + st->cached - (uint32_t)running, n,
              st->cached);
  }
  while (running > 0) {
    int status;
    if (waitpid(-1, &status, 0) > 0) running--;
    else if (errno != EINTR) break;
  }
  return rc;
}

static int wfile(const char *dir, const char *name, const char *text, rs_err *e) {
  char p[1400];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  if (!f || fputs(text, f) < 0 || fclose(f)) return rs_errf(e, p, 0, "cannot write");
  return 0;
}

static char *rfile(const char *dir, const char *name) {
  char p[1400];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  if (access(p, F_OK)) return NULL;
  rs_err pe = {{0}};
  return rs_read_file(p, NULL, &pe);
}

/* A variant name: unit.kernel, shortened with a hash when long (ids stay under 160 chars). */
static void vname(const rs_imp_unit *u, const char *kernel, char *out, size_t n) {
  if (strlen(u->name) + strlen(kernel) + 1 <= 80) snprintf(out, n, "%s.%s", u->name, kernel);
  else
    snprintf(out, n, "%s.%.*s~%08x", u->name, (int)(66 - strlen(u->name)), kernel,
             (unsigned)rs_hash_bytes(kernel, strlen(kernel), 7));
}

typedef struct {
  rs_variant *v;
  uint32_t n, cap;
} vlist;

static rs_variant *new_variant(vlist *l, const rs_import_opts *o, const rs_imp_unit *u, const char *name,
                               const char *arch, const rs_compile_opts *co, char *dir, size_t dn, rs_err *e) {
  rs_variant v;
  memset(&v, 0, sizeof v);
  snprintf(v.family, sizeof v.family, "%s", o->family);
  snprintf(v.vendor, sizeof v.vendor, "%s", rs_imp_lang_amd(u->lang) ? "amd" : "nv");
  snprintf(v.source, sizeof v.source, "%s", u->name);
  snprintf(v.kind, sizeof v.kind, "%s", rs_imp_lang_name(u->lang));
  snprintf(v.name, sizeof v.name, "%s", name);
  const char *base = strrchr(u->source, '/');
  char via[80];
  rs_import_route(o, u, arch, via, sizeof via);
  snprintf(v.params, sizeof v.params, "file=%.60s %.60s%s%.70s", base ? base + 1 : u->source, via, u->flags[0] ? " " : "",
           u->flags);
  v.opt = u->opt;
  snprintf(v.arch, sizeof v.arch, "%s", arch ? arch : "");
  v.sass_only = u->lang == RS_IMP_CUBIN;
  rs_variant_dir(co, &v, dir, dn);
  char cmd[1300];
  snprintf(cmd, sizeof cmd, "%s", dir);
  if (rs_mkdirs(cmd)) {
    rs_errf(e, dir, 0, "cannot create: %s", strerror(errno));
    return NULL;
  }
  RS_PUSH(l->v, l->n, l->cap, v);
  return &l->v[l->n - 1];
}

static int amd_split(const rs_import_opts *o, const rs_imp_unit *u, const char *ud, const rs_compile_opts *co,
                     vlist *l, uint32_t *nk, rs_err *e) {
  char vd[1100], name[128];
  uint32_t most = 0; /* kernels: the most any architecture has, not their sum */
  for (const char *tg = u->targets; *tg;) {
    const char *c = strchr(tg, ',');
    char t[16], ad[1200];
    snprintf(t, sizeof t, "%.*s", (int)(c ? c - tg : (long)strlen(tg)), tg);
    tg = c ? c + 1 : tg + strlen(tg);
    snprintf(ad, sizeof ad, "%s/%s", ud, t);
    /* sground.mir (the SGPR round's greedy) is optional: units compiled before it have none */
    char *failed = rfile(ad, "FAILED"), *st[4] = {rfile(ad, "prera.mir"), rfile(ad, "postsplit.mir"), rfile(ad, "final.mir"),
                                                  rfile(ad, "sground.mir")};
    char *ks = failed || !st[0] ? NULL : rs_split_kernels(st[0], 'm');
    rs_mir_index *ix[4] = {NULL, NULL, NULL, NULL};
    for (int s = 0; s < 4 && ks; s++) ix[s] = st[s] ? rs_mir_index_build(st[s]) : NULL;
    int rc = 0;
    uint32_t ks_n = 0;
    if (!ks || !*ks) { /* the unit failed here, or has no kernel: one failure row names it */
      if (!new_variant(l, o, u, u->name, t, co, vd, sizeof vd, e)) rc = -1;
      else rc = wfile(vd, "FAILED", failed ? failed : !st[0] ? "no MIR\n" : "no kernel (entry function) in the module\n", e);
    }
    for (char *k = ks && *ks ? ks : NULL, *nl; k && *k && !rc; k = nl + 1) {
      nl = strchr(k, '\n');
      *nl = 0;
      vname(u, k, name, sizeof name);
      if (!new_variant(l, o, u, name, t, co, vd, sizeof vd, e)) {
        rc = -1;
        break;
      }
      ks_n++;
      static const char *const files[4] = {"prera.mir", "postsplit.mir", "final.mir", "sground.mir"};
      for (int s = 0; s < 4 && !rc; s++) {
        char *part = ix[s] ? rs_mir_index_cut(ix[s], k) : NULL;
        if (!part && s == 3) continue;
        if (!part) {
          char msg[700];
          snprintf(msg, sizeof msg, "kernel %s missing from stage %s\n", k, files[s]);
          rc = wfile(vd, "FAILED", msg, e);
          break;
        }
        rc = wfile(vd, files[s], part, e);
        free(part);
      }
    }
    free(ks);
    free(failed);
    for (int s = 0; s < 4; s++) {
      rs_mir_index_free(ix[s]);
      free(st[s]);
    }
    if (ks_n > most) most = ks_n;
    if (rc) return rc;
  }
  *nk += most;
  return 0;
}

/* A listing `corpus disasm` refused when the unit compiled (T.sass.FAILED beside T.cubin) is
 * disassembled again by this binary: the cubin cannot have changed, but the SASS tables grow
 * between runs (forms, fill rows), so a re-run picks up what was added without compiling
 * again. Success replaces the failure by T.sass; a failure keeps today's reason. nd is opened
 * on first use (*nd_state: 0 not yet, 1 open, -1 no nvdisasm). */
static int redo_disasm(const rs_import_opts *o, const char *ud, const char *targets, rs_nvdisasm *nd,
                       int *nd_state, uint32_t *redone, rs_err *e) {
  int rc = 0;
  for (const char *tg = targets; *tg && !rc;) {
    const char *c = strchr(tg, ',');
    char t[16], f[64], cubin[1200];
    snprintf(t, sizeof t, "%.*s", (int)(c ? c - tg : (long)strlen(tg)), tg);
    tg = c ? c + 1 : tg + strlen(tg);
    snprintf(f, sizeof f, "%s.sass.FAILED", t);
    snprintf(cubin, sizeof cubin, "%s/%s.cubin", ud, t);
    char *old = rfile(ud, f);
    if (!old || access(cubin, R_OK)) {
      free(old);
      continue;
    }
    if (!*nd_state) *nd_state = rs_nvdisasm_open(o->nvdisasm, nd, &(rs_err){{0}}) ? -1 : 1;
    if (*nd_state < 0) {
      free(old);
      return 0;
    }
    const char *args[] = {"-c", NULL};
    char *text = NULL;
    rs_sass_stats st;
    rs_err de = {{0}};
    if (!rs_sass_disasm(nd, cubin, args, &text, &st, &de)) {
      snprintf(f, sizeof f, "%s.sass", t);
      rc = wfile(ud, f, text, e);
      snprintf(cubin, sizeof cubin, "%s/%s.sass.FAILED", ud, t);
      if (!rc) unlink(cubin), (*redone)++;
    } else { /* the job's wording: paths relative to the unit */
      char msg[sizeof de.msg + 64];
      size_t ul = strlen(ud);
      const char *m = strncmp(de.msg, ud, ul) || de.msg[ul] != '/' ? de.msg : de.msg + ul + 1;
      snprintf(msg, sizeof msg, "regsweep corpus disasm: %s\n", m);
      if (strcmp(msg, old)) rc = wfile(ud, f, msg, e);
    }
    free(text);
    free(old);
  }
  return rc;
}

static int nv_split(const rs_import_opts *o, const rs_imp_unit *u, const char *ud, const char *targets,
                    const rs_compile_opts *co, vlist *l, uint32_t *nk, rs_err *e) {
  /* kernels: the union over targets (a kernel may exist for some architectures only) */
  char *all = rs_xstrndup("", 0), f[64], vd[1100], name[128];
  size_t alen = 0;
  for (const char *tg = targets; *tg;) {
    const char *c = strchr(tg, ',');
    char t[16];
    snprintf(t, sizeof t, "%.*s", (int)(c ? c - tg : (long)strlen(tg)), tg);
    tg = c ? c + 1 : tg + strlen(tg);
    snprintf(f, sizeof f, "%s.ptx", t);
    char *x = rfile(ud, f), kind = 'p';
    if (!x) {
      snprintf(f, sizeof f, "%s.sass", t);
      x = rfile(ud, f);
      kind = 's';
    }
    char *ks = x ? rs_split_kernels(x, kind) : NULL;
    for (char *k = ks, *nl; k && *k; k = nl + 1) {
      nl = strchr(k, '\n');
      *nl = 0;
      bool seen = false;
      for (const char *a = all; *a && !seen; a += strlen(a) + 1) seen = !strcmp(a, k);
      if (seen) continue;
      size_t kl = strlen(k);
      all = rs_xrealloc(all, alen + kl + 2);
      memcpy(all + alen, k, kl + 1);
      alen += kl + 1;
      all[alen] = 0;
    }
    free(ks);
    free(x);
  }
  int rc = 0;
  if (!alen) { /* no kernel anywhere: the first target's failure names why */
    char *why = NULL;
    for (const char *tg = targets; *tg && !why;) {
      const char *c = strchr(tg, ',');
      snprintf(f, sizeof f, "%.*s.FAILED", (int)(c ? c - tg : (long)strlen(tg)), tg);
      why = rfile(ud, f);
      if (!why) {
        snprintf(f, sizeof f, "%.*s.sass.FAILED", (int)(c ? c - tg : (long)strlen(tg)), tg);
        why = rfile(ud, f);
      }
      tg = c ? c + 1 : tg + strlen(tg);
    }
    if (!new_variant(l, o, u, u->name, NULL, co, vd, sizeof vd, e)) rc = -1;
    else rc = wfile(vd, "FAILED", why ? why : "no kernel (.entry) in the output\n", e);
    free(why);
  }
  for (const char *k = all; alen && *k && !rc; k += strlen(k) + 1) {
    vname(u, k, name, sizeof name);
    if (!new_variant(l, o, u, name, NULL, co, vd, sizeof vd, e)) {
      rc = -1;
      break;
    }
    (*nk)++;
    for (const char *tg = targets; *tg && !rc;) {
      const char *c = strchr(tg, ',');
      char t[16], msg[700];
      snprintf(t, sizeof t, "%.*s", (int)(c ? c - tg : (long)strlen(tg)), tg);
      tg = c ? c + 1 : tg + strlen(tg);
      snprintf(f, sizeof f, "%s.FAILED", t);
      char *why = rfile(ud, f);
      if (why) {
        rc = wfile(vd, f, why, e);
        free(why);
        continue;
      }
      if (u->lang != RS_IMP_CUBIN) {
        snprintf(f, sizeof f, "%s.ptx", t);
        char *x = rfile(ud, f), *part = x ? rs_split_ptx(x, k) : NULL;
        if (!part) {
          snprintf(msg, sizeof msg, "kernel %s not in the %s PTX\n", k, t);
          snprintf(f, sizeof f, "%s.FAILED", t);
          rc = wfile(vd, f, msg, e);
          free(x);
          continue;
        }
        rc = wfile(vd, f, part, e);
        free(part);
        free(x);
        snprintf(f, sizeof f, "%s.ptxas.txt", t);
        x = rfile(ud, f);
        part = x ? rs_split_ptxas(x, k) : NULL;
        if (!rc && part) rc = wfile(vd, f, part, e);
        free(part);
        free(x);
      }
      /* the whole cubin is stored beside each kernel's listing (lower/emit re-encode into it) */
      char src[1400], dst[1400];
      snprintf(src, sizeof src, "%s/%s.cubin", ud, t);
      snprintf(dst, sizeof dst, "%s/%s.cubin", vd, t);
      if (!rc && access(src, F_OK) == 0 && symlink(src, dst) && errno != EEXIST)
        rc = rs_errf(e, dst, 0, "cannot link: %s", strerror(errno));
      snprintf(f, sizeof f, "%s.sass.FAILED", t);
      char *sf = rfile(ud, f);
      if (sf) {
        if (!rc) rc = wfile(vd, f, sf, e);
        free(sf);
        continue;
      }
      snprintf(f, sizeof f, "%s.sass", t);
      char *x = rfile(ud, f), *part = x ? rs_split_sass(x, k) : NULL;
      if (!x) {
        free(part);
        continue; /* no disassembler: form ptx only */
      }
      if (part) rc = rc ? rc : wfile(vd, f, part, e);
      else {
        snprintf(msg, sizeof msg, "kernel %s has no .text section in the %s listing\n", k, t);
        snprintf(f, sizeof f, "%s.sass.FAILED", t);
        rc = rc ? rc : wfile(vd, f, msg, e);
      }
      free(part);
      free(x);
    }
  }
  free(all);
  return rc;
}

/* Rows of an existing corpus, then the new ones: one dedup key (IR hash, target, form) over both. */
typedef struct {
  uint64_t *k;
  uint32_t n, cap;
} keys;

static bool key_add(keys *s, const rs_instance *in) {
  char t[64];
  snprintf(t, sizeof t, "%s/%s", in->target, in->form);
  uint64_t h = in->ir_hash ^ rs_hash_bytes(t, strlen(t), 0);
  for (uint32_t i = 0; i < s->n; i++)
    if (s->k[i] == h) return false;
  RS_PUSH(s->k, s->n, s->cap, h);
  return true;
}

static int copy_rows(rs_corpus *from, rs_corpus *to, const char *skip_family, keys *seen, uint32_t *kept,
                     uint32_t *dropped, uint32_t *dups, uint32_t *truths, rs_err *e) {
  uint64_t n = rs_corpus_count(from), nf = rs_corpus_failure_count(from);
  int rc = 0;
  for (uint64_t i = 0; i < n && !rc; i++) {
    rs_instance in;
    if ((rc = rs_corpus_get(from, i, &in, 1, e))) break;
    if (skip_family && !strcmp(in.family, skip_family)) (*dropped)++;
    else if (!key_add(seen, &in)) (*dups)++;
    else {
      rc = rs_corpus_append(to, &in, e);
      (*kept)++;
      *truths += in.truth_reason[0] == 0;
    }
    rs_instance_clear(&in);
  }
  for (uint64_t i = 0; i < nf && !rc; i++) {
    rs_build_failure f;
    if ((rc = rs_corpus_get_failure(from, i, &f, e))) break;
    if (!skip_family || strcmp(f.family, skip_family)) rc = rs_corpus_add_failure(to, &f, e);
  }
  return rc;
}

int rs_import(const rs_imp_unit *uin, uint32_t n, const rs_import_opts *o, const char *out, rs_import_stats *st,
              rs_err *e) {
  memset(st, 0, sizeof *st);
  /* ELF objects become one unit per embedded cubin; every cubin unit gets its own target */
  rs_imp_unit *u = NULL;
  uint32_t nu = 0, cap = 0;
  int rc = 0;
  for (uint32_t i = 0; i < n && !rc; i++) {
    rs_cubin c;
    rs_err ce = {{0}};
    if (uin[i].lang == RS_IMP_CUBIN && rs_cubin_load(uin[i].source, &c, &ce)) {
      rc = extract_cubins(uin[i].source, o->work, &u, &nu, &cap, &uin[i], e);
      continue;
    }
    if (uin[i].lang == RS_IMP_CUBIN) rs_cubin_free(&c);
    rs_imp_unit a = uin[i], b;
    if (split_llvm22(&a, &b)) RS_PUSH(u, nu, cap, b);
    RS_PUSH(u, nu, cap, a);
  }
  char(*ctg)[16] = rs_xcalloc(nu + 1, sizeof *ctg);
  uint32_t *kmax = rs_xcalloc(nu + 1, sizeof *kmax);
  for (uint32_t i = 0; i < nu && !rc; i++)
    if (u[i].lang == RS_IMP_CUBIN) {
      rc = cubin_target(u[i].source, ctg[i], sizeof ctg[i], e);
      if (!rc) snprintf(u[i].targets, sizeof u[i].targets, "%s", ctg[i]);
    }
  for (uint32_t i = 0; i < nu && !rc; i++)
    if (u[i].lang == RS_IMP_MIR) rc = mir_target(&u[i], e);
  rs_imp_name_units(u, nu);
  if (!rc) rc = rs_imp_check_overlap(u, nu, e);
  st->units = nu;
  double t0 = rs_now();
  char pp[1100];
  snprintf(pp, sizeof pp, "%s/prelude.cl", o->work);
  if (!rc && (rs_mkdirs(o->work) || wfile(o->work, "prelude.cl", rs_import_prelude, e)))
    rc = rs_errf(e, pp, 0, "cannot write");
  /* the llc of each AMD target, and the allocation rounds it runs (the stages), read once */
  rs_rounds_cache *rcache = rs_xcalloc(1, sizeof *rcache);
  for (uint32_t i = 0; i < nu && !rc; i++)
    if (rs_imp_lang_amd(u[i].lang) && u[i].lang != RS_IMP_MIR) rc = probe_unit(&u[i], o, rcache, e);
  if (!rc) rc = compile_units(u, nu, ctg, rcache, o, st, e);
  st->compile_s = rs_now() - t0;
  t0 = rs_now();
  char vroot[1100], tmp[1100], ud[1100];
  snprintf(vroot, sizeof vroot, "%s/v", o->work);
  snprintf(tmp, sizeof tmp, "%s.import.tmp", out);
  /* the per-kernel directories are redone every run: cheap, and never stale */
  if (!rc && access(vroot, F_OK) == 0 && nftw(vroot, rm_one, 16, FTW_DEPTH | FTW_PHYS))
    rc = rs_errf(e, vroot, 0, "cannot remove: %s", strerror(errno));
  rs_corpus *c = rc ? NULL : rs_corpus_create(tmp, e);
  if (!rc && !c) rc = -1;
  keys seen = {0};
  rs_corpus *old = NULL;
  if (!rc && access(out, F_OK) == 0) {
    old = rs_corpus_open(out, e);
    if (!old) rc = -1;
    uint32_t dups = 0, truths = 0;
    if (!rc) rc = copy_rows(old, c, o->family, &seen, &st->kept, &st->replaced, &dups, &truths, e);
  }
  /* new rows are assembled per unit into a scratch corpus, then added with the dedup above */
  char scratch[1100];
  snprintf(scratch, sizeof scratch, "%s/scratch.h5", o->work);
  rs_corpus *sc = rc ? NULL : rs_corpus_create(scratch, e);
  if (!rc && !sc) rc = -1;
  rs_nvdisasm nd;
  int nd_state = o->nvdisasm ? 0 : -1;
  for (uint32_t i = 0; i < nu && !rc; i++) {
    rs_compile_opts co = {NULL, vroot, rs_imp_lang_amd(u[i].lang) ? NULL : u[i].targets, o->nvcc ? o->nvcc : "",
                          1, 0, o->self, o->nvdisasm};
    vlist l = {0};
    unit_dir(o, &u[i], ctg[i], rcache, ud, sizeof ud);
    uint32_t nk = 0, first = 0;
    if (!rs_imp_lang_amd(u[i].lang)) rc = redo_disasm(o, ud, u[i].targets, &nd, &nd_state, &st->disasm_redone, e);
    rc = rc ? rc : rs_imp_lang_amd(u[i].lang) ? amd_split(o, &u[i], ud, &co, &l, &nk, e)
                                              : nv_split(o, &u[i], ud, u[i].targets, &co, &l, &nk, e);
    /* kernels: a kernel set split into several units (rs_imp_name_units) counts once, at its most */
    while (strcmp(u[first].name, u[i].name)) first++;
    if (nk > kmax[first]) st->kernels += nk - kmax[first], kmax[first] = nk;
    rs_assemble_stats as;
    if (!rc) rc = rs_assemble(l.v, l.n, &co, o->seed, sc, &as, e);
    if (!rc) {
      st->duplicates += as.duplicates;
      st->failures += as.failures;
      st->truth_split += as.truth_split;
      st->split_labels += as.split_labels;
      st->split_instances += as.split_instances;
      st->truth_violations += as.truth_violations;
    }
    free(l.v);
    if (o->progress && (i + 1) % 20 == 0) fprintf(stderr, "import: assembled %u/%u units\n", i + 1, nu);
  }
  if (sc && !rc) rc = rs_corpus_close(sc, e);
  else if (sc) rs_corpus_close(sc, &(rs_err){{0}});
  sc = rc ? NULL : rs_corpus_open(scratch, e);
  if (!rc && !sc) rc = -1;
  uint32_t dropped = 0;
  if (!rc) rc = copy_rows(sc, c, NULL, &seen, &st->instances, &dropped, &st->duplicates, &st->with_truth, e);
  if (sc) rs_corpus_close(sc, &(rs_err){{0}});
  unlink(scratch);
  /* attributes: those of the corpus imported into (the other families' import:NAME too), then
   * what this import was */
  if (old && !rc) rc = rs_corpus_copy_attrs(old, c, e);
  if (old) rs_corpus_close(old, &(rs_err){{0}});
  if (!rc) {
    char key[64], val[256];
    snprintf(key, sizeof key, "import:%s", o->family);
    snprintf(val, sizeof val, "%u units, %u kernels: family = library, variant = UNIT.KERNEL, params = file=FILE FLAGS, "
                              "kind = language", nu, st->kernels);
    rc = rs_corpus_set_attr(c, key, val, e);
  }
  if (c) {
    int crc = rs_corpus_close(c, rc ? &(rs_err){{0}} : e);
    if (!rc) rc = crc;
  }
  if (!rc && rename(tmp, out)) rc = rs_errf(e, out, 0, "cannot rename into place: %s", strerror(errno));
  if (rc) unlink(tmp);
  st->assemble_s = rs_now() - t0;
  free(seen.k);
  free(rcache);
  free(kmax);
  free(ctg);
  free(u);
  return rc;
}
