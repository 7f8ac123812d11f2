/* merge.c - several corpora into one: rows, failures and attributes (merge.h says the rules). */
#include "corpus/merge.h"
#include "storage/corpus.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Open hash set of 64-bit keys (dedup key of a row: IR hash mixed with target and form). */
typedef struct {
  uint64_t *k;
  uint64_t n, cap;
} kset;

static bool kset_add(kset *s, uint64_t h) {
  if (!h) h = 1; /* 0 marks an empty slot */
  if (2 * (s->n + 1) > s->cap) {
    uint64_t nc = s->cap ? 2 * s->cap : 1024, *nk = rs_xcalloc(nc, sizeof *nk);
    for (uint64_t i = 0; i < s->cap; i++)
      if (s->k[i])
        for (uint64_t j = s->k[i] & (nc - 1);; j = (j + 1) & (nc - 1))
          if (!nk[j]) {
            nk[j] = s->k[i];
            break;
          }
    free(s->k);
    s->k = nk, s->cap = nc;
  }
  for (uint64_t j = h & (s->cap - 1);; j = (j + 1) & (s->cap - 1)) {
    if (s->k[j] == h) return false;
    if (!s->k[j]) {
      s->k[j] = h, s->n++;
      return true;
    }
  }
}

static uint64_t row_key(const rs_instance *in) {
  char t[64];
  snprintf(t, sizeof t, "%s/%s", in->target, in->form);
  return rs_hash_bytes(t, strlen(t), in->ir_hash);
}

static bool same_failure(const rs_build_failure *a, const rs_build_failure *b) {
  return !strcmp(a->family, b->family) && !strcmp(a->variant, b->variant) && !strcmp(a->target, b->target);
}

/* Does a later input (c[i+1..n)) hold failure f? */
static int failure_later(rs_corpus **c, uint32_t i, uint32_t n, const rs_build_failure *f, bool *later, rs_err *e) {
  *later = false;
  for (uint32_t j = i + 1; j < n && !*later; j++)
    for (uint64_t k = 0; k < rs_corpus_failure_count(c[j]) && !*later; k++) {
      rs_build_failure g;
      if (rs_corpus_get_failure(c[j], k, &g, e)) return -1;
      *later = same_failure(f, &g);
    }
  return 0;
}

static int merge_one(rs_corpus **c, uint32_t i, uint32_t n, rs_corpus *to, kset *seen, rs_merge_stats *st, rs_err *e) {
  int rc = 0;
  for (uint64_t r = 0; r < rs_corpus_count(c[i]) && !rc; r++) {
    rs_instance in;
    if ((rc = rs_corpus_get(c[i], r, &in, 1, e))) break;
    st->rows++;
    bool later = false;
    for (uint32_t j = i + 1; j < n && !later && !rc; j++) {
      int64_t at = rs_corpus_find(c[j], in.id, e);
      if (at == -2) rc = -1;
      later = at >= 0;
    }
    if (rc || later) st->replaced += later;
    else if (!kset_add(seen, row_key(&in))) st->duplicates++;
    else if (!(rc = rs_corpus_append(to, &in, e))) st->kept++, st->truths += in.truth_reason[0] == 0;
    rs_instance_clear(&in);
  }
  for (uint64_t k = 0; k < rs_corpus_failure_count(c[i]) && !rc; k++) {
    rs_build_failure f;
    bool later;
    if (!(rc = rs_corpus_get_failure(c[i], k, &f, e)) && !(rc = failure_later(c, i, n, &f, &later, e)) && !later &&
        !(rc = rs_corpus_add_failure(to, &f, e)))
      st->failures++;
  }
  if (!rc) rc = rs_corpus_copy_attrs(c[i], to, e);
  return rc;
}

int rs_corpus_merge(const char *const *in, uint32_t n, const char *out, rs_merge_stats *st, rs_err *e) {
  memset(st, 0, sizeof *st);
  if (!n) return rs_errf(e, out, 0, "no corpus to merge");
  rs_corpus **c = rs_xcalloc(n, sizeof *c);
  int rc = 0;
  for (uint32_t i = 0; i < n && !rc; i++)
    if (!(c[i] = rs_corpus_open(in[i], e))) rc = -1;
  size_t tl = strlen(out) + 16;
  char *tmp = rs_xmalloc(tl);
  snprintf(tmp, tl, "%s.merge.tmp", out);
  rs_corpus *to = rc ? NULL : rs_corpus_create(tmp, e);
  if (!rc && !to) rc = -1;
  kset seen = {0};
  for (uint32_t i = 0; i < n && !rc; i++) rc = merge_one(c, i, n, to, &seen, st, e);
  if (to) {
    int crc = rs_corpus_close(to, rc ? &(rs_err){{0}} : e);
    if (!rc) rc = crc;
  }
  for (uint32_t i = 0; i < n; i++) rs_corpus_close(c[i], &(rs_err){{0}});
  if (!rc && rename(tmp, out)) rc = rs_errf(e, out, 0, "cannot rename %s into place", tmp);
  if (rc) unlink(tmp);
  free(seen.k);
  free(tmp);
  free(c);
  return rc;
}
