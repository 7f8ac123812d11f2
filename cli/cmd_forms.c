/* cmd_forms.c - `regsweep corpus forms FILE.cubin|FILE.sass ...`: opcode coverage as a number.
 *
 * Every instruction of every listing (a cubin is disassembled and completed first, as `corpus
 * disasm` does; a corpus .h5 gives its form-sass instances) is looked up in sass/optable.c; the forms seen are listed with their count and
 * the table row each matched, or why none did. A gap is found here before a user's kernel is
 * refused: the parser itself still refuses an unknown form with its name. */
#include "cli/cli.h"
#include "cubin/disasm.h"
#include "sass/sass.h"
#include "storage/corpus.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_form(const void *a, const void *b) {
  const rs_sass_form_seen *x = a, *y = b;
  int c = strcmp(x->form, y->form);
  return c ? c : (int)x->nops - (int)y->nops;
}

/* One listing's forms into the totals. Takes text. */
static int scan_text(const char *name, char *text, rs_sass_seen *fs, rs_err *e) {
  rs_module *m = rs_xcalloc(1, sizeof *m);
  m->path = rs_xstrndup(name, strlen(name));
  m->text = text;
  m->len = strlen(text);
  m->kind = RS_SRC_SASS;
  rs_sass_opts o = {0};
  o.forms = fs;
  o.mask = rs_sass_test_mask(); /* the test facility: rows taken as unknown */
  int rc = rs_sass_parse_opts(m, &o, e);
  rs_module_free(m);
  return rc;
}

/* Every form-sass instance of a corpus; refused ones are printed and counted in *refused. */
static int scan_corpus(const char *path, rs_sass_seen *fs, uint32_t *listings, uint32_t *refused, rs_err *e) {
  rs_corpus *c = rs_corpus_open(path, e);
  if (!c) return -1;
  uint64_t n = rs_corpus_count(c);
  int rc = 0;
  for (uint64_t i = 0; i < n && !rc; i++) {
    rs_instance in;
    if ((rc = rs_corpus_get(c, i, &in, 1, e))) break;
    if (!strcmp(in.form, "sass") && in.raw) {
      rs_err ie = {{0}};
      (*listings)++;
      if (scan_text(in.id, rs_xstrndup(in.raw, strlen(in.raw)), fs, &ie)) {
        printf("refused %s\n", ie.msg);
        (*refused)++;
      }
    }
    rs_instance_clear(&in);
  }
  rs_err ce = {{0}};
  rs_corpus_close(c, &ce);
  return rc;
}

/* Add one file's forms to the totals; on failure the reason in e. */
static int scan(const char *path, const rs_nvdisasm *nd, bool have_nd, rs_sass_seen *fs, rs_err *e) {
  size_t pl = strlen(path);
  char *text = NULL;
  if (pl > 6 && !strcmp(path + pl - 6, ".cubin")) {
    if (!have_nd) return rs_errf(e, path, 0, "a cubin needs nvdisasm (--nvdisasm PATH)");
    const char *args[] = {"-c", NULL};
    rs_sass_stats st;
    if (rs_sass_disasm(nd, path, args, &text, &st, e)) return -1;
  } else if (!(text = rs_read_file(path, NULL, e))) {
    return -1;
  }
  return scan_text(path, text, fs, e);
}

int rs_cmd_corpus_forms(int argc, char **argv) {
  const char *nvd = NULL;
  bool unused = false, inferred = false;
  int nfiles = 0;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--nvdisasm") && i + 1 < argc) nvd = argv[++i];
    else if (!strcmp(argv[i], "--unused")) unused = true;
    else if (!strcmp(argv[i], "--inferred")) inferred = true;
    else if (argv[i][0] == '-') {
      fprintf(stderr, "regsweep corpus forms: unexpected argument '%s'\n", argv[i]);
      return 2;
    } else nfiles++;
  }
  if (!nfiles) {
    fprintf(stderr, "regsweep corpus forms: which cubins or listings? (regsweep corpus --help)\n");
    return 2;
  }
  rs_nvdisasm nd;
  rs_err e = {{0}};
  bool have_nd = rs_nvdisasm_open(nvd, &nd, &e) == 0;
  rs_sass_seen fs = {0};
  rs_sass_infer inf = {0};
  inf.mask = rs_sass_test_mask();
  uint32_t refused = 0, files = 0;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--nvdisasm")) {
      i++;
      continue;
    }
    if (argv[i][0] == '-') continue;
    rs_err fe = {{0}};
    size_t al = strlen(argv[i]);
    if (al > 3 && !strcmp(argv[i] + al - 3, ".h5")) {
      if (scan_corpus(argv[i], &fs, &files, &refused, &fe)) {
        fprintf(stderr, "regsweep corpus forms: %s\n", fe.msg);
        rs_sass_seen_free(&fs);
        return 2;
      }
      continue;
    }
    files++;
    if (scan(argv[i], &nd, have_nd, &fs, &fe)) {
      printf("refused %s\n", fe.msg);
      refused++;
    }
    if (inferred && !(al > 6 && !strcmp(argv[i] + al - 6, ".cubin"))) { /* a listing with its -plr columns */
      char *text = rs_read_file(argv[i], NULL, &fe);
      if (text && strstr(text, "// | ") && strstr(text, "# 0")) rs_sass_infer_listing(text, false, &inf);
      else printf("inferred: %s: no -plr columns in the listing\n", argv[i]);
      free(text);
    }
    if (inferred && al > 6 && !strcmp(argv[i] + al - 6, ".cubin")) { /* its -plr listing */
      static const char *const plr[] = {"-c", "-plr", "-lrm", "narrow", NULL};
      char *text = NULL;
      rs_sass_stats st;
      rs_err pe = {{0}};
      if (!have_nd || rs_sass_disasm(&nd, argv[i], plr, &text, &st, &pe))
        printf("inferred: %s: no -plr listing: %s\n", argv[i], have_nd ? pe.msg : "no nvdisasm");
      else
        rs_sass_infer_listing(text, false, &inf);
      free(text);
    }
  }
  /* rows for the unknown forms, from nvdisasm's life ranges: to review, never used to read */
  for (uint32_t i = 0; inferred && i < inf.n; i++) {
    const rs_sass_inferred *r = &inf.v[i];
    if (r->why)
      printf("not inferred %s/%u (%u instances): %s\n", r->form, r->nops, r->instances, r->why);
    else {
      char z[96] = "";
      for (uint32_t o = 0, k = 0; o < r->nops && o < 32; o++)
        if (r->zero_only >> o & 1)
          k += (size_t)snprintf(z + k, sizeof z - k > k ? sizeof z - k : 0, "%s%u", k ? "," : "; never a register: operand ", o);
      printf("    {\"%s\", \"\", \"%s\", 0}, /* inferred from nvdisasm -plr: %u instances%s */\n", r->form, r->ops,
             r->instances, z);
    }
  }
  rs_sass_infer_free(&inf);
  qsort(fs.v, fs.n, sizeof *fs.v, by_form);
  uint32_t known = 0;
  uint64_t insts = 0, insts_unknown = 0;
  printf("%-44s %4s %9s  %s\n", "form", "ops", "count", "table row");
  for (uint32_t i = 0; i < fs.n; i++) {
    const rs_sass_form_seen *f = &fs.v[i];
    insts += f->count;
    if (f->row) known++;
    else insts_unknown += f->count;
    printf("%-44s %4u %9llu  %s\n", f->form, f->nops, (unsigned long long)f->count, f->row ? f->row : f->why);
  }
  uint32_t rows_seen = 0;
  for (size_t r = 0; r < rs_sass_noptable; r++) {
    bool seen = false;
    for (uint32_t i = 0; i < fs.n && !seen; i++) seen = fs.v[i].row == rs_sass_optable[r].form;
    rows_seen += seen;
    if (!seen && unused) printf("unused row %s\n", rs_sass_optable[r].form);
  }
  printf("forms: %u listings (%u refused before the table: disassembly or operands), %llu instructions; %u forms seen, "
         "%u known, %u unknown (%llu instructions); table rows matched %u of %zu\n",
         files, refused, (unsigned long long)insts, fs.n, known, fs.n - known, (unsigned long long)insts_unknown,
         rows_seen, rs_sass_noptable);
  /* what reading them does: each function with an unknown form is refused alone */
  printf("functions: %u, %u refused by an unknown form%s", fs.funcs, fs.funcs_unknown, fs.funcs_unknown ? ":" : "");
  for (uint32_t i = 0; i < fs.n; i++)
    if (!fs.v[i].row) printf(" %s/%u %u", fs.v[i].form, fs.v[i].nops, fs.v[i].funcs);
  printf("\n");
  uint32_t unknown = fs.n - known;
  rs_sass_seen_free(&fs);
  return refused || unknown ? 1 : 0;
}
