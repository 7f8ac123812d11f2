/* cmd_verify.c - `regsweep verify` (one candidate) and `regsweep oracle` (the pinned oracle). */
#include "cli/cli.h"
#include "corpus/instance.h"
#include "verify/oracle.h"
#include "verify/verifier.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void rs_usage_verify(void) {
  puts("usage: regsweep verify --corpus corpus.h5 --instance ID CANDIDATE.json [--verifier native|z3|both]\n"
       "       regsweep verify FILE.mir|FILE.ptx CANDIDATE.json [--function NAME] [--verifier ...]\n"
       "\n"
       "CANDIDATE.json maps virtual registers (normalized names like v12, or original ones like %4711)\n"
       "to registers in the target's spelling (v7, v[4:5], s[8:11], a[0:15], $vgpr4_vgpr5; R12, R[4:5],\n"
       "P3); '-' reads stdin. Prints the verdict (pass, syntax, dataflow, hardware, timeout), counts per\n"
       "violation kind, the first diagnostics, registers used and occupancy.\n"
       "  --timeout-ms N   Z3 budget per check (default 10000)\n"
       "Exit status: 0 pass, 1 rejected, 2 bad input (or a native/Z3 disagreement with --verifier both).");
}

void rs_usage_oracle(void) {
  puts("usage: regsweep oracle corpus.h5 [--mutants N] [--seed S] [--limit N] [--timeout-ms N] [-j N]\n"
       "                        [--filter family=fa,target=gfx90a,form=prera]\n"
       "\n"
       "Verifies every ground-truth map of the corpus with both verifiers (each must pass: a failure is\n"
       "a liveness bug and is printed with the instance, instruction and registers) and, per instance,\n"
       "at least N mutants (default 10) of several kinds: a value moved onto a register live at the same\n"
       "time or onto a fixed register, a misaligned tuple, a wrong register file, out of budget, a\n"
       "reserved register, a dropped key, an unknown key, an unknown register name. Every mutant must\n"
       "be rejected with the expected category by both verifiers. -j N checks instances in N processes;\n"
       "--filter (as in sweep) checks only the matching instances, --limit the first N of them.\n"
       "Exit status 0 only with no miss.");
}

static char *read_candidate(const char *path, size_t *len, rs_err *e) {
  if (strcmp(path, "-")) return rs_read_file(path, len, e);
  size_t cap = 65536, n = 0;
  char *b = rs_xmalloc(cap);
  size_t r;
  while ((r = fread(b + n, 1, cap - n - 1, stdin)) > 0) {
    n += r;
    if (n + 1 >= cap) {
      if (cap > (size_t)RS_CAND_MAX_BYTES * 2) break; /* enough to know it is too large */
      b = rs_xrealloc(b, cap *= 2);
    }
  }
  b[n] = 0;
  *len = n;
  return b;
}

/* usage: print registers used and occupancy (a property of the answer: printed once) */
static void print_result(const rs_loaded *l, const char *who, const rs_check_result *r, const rs_candidate *c,
                         bool usage) {
  const rs_target *t = l->p->tgt;
  printf("%s: %s%s (%.3f ms)\n", who, rs_verdict_str(r->verdict), c && c->wrapped ? " (answer was wrapped in prose)" : "",
         r->seconds * 1e3);
  for (int k = 0; k < RS_VK__N; k++)
    if (r->counts[k]) printf("  %-9s %u\n", rs_vkind_str((rs_vkind)k), r->counts[k]);
  for (uint32_t i = 0; i < r->ndiag; i++) printf("  - %s\n", r->diag[i]);
  if (usage && r->verdict != RS_V_SYNTAX) {
    printf("  registers used:");
    for (uint32_t f = 0; f < t->nfiles && f < RS_MAX_FILES; f++)
      if (t->files[f].pressure) printf(" %s %u", t->files[f].name, r->used[f]);
    printf("; occupancy %u %s\n", r->occupancy, t->occupancy_unit);
  }
}

int rs_cmd_verify(int argc, char **argv) {
  const char *corpus = NULL, *instance = NULL, *function = NULL, *vname = "native", *pos[2] = {0, 0};
  unsigned timeout = 10000;
  int npos = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--corpus") && i + 1 < argc) corpus = argv[++i];
    else if (!strcmp(a, "--instance") && i + 1 < argc) instance = argv[++i];
    else if (!strcmp(a, "--function") && i + 1 < argc) function = argv[++i];
    else if (!strcmp(a, "--verifier") && i + 1 < argc) vname = argv[++i];
    else if (!strcmp(a, "--timeout-ms") && i + 1 < argc) timeout = (unsigned)strtoul(argv[++i], NULL, 10);
    else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "regsweep verify: unknown option '%s'\n", a);
      return 2;
    } else if (npos < 2) pos[npos++] = a;
    else {
      fprintf(stderr, "regsweep verify: too many arguments\n");
      return 2;
    }
  }
  int kind = rs_verifier_kind(vname);
  const char *cand_path = corpus ? pos[0] : pos[1];
  if (kind < 0 || !cand_path || (corpus && (!instance || npos != 1)) || (!corpus && npos != 2)) {
    rs_usage_verify();
    return 2;
  }
  rs_err e = {{0}};
  rs_loaded l;
  if (rs_load_named(corpus, instance, pos[0], function, &l, &e)) {
    fprintf(stderr, "regsweep verify: %s\n", e.msg);
    return 2;
  }
  size_t len = 0;
  char *text = read_candidate(cand_path, &len, &e);
  if (!text) {
    fprintf(stderr, "regsweep verify: %s\n", e.msg);
    rs_loaded_free(&l);
    return 2;
  }
  rs_verifier vf;
  if (rs_verifier_open(&vf, kind, l.p, timeout, &e)) {
    fprintf(stderr, "regsweep verify: %s\n", e.msg);
    free(text);
    rs_loaded_free(&l);
    return 2;
  }
  rs_candidate cand;
  rs_check_result res, z3;
  bool agree = rs_verify_text(&vf, &l.names, text, len, &cand, &res, &z3);
  printf("%s: %s\n", l.row.id, l.f->name);
  print_result(&l, kind == RS_VERIFIER_Z3 ? "z3" : "native", &res, &cand, true);
  if (kind == RS_VERIFIER_BOTH) print_result(&l, "z3", &z3, NULL, false);
  int status = res.verdict == RS_V_PASS ? 0 : 1;
  if (!agree) {
    fprintf(stderr, "regsweep verify: BUG: native says %s, z3 says %s\n", rs_verdict_str(res.verdict),
            rs_verdict_str(z3.verdict));
    status = 2;
  }
  rs_candidate_free(&cand);
  rs_verifier_close(&vf);
  free(text);
  rs_loaded_free(&l);
  return status;
}

static void report_line(void *ctx, const char *line) {
  rs_oracle_stats *st = ctx;
  if (st->failures_shown++ < 50) fprintf(stderr, "%s\n", line);
}

/* One process's totals, sent whole through a pipe under -j: the grand total and the same per
 * architecture, family and form (so one run says where a miss is, and 0 misses "on each"). */
enum { GROUPS = 56 };
static const rs_verdict cats[3] = {RS_V_SYNTAX, RS_V_DATAFLOW, RS_V_HARDWARE}; /* mutants per category */
typedef struct {
  char key[8], name[32];
  uint32_t truths, truths_ok, mutants, mutants_ok, misses, cat[3], cat_ok[3];
} group;
typedef struct {
  rs_oracle_stats st;
  uint32_t misses, skipped, ngroups;
  group g[GROUPS];
} part;

static group *group_of(part *pt, const char *key, const char *name) {
  for (uint32_t i = 0; i < pt->ngroups; i++)
    if (!strcmp(pt->g[i].key, key) && !strcmp(pt->g[i].name, name)) return &pt->g[i];
  if (pt->ngroups == GROUPS) return NULL; /* more groups than a corpus has: the totals still count */
  group *g = &pt->g[pt->ngroups++];
  memset(g, 0, sizeof *g);
  snprintf(g->key, sizeof g->key, "%s", key);
  snprintf(g->name, sizeof g->name, "%s", name);
  return g;
}

static void group_add(group *g, const rs_oracle_stats *before, const rs_oracle_stats *after, uint32_t misses) {
  if (!g) return;
  g->truths += after->truths - before->truths;
  g->truths_ok += after->truths_accepted - before->truths_accepted;
  g->mutants += after->mutants - before->mutants;
  g->mutants_ok += after->mutants_rejected - before->mutants_rejected;
  g->misses += misses;
  for (int m = 0; m < RS_MUT__N; m++)
    for (int k = 0; k < 3; k++)
      if (rs_mutation_expected((rs_mutation)m) == cats[k]) {
        g->cat[k] += after->per_kind[m] - before->per_kind[m];
        g->cat_ok[k] += after->per_kind_ok[m] - before->per_kind_ok[m];
      }
}

static void part_merge(part *to, const part *from) {
  rs_oracle_stats *a = &to->st;
  const rs_oracle_stats *b = &from->st;
  a->instances += b->instances, a->truths += b->truths, a->truths_accepted += b->truths_accepted;
  a->mutants += b->mutants, a->mutants_rejected += b->mutants_rejected, a->disagreements += b->disagreements;
  for (int m = 0; m < RS_MUT__N; m++) a->per_kind[m] += b->per_kind[m], a->per_kind_ok[m] += b->per_kind_ok[m];
  a->native_s += b->native_s, a->z3_s += b->z3_s, a->setup_s += b->setup_s;
  to->misses += from->misses, to->skipped += from->skipped;
  for (uint32_t i = 0; i < from->ngroups; i++) {
    const group *s = &from->g[i];
    group *d = group_of(to, s->key, s->name);
    if (!d) continue;
    d->truths += s->truths, d->truths_ok += s->truths_ok, d->mutants += s->mutants;
    d->mutants_ok += s->mutants_ok, d->misses += s->misses;
    for (int k = 0; k < 3; k++) d->cat[k] += s->cat[k], d->cat_ok[k] += s->cat_ok[k];
  }
}

/* Check instances k, k+stride, ... (at most limit counted over all processes). */
static int oracle_part(const char *path, const char *filter, uint32_t k, uint32_t stride, unsigned long limit,
                       unsigned long mutants, unsigned long seed, unsigned timeout, part *pt) {
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_open(path, &e);
  if (!c) {
    fprintf(stderr, "regsweep oracle: %s\n", e.msg);
    return 2;
  }
  uint64_t n = rs_corpus_count(c), seen = 0;
  double last = rs_now(); /* a truths-only run of a full corpus takes most of an hour: say where it is */
  for (uint64_t i = 0; i < n; i++) {
    rs_instance row;
    if (rs_corpus_get(c, i, &row, 0, &e)) {
      fprintf(stderr, "regsweep oracle: %s\n", e.msg);
      rs_corpus_close(c, NULL);
      return 2;
    }
    bool has_truth = row.truth_reason[0] == 0, taken = rs_filter_match(filter, &row);
    rs_instance_clear(&row);
    if (!taken) continue;
    if (!has_truth) {
      if (i % stride == k) pt->skipped++;
      continue;
    }
    if (limit && seen >= limit) break;
    if (seen++ % stride != k) continue;
    rs_loaded l;
    if (rs_instance_load(c, i, &l, &e)) {
      fprintf(stderr, "regsweep oracle: %s\n", e.msg);
      rs_corpus_close(c, NULL);
      return 2;
    }
    rs_oracle_stats before = pt->st;
    uint32_t miss = rs_oracle_instance(l.p, l.row.id, l.row.truth, (uint32_t)mutants, seed, timeout, &pt->st,
                                       report_line, &pt->st);
    pt->misses += miss;
    group_add(group_of(pt, "target", l.row.target), &before, &pt->st, miss);
    group_add(group_of(pt, "family", l.row.family), &before, &pt->st, miss);
    group_add(group_of(pt, "form", l.row.form), &before, &pt->st, miss);
    rs_loaded_free(&l);
    double now = rs_now();
    if (now - last >= 60) {
      last = now;
      fprintf(stderr, "oracle: [%u/%u] instance %" PRIu64 " of %" PRIu64 ": %u truths checked, %u misses so far\n", k + 1,
              stride, i + 1, n, pt->st.truths, pt->misses);
    }
  }
  rs_corpus_close(c, NULL);
  return 0;
}

/* A part is larger than PIPE_BUF: the pipe may deliver it in pieces. */
static bool pipe_write(int fd, const void *buf, size_t n) {
  for (const char *b = buf; n;) {
    ssize_t w = write(fd, b, n);
    if (w <= 0) return false;
    b += w, n -= (size_t)w;
  }
  return true;
}

static bool pipe_read(int fd, void *buf, size_t n) {
  for (char *b = buf; n;) {
    ssize_t r = read(fd, b, n);
    if (r <= 0) return false;
    b += r, n -= (size_t)r;
  }
  return true;
}

static void print_groups(const part *pt, const char *key) {
  for (uint32_t i = 0; i < pt->ngroups; i++) {
    const group *g = &pt->g[i];
    if (strcmp(g->key, key)) continue;
    printf("oracle: %-6s %-16s truths %u/%u, mutants %u/%u (syntax %u/%u, dataflow %u/%u, hardware %u/%u), misses %u\n",
           key, g->name, g->truths_ok, g->truths, g->mutants_ok, g->mutants, g->cat_ok[0], g->cat[0], g->cat_ok[1],
           g->cat[1], g->cat_ok[2], g->cat[2], g->misses);
  }
}

int rs_cmd_oracle(int argc, char **argv) {
  const char *path = NULL;
  unsigned long mutants = 10, seed = 1, limit = 0, jobs = 1;
  unsigned timeout = 10000;
  const char *filter = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--mutants") && i + 1 < argc) mutants = strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--limit") && i + 1 < argc) limit = strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--timeout-ms") && i + 1 < argc) timeout = (unsigned)strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "-j") && i + 1 < argc) jobs = strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
    else if (argv[i][0] != '-' && !path) path = argv[i];
    else {
      rs_usage_oracle();
      return 2;
    }
  }
  if (!rs_filter_valid(filter)) {
    fprintf(stderr, "regsweep oracle: --filter %s: takes family=, target=, form=, kind= (values joined by '|'), sample=K\n", filter);
    return 2;
  }
  if (!path || !jobs || jobs > 64) {
    rs_usage_oracle();
    return 2;
  }
  part *all = rs_xcalloc(1, sizeof *all);
  int status = 0;
  if (jobs == 1) {
    status = oracle_part(path, filter, 0, 1, limit, mutants, seed, timeout, all);
  } else {
    /* each child checks every jobs-th instance and sends its totals back through a pipe */
    int fds[64][2];
    pid_t pids[64];
    for (unsigned long j = 0; j < jobs; j++) {
      if (pipe(fds[j])) {
        free(all);
        return 2;
      }
      pids[j] = fork();
      if (pids[j] == 0) {
        close(fds[j][0]);
        part *cp = rs_xcalloc(1, sizeof *cp);
        int rc = oracle_part(path, filter, (uint32_t)j, (uint32_t)jobs, limit, mutants, seed, timeout, cp);
        bool ok = pipe_write(fds[j][1], cp, sizeof *cp);
        _exit(rc ? rc : ok ? 0 : 2);
      }
      close(fds[j][1]);
    }
    part *cp = rs_xcalloc(1, sizeof *cp);
    for (unsigned long j = 0; j < jobs; j++) {
      bool ok = pipe_read(fds[j][0], cp, sizeof *cp);
      close(fds[j][0]);
      int ws;
      waitpid(pids[j], &ws, 0);
      if (!ok || !WIFEXITED(ws) || WEXITSTATUS(ws)) {
        status = 2;
        continue;
      }
      part_merge(all, cp);
    }
    free(cp);
  }
  if (status) {
    free(all);
    return status;
  }
  const rs_oracle_stats *st = &all->st;
  uint32_t misses = all->misses;
  printf("oracle: %u instances with ground truth (%u without: NVIDIA or split by LLVM)\n", st->instances, all->skipped);
  printf("oracle: truths accepted %u/%u; mutants rejected with the expected category %u/%u; disagreements %u\n",
         st->truths_accepted, st->truths, st->mutants_rejected, st->mutants, st->disagreements);
  printf("oracle: mutants by kind:");
  for (int m = 0; m < RS_MUT__N; m++) printf(" %s %u/%u", rs_mutation_str((rs_mutation)m), st->per_kind_ok[m], st->per_kind[m]);
  printf("\n");
  print_groups(all, "target");
  print_groups(all, "family");
  print_groups(all, "form");
  printf("oracle: verifier time: native %.2f s, z3 %.2f s checking, %.2f s building the verifiers (Z3 contexts)\n",
         st->native_s, st->z3_s, st->setup_s);
  printf("oracle: %u misses\n", misses);
  free(all);
  return misses ? 1 : 0;
}
