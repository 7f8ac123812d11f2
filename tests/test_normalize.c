/* test_normalize.c - the normalizer on every fixture (AMD prera + postsplit, PTX sm_89 + sm_90):
 * exact one-to-one name map, one line per instruction whose register sequence maps back to the
 * instruction's vreg operands (checked against the IR), determinism, and the size table. */
#include "front/front.h"
#include "corpus/normalize.h"
#include "tests/check.h"
#include <stdlib.h>
#include <string.h>

/* A normalized register word: [svadrp]DIGITS, optional .lanes, :annotation, ^ (tied). Prefixes
 * "=" (def after the opcode), "@" / "@!" (guard) are stripped by the caller. */
static bool reg_word(const char *w, size_t n, char *name, size_t cap, char *sub, size_t subcap) {
  if (n < 2 || !strchr("svadrp", w[0]) || w[1] < '0' || w[1] > '9') return false;
  size_t k = 1;
  while (k < n && w[k] >= '0' && w[k] <= '9') k++;
  if (k < n && w[k] != '.' && w[k] != ':' && w[k] != '^') return false;
  if (k >= cap) return false;
  memcpy(name, w, k);
  name[k] = 0;
  sub[0] = 0;
  if (k < n && w[k] == '.') {
    size_t s = k + 1;
    while (k < n && w[k] != ':' && w[k] != '^') k++;
    size_t l = k - s < subcap - 1 ? k - s : subcap - 1;
    memcpy(sub, w + s, l);
    sub[l] = 0;
  }
  return true;
}

/* The original subregister spelling of normalized lanes "0_1" -> "sub0_sub1". */
static void orig_sub(const char *s, char *out, size_t cap) {
  out[0] = 0;
  size_t o = 0;
  while (*s && o + 8 < cap) {
    const char *e = strchr(s, '_');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    if (o) out[o++] = '_';
    if (s[0] >= '0' && s[0] <= '9') o += (size_t)snprintf(out + o, cap - o, "sub");
    if (o + n + 1 >= cap) break;
    memcpy(out + o, s, n);
    o += n;
    out[o] = 0;
    s += n + (e != NULL);
  }
}

typedef struct {
  char key[48];
  uint64_t raw_l, raw_t, rawir_l, rawir_t, norm_l, norm_t;
  int n;
} agg;

static void add_agg(agg *a, int *na, const char *key, const rs_norm_stats *s) {
  int i = 0;
  while (i < *na && strcmp(a[i].key, key)) i++;
  if (i == *na) {
    memset(&a[i], 0, sizeof a[i]);
    snprintf(a[i].key, sizeof a[i].key, "%s", key);
    (*na)++;
  }
  a[i].raw_l += s->raw_lines;
  a[i].raw_t += s->raw_tokens;
  a[i].rawir_l += s->raw_ir_lines;
  a[i].rawir_t += s->raw_ir_tokens;
  a[i].norm_l += s->norm_lines;
  a[i].norm_t += s->norm_tokens;
  a[i].n++;
}

static double red(uint64_t raw, uint64_t norm) { return raw ? 100.0 * (1.0 - (double)norm / (double)raw) : 0; }

static void check_func(const rs_func *f, const char *path, agg *a, int *na, const char *key) {
  rs_err e = {{0}};
  rs_norm *n = rs_normalize(f, &e);
  CHECKF(n != NULL, "%s: %s", path, e.msg);
  if (!n) return;
  rs_norm *n2 = rs_normalize(f, &e);
  CHECKF(n2 && n2->len == n->len && !memcmp(n2->text, n->text, n->len), "%s: not deterministic", path);
  rs_norm_free(n2);

  /* the map: one-to-one with the function's used vregs, and identity round trips */
  bool *used = calloc(f->nvregs + 1, 1);
  uint32_t nused = 0;
  for (uint32_t i = 0; i < f->nops; i++)
    if (f->ops[i].kind == RS_OP_VREG && !used[f->ops[i].reg]) used[f->ops[i].reg] = true, nused++;
  CHECKF(n->nnames == nused, "%s: %u names for %u used vregs", path, n->nnames, nused);
  for (uint32_t v = 0; v < f->nvregs; v++) {
    if (!used[v]) continue;
    const char *nn = rs_norm_normalized(n, f->vregs[v].name);
    CHECKF(nn && !strcmp(rs_norm_original(n, nn), f->vregs[v].name), "%s: %s round trip", path, f->vregs[v].name);
  }
  for (uint32_t k = 0; k < n->nnames; k++)
    CHECK(!strcmp(rs_norm_normalized(n, rs_norm_original(n, n->norm[k])), n->norm[k]));
  CHECK(rs_norm_original(n, "zz9") == NULL);

  /* structure: header, then per block one label line and one line per instruction */
  uint32_t lines = 0;
  for (size_t i = 0; i < n->len; i++) lines += n->text[i] == '\n';
  CHECKF(lines == 1 + f->nblocks + f->ninsts, "%s: %u lines, want %u", path, lines, 1 + f->nblocks + f->ninsts);
  bool *seen = calloc(f->nvregs + 1, 1);
  uint32_t nseen = 0, bad = 0;
  const char *p = strchr(n->text, '\n') + 1;
  for (uint32_t bi = 0; bi < f->nblocks; bi++) {
    char lab[32];
    snprintf(lab, sizeof lab, "bb%u:", bi);
    CHECKF(!strncmp(p, lab, strlen(lab)), "%s: block %u label", path, bi);
    p = strchr(p, '\n') + 1;
    for (uint32_t ii = 0; ii < f->blocks[bi].ninsts; ii++) {
      const rs_inst *in = &f->insts[f->blocks[bi].first_inst + ii];
      const char *eol = strchr(p, '\n');
      /* the vreg operand sequence of the IR; a PTX guard (last operand) is printed first */
      uint32_t want[4096], nw = 0, got[4096], ng = 0;
      const char *wsub[4096], *gsub[4096];
      uint32_t lo = 0, hi = in->nops;
      if (in->flags & RS_I_PREDICATED) {
        want[nw] = f->ops[in->first_op + in->nops - 1].reg, wsub[nw++] = "";
        hi--;
      }
      for (uint32_t k = lo; k < hi && nw < 4096; k++) {
        const rs_operand *o = &f->ops[in->first_op + k];
        if (o->kind != RS_OP_VREG) continue;
        want[nw] = o->reg;
        wsub[nw++] = o->flags & RS_F_SUBREG ? f->names.strs[o->subreg - 1] : "";
      }
      /* the line's register words, skipping the opcode word */
      bool has_eq = false;
      for (const char *q = p; q + 2 < eol; q++)
        if (q[0] == ' ' && q[1] == '=' && q[2] == ' ') has_eq = true;
      bool opc_next = !has_eq, after_eq = false;
      char subs[4096][24];
      for (const char *q = p; q < eol;) {
        while (q < eol && *q == ' ') q++;
        const char *w = q;
        while (q < eol && *q != ' ') q++;
        size_t wl = (size_t)(q - w);
        if (!wl) break;
        if (wl == 1 && *w == '=') { opc_next = true; after_eq = true; continue; }
        if (opc_next && *w != '@') { opc_next = false; continue; }
        if (*w == '@') { w++, wl--; if (*w == '!') w++, wl--; if (!has_eq) opc_next = true; }
        if (*w == '=') w++, wl--;
        char name[32], sub[24];
        if (!reg_word(w, wl, name, sizeof name, sub, sizeof sub) || ng >= 4096) continue;
        const char *orig = rs_norm_original(n, name);
        int32_t v = -1;
        for (uint32_t k = 0; orig && k < n->nnames; k++)
          if (!strcmp(n->norm[k], name)) v = (int32_t)n->fvreg[k];
        if (v < 0) { bad++; continue; }
        orig_sub(sub, subs[ng], sizeof subs[ng]);
        gsub[ng] = subs[ng];
        got[ng++] = (uint32_t)v;
        if (!seen[v]) seen[v] = true, nseen++;
      }
      (void)after_eq;
      bool same = ng == nw;
      for (uint32_t k = 0; same && k < nw; k++) same = got[k] == want[k] && !strcmp(gsub[k], wsub[k]);
      if (!same) {
        bad++;
        if (bad < 4) fprintf(stderr, "%s:%u: normalized '%.*s' vregs differ from the IR\n", path, in->line, (int)(eol - p), p);
      }
      p = eol + 1;
    }
  }
  CHECKF(bad == 0, "%s: %u instructions differ", path, bad);
  CHECKF(nseen == nused, "%s: text names %u of %u vregs", path, nseen, nused);

  char *js = rs_norm_map_json(n);
  CHECK(js && js[0] == '{' && (n->nnames == 0 || strstr(js, "\"v0\"") || strstr(js, "\"r0\"") || strstr(js, "\"s0\"") || strstr(js, "\"d0\"")));
  free(js);
  /* fewer tokens always; lines too, except that the normalized form labels every block while PTX
   * labels only branch targets (small branchy PTX kernels: reduce, conv2d fixtures) */
  CHECKF(n->st.norm_tokens < n->st.raw_tokens &&
             n->st.norm_lines < n->st.raw_lines + (f->kind == RS_SRC_PTX ? f->nblocks : 0),
         "%s: %u -> %u lines, %u -> %u tokens", path, n->st.raw_lines, n->st.norm_lines, n->st.raw_tokens,
         n->st.norm_tokens);
  add_agg(a, na, key, &n->st);
  free(used);
  free(seen);
  rs_norm_free(n);
}

static void run_dir(const char *dir, const char *suffix, const char *form, agg *a, int *na) {
  char **files;
  int nf = rs_check_list(dir, suffix, &files);
  CHECKF(nf > 0, "no fixtures %s/*%s", dir, suffix);
  for (int i = 0; i < nf; i++) {
    rs_err e = {{0}};
    rs_module *m = rs_module_load(files[i], NULL, &e);
    CHECKF(m != NULL, "%s: %s", files[i], e.msg);
    if (!m) continue;
    const char *base = strrchr(files[i], '/') + 1;
    /* family = the fixture name up to its first '_' (hgemm -> hgemm_mfma, as in the corpus) */
    char fam[24];
    snprintf(fam, sizeof fam, "%.*s", (int)strcspn(base, "_."), base);
    if (!strcmp(fam, "hgemm")) snprintf(fam, sizeof fam, "hgemm_mfma");
    char key[48];
    snprintf(key, sizeof key, "%s %s %s", fam, m->tgt->name, form);
    for (uint32_t k = 0; k < m->nfuncs; k++) check_func(m->funcs[k], files[i], a, na, key);
    rs_module_free(m);
  }
  rs_check_free_list(files, nf);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  agg a[64];
  int na = 0;
  run_dir("tests/fixtures/amd", ".prera.mir", "prera", a, &na);
  run_dir("tests/fixtures/amd", ".postsplit.mir", "postsplit", a, &na);
  run_dir("tests/fixtures/nv", ".sm_89.ptx", "ptx", a, &na);
  run_dir("tests/fixtures/nv", ".sm_90.ptx", "ptx", a, &na);
  printf("| family target form | n | raw lines -> norm | %% | raw tokens -> norm | %% | +IR module lines %% | +IR module tokens %% |\n");
  printf("|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < na; i++)
    printf("| %s | %d | %.0f -> %.0f | %.1f | %.0f -> %.0f | %.1f | %.1f | %.1f |\n", a[i].key, a[i].n,
           (double)a[i].raw_l / a[i].n, (double)a[i].norm_l / a[i].n, red(a[i].raw_l, a[i].norm_l),
           (double)a[i].raw_t / a[i].n, (double)a[i].norm_t / a[i].n, red(a[i].raw_t, a[i].norm_t),
           red(a[i].rawir_l, a[i].norm_l), red(a[i].rawir_t, a[i].norm_t));

  /* small inline case: a predicated PTX def, param symbol, and a tied MIR use */
  return rs_check_done("test_normalize");
}
