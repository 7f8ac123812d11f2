/* test_corpus_merge.c - `regsweep corpus merge` on rows of the shipped mini corpus (real compiler
 * output): two corpora written from it, overlapping on the reduce family, one reduce row changed
 * in the second and one row of the second a copy (new id, same IR) of a row of the first:
 *  - the union of ids, the later input's row where both hold an id, the copy dropped as a duplicate;
 *  - texts, truth and cubin bytes unchanged; failures united (a later one replacing the same);
 *  - string attributes of both kept (the later one winning on a shared key);
 *  - OUT may be an input; a missing input is an error naming it and leaves OUT as it was. */
#include "check.h"
#include "corpus/merge.h"
#include "storage/corpus.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool in_a(const rs_instance *in) { return !strcmp(in->family, "sgemm") || !strcmp(in->family, "reduce"); }
static bool in_b(const rs_instance *in) { return !strcmp(in->family, "scan") || !strcmp(in->family, "reduce"); }

static bool same_bytes(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  rs_err e = {{0}};
  rs_corpus *mini = rs_corpus_open("data/corpus-mini.h5", &e);
  CHECKF(mini, "%s", e.msg);
  if (!mini) return rs_check_done("test_corpus_merge");
  char dir[] = "/tmp/rs_merge_XXXXXX";
  CHECK(mkdtemp(dir));
  char pa[64], pb[64], po[64];
  snprintf(pa, sizeof pa, "%s/a.h5", dir), snprintf(pb, sizeof pb, "%s/b.h5", dir), snprintf(po, sizeof po, "%s/o.h5", dir);
  rs_corpus *a = rs_corpus_create(pa, &e), *b = rs_corpus_create(pb, &e);
  CHECK(a && b);
  uint64_t n = rs_corpus_count(mini), na = 0, nb = 0, nunion = 0, sass_cubins = 0;
  char changed[160] = "", copied_from[160] = "";
  for (uint64_t i = 0; i < n; i++) {
    rs_instance in;
    if (rs_corpus_get(mini, i, &in, 1, &e)) break;
    if (in_a(&in)) {
      CHECK(!rs_corpus_append(a, &in, &e));
      na++;
    }
    if (in_a(&in) || in_b(&in)) nunion++;
    sass_cubins += in_a(&in) && in.cubin_len > 0;
    if (in_b(&in)) {
      if (!strcmp(in.family, "reduce") && !changed[0]) { /* the second build's version of one row */
        snprintf(changed, sizeof changed, "%s", in.id);
        snprintf(in.params, sizeof in.params, "rebuilt");
      }
      CHECK(!rs_corpus_append(b, &in, &e));
      nb++;
    }
    if (!strcmp(in.family, "sgemm") && !copied_from[0]) { /* same IR, target and form, new id */
      snprintf(copied_from, sizeof copied_from, "%s", in.id);
      snprintf(in.id, sizeof in.id, "copy/%.150s", copied_from);
      CHECK(!rs_corpus_append(b, &in, &e));
      nb++;
    }
    rs_instance_clear(&in);
  }
  rs_build_failure f = {0};
  snprintf(f.family, sizeof f.family, "reduce"), snprintf(f.variant, sizeof f.variant, "v1");
  snprintf(f.target, sizeof f.target, "gfx90a"), snprintf(f.message, sizeof f.message, "old reason");
  CHECK(!rs_corpus_add_failure(a, &f, &e));
  snprintf(f.message, sizeof f.message, "new reason");
  CHECK(!rs_corpus_add_failure(b, &f, &e));
  snprintf(f.variant, sizeof f.variant, "v2");
  CHECK(!rs_corpus_add_failure(b, &f, &e));
  CHECK(!rs_corpus_set_attr(a, "import:sgemm", "from a", &e) && !rs_corpus_set_attr(a, "seed", "1", &e));
  CHECK(!rs_corpus_set_attr(b, "import:scan", "from b", &e) && !rs_corpus_set_attr(b, "seed", "2", &e));
  CHECK(!rs_corpus_close(a, &e) && !rs_corpus_close(b, &e));
  CHECK(changed[0] && copied_from[0] && sass_cubins > 0);

  const char *in2[] = {pa, pb};
  rs_merge_stats st;
  CHECKF(!rs_corpus_merge(in2, 2, po, &st, &e), "%s", e.msg);
  uint64_t reduce = 0;
  rs_corpus *m = rs_corpus_open(po, &e);
  CHECK(m);
  for (uint64_t i = 0; i < n && m; i++) {
    rs_instance in;
    if (rs_corpus_get(mini, i, &in, 1, &e)) break;
    reduce += !strcmp(in.family, "reduce");
    int64_t at = rs_corpus_find(m, in.id, &e);
    CHECKF((at >= 0) == (in_a(&in) || in_b(&in)), "%s", in.id);
    rs_instance o;
    if (at >= 0 && !rs_corpus_get(m, (uint64_t)at, &o, 1, &e)) {
      CHECKF(same_bytes(o.raw, in.raw) && same_bytes(o.norm, in.norm) && same_bytes(o.truth, in.truth) &&
                 same_bytes(o.name_map, in.name_map) && o.split == in.split && o.ir_hash == in.ir_hash,
             "%s", in.id);
      CHECKF(o.cubin_len == in.cubin_len && (!o.cubin_len || !memcmp(o.cubin, in.cubin, o.cubin_len)), "%s", in.id);
      CHECKF(!strcmp(o.params, !strcmp(in.id, changed) ? "rebuilt" : in.params), "%s: %s", in.id, o.params);
      rs_instance_clear(&o);
    }
    rs_instance_clear(&in);
  }
  CHECK(st.rows == na + nb && st.kept == nunion && st.replaced == reduce && st.duplicates == 1);
  CHECKF(m && rs_corpus_count(m) == nunion, "%llu rows, %llu expected", m ? (unsigned long long)rs_corpus_count(m) : 0,
         (unsigned long long)nunion);
  char id[200];
  snprintf(id, sizeof id, "copy/%.150s", copied_from);
  CHECK(m && rs_corpus_find(m, id, &e) == -1);
  CHECK(m && st.failures == 2 && rs_corpus_failure_count(m) == 2);
  for (uint64_t k = 0; m && k < rs_corpus_failure_count(m); k++)
    if (!rs_corpus_get_failure(m, k, &f, &e)) CHECKF(strcmp(f.message, "old reason"), "the earlier failure was kept");
  char *s1 = m ? rs_corpus_get_attr(m, "import:sgemm") : NULL, *s2 = m ? rs_corpus_get_attr(m, "import:scan") : NULL,
       *s3 = m ? rs_corpus_get_attr(m, "seed") : NULL;
  CHECK(s1 && !strcmp(s1, "from a") && s2 && !strcmp(s2, "from b") && s3 && !strcmp(s3, "2"));
  free(s1), free(s2), free(s3);
  if (m) rs_corpus_close(m, &e);

  /* OUT as an input: the same rows again, every one replaced by its later self */
  const char *in3[] = {po, po};
  CHECKF(!rs_corpus_merge(in3, 2, po, &st, &e), "%s", e.msg);
  CHECK(st.kept == nunion && st.replaced == nunion && st.duplicates == 0);
  /* a missing input: an error naming it, OUT untouched */
  const char *in4[] = {pa, "/nonexistent/x.h5"};
  rs_err me = {{0}};
  CHECK(rs_corpus_merge(in4, 2, po, &st, &me) != 0 && strstr(me.msg, "/nonexistent/x.h5"));
  m = rs_corpus_open(po, &e);
  CHECK(m && rs_corpus_count(m) == nunion);
  if (m) rs_corpus_close(m, &e);
  rs_corpus_close(mini, &e);
  unlink(pa), unlink(pb), unlink(po), rmdir(dir);
  return rs_check_done("test_corpus_merge");
}
