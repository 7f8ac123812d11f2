/* test_sass_scoreboard.c - ptxas's scoreboards in the free Problem (cubin/scoreboard.c, mcode/problem.c), on every
 * committed fixture cubin (every .cubin of tests/fixtures/sass/, with its completed listing); no nvdisasm.
 *
 *  1. ptxas's own colouring has no scoreboard hazard and is a valid colouring of the Problem plus
 *     every conflict free mode adds (joins and scoreboards): pinned mode stays identical and the
 *     floor of free mode stays available.
 *  2. Our free colouring (before the floor) of the Problem with the scoreboard conflicts has no
 *     hazard under ptxas's control bits; without them it has some on sgemm_t4x4 (sm_89, sm_90):
 *     the conflicts are what removes them, not luck; on sgemm it is lowered into the cubin's words.
 *  3. A corpus row that keeps its cubin: `regalloc C.h5 --free|--pinned` takes its control bits. */
#include "front/front.h"
#include "check.h"
#include "analysis/problem.h"
#include "corpus/truth.h"
#include "cubin/lower.h"
#include "mcode/mcode.h"
#include "sass/sass.h"
#include "storage/corpus.h"
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIXDIR "tests/fixtures/sass/"

/* model/chaitin.c: free mode from ptxas's colouring */
uint32_t rs_chaitin_allocate_from(const rs_problem *p, const rs_preg *start, rs_preg *mine, rs_preg *out,
                                  bool *from_start);

/* Hazards of our colouring (before the floor) of every function, with or without the scoreboard
 * conflicts; *sb counts those added. Checks (1) on the way. */
static uint32_t free_hazards(const char *k, bool scoreboards, uint32_t *sb) {
  char cp[256], lp[256], tg[16], first[400];
  snprintf(cp, sizeof cp, FIXDIR "%s.cubin", k);
  snprintf(lp, sizeof lp, FIXDIR "%s.sass", k);
  rs_cubin c;
  rs_err e = {{0}};
  size_t n;
  CHECKF(!rs_cubin_load(cp, &c, &e), "%s", e.msg);
  char *l = rs_read_file(lp, &n, &e);
  CHECKF(l != NULL, "%s", e.msg);
  snprintf(tg, sizeof tg, "sm_%u", c.sm);
  rs_module *m = l ? rs_module_parse(lp, rs_xstrndup(l, n), n, RS_SRC_SASS, tg, &e) : NULL;
  CHECKF(m && m->nfuncs, "%s: %s", k, e.msg);
  uint32_t h = 0;
  CHECKF(m && !rs_sass_hazards_listing(&c, l, lp, &h, first, sizeof first, &e) && !h, "%s: ptxas's own: %u hazards %s",
         k, h, first);
  rs_preg **as = rs_xcalloc(m ? m->nfuncs + 1 : 1, sizeof *as);
  *sb = 0;
  for (uint32_t q = 0; m && q < m->nfuncs; q++) {
    const rs_func *f = m->funcs[q];
    uint64_t (*ctl)[2] = NULL;
    CHECKF(!rs_sass_ctl_of(&c, f, lp, &ctl, &e), "%s", e.msg);
    rs_problem *p = rs_problem_build(f, &e);
    CHECKF(p != NULL, "%s", e.msg);
    if (!p || !ctl) continue;
    uint32_t added = 0;
    rs_sass_join_conflicts(f, p);
    if (scoreboards) added = rs_sass_scoreboard_conflicts(f, (const uint64_t(*)[2])ctl, p);
    *sb += added;
    uint32_t nonmember = 0, viol = rs_truth_check(p, f->truth, &nonmember);
    CHECKF(!viol && !nonmember, "%s %s: ptxas's colouring violates %u added conflicts", k, f->name, viol);
    rs_preg *start = rs_xcalloc(p->nvars + 1, sizeof *start), *mine = rs_xcalloc(p->nvars + 1, sizeof *mine),
            *best = rs_xcalloc(p->nvars + 1, sizeof *best);
    for (uint32_t v = 0; v < p->nvars; v++) start[v] = f->truth[p->vars[v].fvreg];
    bool floored;
    CHECKF(!rs_chaitin_allocate_from(p, start, mine, best, &floored), "%s %s: values left uncoloured", k, f->name);
    as[q] = rs_xcalloc(f->nvregs + 1, sizeof *as[q]);
    for (uint32_t v = 0; v < f->nvregs; v++) as[q][v] = f->truth[v];
    for (uint32_t v = 0; v < p->nvars; v++) as[q][p->vars[v].fvreg] = mine[v];
    free(start);
    free(mine);
    free(best);
    free(ctl);
    rs_problem_free(p);
  }
  char *text = m ? rs_sass_write_module(m, as) : NULL;
  h = UINT32_MAX;
  CHECKF(text && !rs_sass_hazards_listing(&c, text, k, &h, first, sizeof first, &e), "%s: %s", k, e.msg);
  if (h && scoreboards) fprintf(stderr, "%s: first: %s\n", k, first);
  if (!h && scoreboards && text && !strncmp(k, "sgemm_t4x4.", 11)) { /* every form of sgemm has trusted fields */
    rs_lower_stats st;
    CHECKF(!rs_sass_lower(&c, l, text, NULL, k, &st, &e) && st.changed > 0, "%s: lowering our colouring: %s", k, e.msg);
  }
  for (uint32_t q = 0; m && q < m->nfuncs; q++) free(as[q]);
  free(as);
  free(text);
  rs_module_free(m);
  free(l);
  rs_cubin_free(&c);
  return h;
}

static void test_fixture(const char *k, bool races_without) {
  uint32_t sb = 0, sb0 = 0;
  uint32_t with = free_hazards(k, true, &sb), without = free_hazards(k, false, &sb0);
  printf("%s: %u scoreboard conflicts; hazards of our colouring: %u with them, %u without\n", k, sb, with, without);
  CHECKF(with == 0, "%s: %u hazards with the scoreboard conflicts", k, with);
  CHECKF(sb0 == 0, "%s: conflicts counted as scoreboard ones without control bits", k);
  CHECKF(!races_without || (without > 0 && without != UINT32_MAX && sb > 0), "%s: %u hazards without them (%u added)",
         k, without, sb);
}

/* A one-row corpus (sgemm_t4x4 sm_90's listing and cubin) through the CLI. */
static void test_corpus_row(const char *cli) {
  char dir[] = "/tmp/test_sass_scoreboard-XXXXXX", path[300], cmd[1200], line[1024];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/c.h5", dir);
  rs_err e = {{0}};
  size_t n = 0, cn = 0;
  rs_instance in;
  memset(&in, 0, sizeof in);
  snprintf(in.id, sizeof in.id, "sgemm/t4x4/sm_90/sass");
  snprintf(in.family, sizeof in.family, "sgemm");
  snprintf(in.target, sizeof in.target, "sm_90");
  snprintf(in.form, sizeof in.form, "sass");
  snprintf(in.function, sizeof in.function, "sgemm_tiled");
  in.raw = rs_read_file(FIXDIR "sgemm_t4x4.sm_90.sass", &n, &e);
  in.cubin = (uint8_t *)rs_read_file(FIXDIR "sgemm_t4x4.sm_90.cubin", &cn, &e);
  in.cubin_len = cn;
  rs_corpus *c = in.raw && in.cubin ? rs_corpus_create(path, &e) : NULL;
  CHECKF(c && !rs_corpus_append(c, &in, &e) && !rs_corpus_close(c, &e), "%s", e.msg);
  free(in.raw);
  free(in.cubin);
  unsigned conflicts = 0, valid = 0, identical = 0;
  for (int pin = 0; pin < 2; pin++) {
    snprintf(cmd, sizeof cmd, "'%s' regalloc '%s' %s 2>&1", cli, path, pin ? "--pinned" : "--free");
    FILE *p = popen(cmd, "r");
    while (p && fgets(line, sizeof line, p)) {
      unsigned s = 0;
      const char *q = strstr(line, " scoreboard conflicts,");
      if (q) {
        while (q > line && q[-1] >= '0' && q[-1] <= '9') q--;
        s = (unsigned)atoi(q);
      }
      conflicts += s;
      valid += !pin && strstr(line, ": valid,") != NULL;
      identical += pin && strstr(line, ": identical,") != NULL;
    }
    CHECKF(p && pclose(p) == 0, "%s", cmd);
  }
  CHECKF(conflicts > 100 && valid == 1 && identical == 1, "corpus row: %u scoreboard conflicts, %u valid, %u identical",
         conflicts, valid, identical);
  unlink(path);
  rmdir(dir);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  DIR *d = opendir(FIXDIR);
  CHECK(d != NULL);
  unsigned n = 0;
  for (struct dirent *de; d && (de = readdir(d));) {
    size_t len = strlen(de->d_name);
    if (len < 7 || len > 200 || strcmp(de->d_name + len - 6, ".cubin")) continue;
    char k[256];
    snprintf(k, sizeof k, "%.*s", (int)(len - 6), de->d_name);
    test_fixture(k, !strncmp(k, "sgemm_t4x4.", 11)); /* sgemm races without them (11 on sm_90) */
    n++;
  }
  if (d) closedir(d);
  CHECKF(n >= 3, "only %u fixture cubins", n);
  if (argc > 1) test_corpus_row(argv[1]);
  return rs_check_done("test_sass_scoreboard");
}
