/* launch.c - evaluating a launch recipe (corpus/launch.h) for one variant's macros. */
#include "corpus/launch.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const rs_ltype_name[RS_LT__N] = {"f16", "f32", "f64", "i32"};
const unsigned rs_ltype_size[RS_LT__N] = {2, 4, 8, 4};

enum { MAXNAMES = 64 };

typedef struct {
  char name[32];
  char val[32]; /* as written: an integer or a type name */
} binding;

typedef struct {
  binding b[MAXNAMES];
  unsigned n;
  const char *file;
  unsigned line;
  rs_err *e;
  int err;
} env;

static binding *lookup(env *v, const char *s, size_t n) {
  for (unsigned i = v->n; i-- > 0;) /* later bindings (the variant's) win */
    if (strlen(v->b[i].name) == n && !memcmp(v->b[i].name, s, n)) return &v->b[i];
  return NULL;
}

static void bind(env *v, const char *name, size_t nn, const char *val, size_t vn) {
  if (v->n >= MAXNAMES || nn >= sizeof v->b[0].name || vn >= sizeof v->b[0].val) {
    if (!v->err) v->err = rs_errf(v->e, v->file, v->line, "too many or too long names");
    return;
  }
  binding *b = &v->b[v->n++];
  snprintf(b->name, sizeof b->name, "%.*s", (int)nn, name);
  snprintf(b->val, sizeof b->val, "%.*s", (int)vn, val);
}

/* ---- expressions: sum := term (('+'|'-') term)*, term := unary (('*'|'/'|'%') unary)* ---- */

static int64_t sum(env *v, const char **s);

static void ws(const char **s) {
  while (**s == ' ' || **s == '\t') (*s)++;
}

static int64_t unary(env *v, const char **s) {
  ws(s);
  if (**s == '-') {
    (*s)++;
    return -unary(v, s);
  }
  if (**s == '(') {
    (*s)++;
    int64_t x = sum(v, s);
    ws(s);
    if (**s != ')' && !v->err) v->err = rs_errf(v->e, v->file, v->line, "')' expected");
    else (*s)++;
    return x;
  }
  if (isdigit((unsigned char)**s)) return strtoll(*s, (char **)s, 0);
  const char *b = *s;
  while (isalnum((unsigned char)**s) || **s == '_') (*s)++;
  if (*s == b) {
    if (!v->err) v->err = rs_errf(v->e, v->file, v->line, "a number or a name expected at '%.10s'", b);
    return 0;
  }
  binding *x = lookup(v, b, (size_t)(*s - b));
  if (!x) {
    if (!v->err) v->err = rs_errf(v->e, v->file, v->line, "unknown name '%.*s'", (int)(*s - b), b);
    return 0;
  }
  const char *t = x->val;
  return unary(v, &t);
}

static int64_t term(env *v, const char **s) {
  int64_t x = unary(v, s);
  for (;;) {
    ws(s);
    char op = **s;
    if (op != '*' && op != '/' && op != '%') return x;
    (*s)++;
    int64_t y = unary(v, s);
    if (op == '*') x *= y;
    else if (!y) {
      if (!v->err) v->err = rs_errf(v->e, v->file, v->line, "division by zero");
      return 0;
    } else x = op == '/' ? x / y : x % y;
  }
}

static int64_t sum(env *v, const char **s) {
  int64_t x = term(v, s);
  for (;;) {
    ws(s);
    char op = **s;
    if (op != '+' && op != '-') return x;
    (*s)++;
    int64_t y = term(v, s);
    x = op == '+' ? x + y : x - y;
  }
}

static int64_t eval(env *v, const char *s) {
  int64_t x = sum(v, &s);
  ws(&s);
  if (*s && !v->err) v->err = rs_errf(v->e, v->file, v->line, "unexpected '%s' in an expression", s);
  return x;
}

static int type_of(env *v, const char *s) {
  for (int depth = 0; depth < 4; depth++) {
    for (int k = 0; k < RS_LT__N; k++)
      if (!strcmp(s, rs_ltype_name[k])) return k;
    if (!strcmp(s, "half")) return RS_LT_F16;
    if (!strcmp(s, "float")) return RS_LT_F32;
    if (!strcmp(s, "double")) return RS_LT_F64;
    if (!strcmp(s, "int")) return RS_LT_I32;
    binding *b = lookup(v, s, strlen(s));
    if (!b) break;
    s = b->val;
  }
  if (!v->err) v->err = rs_errf(v->e, v->file, v->line, "'%s' is not a type (f16 f32 f64 i32, half float double int)", s);
  return -1;
}

unsigned rs_launch_arg_size(const rs_launch_arg *a) { return a->buffer ? 8 : rs_ltype_size[a->type]; }

int rs_launch_plan_of(const char *text, const char *name, const char *params, rs_launch_plan *p, rs_err *e) {
  memset(p, 0, sizeof *p);
  env *v = rs_xcalloc(1, sizeof *v);
  v->file = name;
  v->e = e;
  /* the recipe's defaults first, then the variant's -D macros over them: two passes */
  char *copy = rs_xstrndup(text, strlen(text));
  for (char *l = strtok(copy, "\n"); l; l = strtok(NULL, "\n")) {
    char k[16], a[64], b[64];
    if (sscanf(l, "%15s %63s %63s", k, a, b) == 3 && !strcmp(k, "default")) bind(v, a, strlen(a), b, strlen(b));
  }
  free(copy);
  for (const char *q = params ? strstr(params, "-D") : NULL; q && !v->err; q = strstr(q + 2, "-D")) {
    const char *n0 = q + 2, *eq = n0;
    while (*eq && *eq != '=' && !isspace((unsigned char)*eq)) eq++;
    const char *v0 = *eq == '=' ? eq + 1 : eq, *v1 = v0;
    while (*v1 && !isspace((unsigned char)*v1)) v1++;
    bind(v, n0, (size_t)(eq - n0), *eq == '=' ? v0 : "1", *eq == '=' ? (size_t)(v1 - v0) : 1);
  }
  copy = rs_xstrndup(text, strlen(text));
  char *save = NULL;
  bool have_grid = false, have_block = false;
  v->line = 0;
  for (char *l = copy; l && !v->err; l = save) {
    char *nl = strchr(l, '\n');
    save = nl ? nl + 1 : NULL;
    if (nl) *nl = 0;
    v->line++;
    char *hash = strchr(l, '#');
    if (hash) *hash = 0;
    char w[6][96];
    memset(w, 0, sizeof w);
    int nw = sscanf(l, "%95s %95s %95s %95s %95s %95s", w[0], w[1], w[2], w[3], w[4], w[5]);
    if (nw <= 0) continue;
    if (!strcmp(w[0], "default")) continue;
    if (!strcmp(w[0], "kernel") && nw == 2) {
      snprintf(p->kernel, sizeof p->kernel, "%.95s", w[1]);
    } else if (!strcmp(w[0], "let") && nw >= 3) {
      const char *rest = l;
      while (isspace((unsigned char)*rest)) rest++;
      rest += 3; /* "let" */
      while (isspace((unsigned char)*rest)) rest++;
      rest += strlen(w[1]);
      char num[32];
      snprintf(num, sizeof num, "%lld", (long long)eval(v, rest));
      bind(v, w[1], strlen(w[1]), num, strlen(num));
    } else if ((!strcmp(w[0], "grid") || !strcmp(w[0], "block")) && nw == 4) {
      uint32_t *d = w[0][0] == 'g' ? p->grid : p->block;
      for (int k = 0; k < 3; k++) {
        int64_t x = eval(v, w[1 + k]);
        if (x <= 0 || x > 0x7fffffff) {
          if (!v->err) v->err = rs_errf(e, name, v->line, "%s dimension %d is %lld", w[0], k, (long long)x);
        }
        d[k] = (uint32_t)x;
      }
      *(w[0][0] == 'g' ? &have_grid : &have_block) = true;
    } else if ((!strcmp(w[0], "buffer") && nw == 5) || (!strcmp(w[0], "scalar") && nw == 4)) {
      if (p->nargs >= RS_LAUNCH_MAX_ARGS) {
        v->err = rs_errf(e, name, v->line, "more than %d arguments", RS_LAUNCH_MAX_ARGS);
        break;
      }
      rs_launch_arg *a = &p->args[p->nargs++];
      a->buffer = w[0][0] == 'b';
      if (a->buffer) {
        if (strcmp(w[1], "in") && strcmp(w[1], "out") && strcmp(w[1], "inout") && !v->err)
          v->err = rs_errf(e, name, v->line, "a buffer is in, out or inout, not '%s'", w[1]);
        a->out = strcmp(w[1], "in") != 0;
        snprintf(a->name, sizeof a->name, "%.31s", w[2]);
        int64_t c = eval(v, w[3]);
        if (c <= 0 && !v->err) v->err = rs_errf(e, name, v->line, "buffer %s has %lld elements", w[2], (long long)c);
        a->count = (uint64_t)c;
        a->type = (enum rs_ltype)type_of(v, w[4]);
      } else {
        snprintf(a->name, sizeof a->name, "%.31s", w[1]);
        a->type = (enum rs_ltype)type_of(v, w[2]);
        char *end;
        a->value = strtod(w[3], &end);
        if (*end) a->value = (double)eval(v, w[3]);
      }
    } else if (!strcmp(w[0], "params") && nw == 2) {
      int64_t n = eval(v, w[1]);
      if ((n <= 0 || n > 4096) && !v->err) v->err = rs_errf(e, name, v->line, "params of %lld bytes", (long long)n);
      p->params_size = (uint32_t)n;
    } else if (!strcmp(w[0], "smem") && nw == 2) {
      int64_t n = eval(v, w[1]);
      if ((n < 0 || n > 256 * 1024) && !v->err) v->err = rs_errf(e, name, v->line, "smem of %lld bytes", (long long)n);
      p->smem = (uint32_t)n;
    } else if (!strcmp(w[0], "field") && nw == 4) {
      static const char *const kinds[] = {"ptr", "i32", "i64", "f32", "u8"};
      static const unsigned sizes[] = {8, 4, 8, 4, 1};
      int k = -1;
      for (int q = 0; q < 5; q++)
        if (!strcmp(w[2], kinds[q])) k = q;
      if (k < 0 || p->nfields >= RS_LAUNCH_MAX_FIELDS || !p->params_size) {
        if (!v->err)
          v->err = rs_errf(e, name, v->line, "a field needs params first, one of ptr i32 i64 f32 u8, at most %d",
                           RS_LAUNCH_MAX_FIELDS);
        break;
      }
      rs_launch_field *fl = &p->fields[p->nfields++];
      int64_t off = eval(v, w[1]);
      if ((off < 0 || (uint64_t)off + sizes[k] > p->params_size || off % sizes[k]) && !v->err)
        v->err = rs_errf(e, name, v->line, "field at %lld: outside the %u bytes or misaligned", (long long)off,
                         p->params_size);
      fl->off = (uint32_t)off;
      fl->kind = (enum rs_lfield)k;
      fl->buf = -1;
      if (k == RS_LF_PTR) {
        for (unsigned q = 0; q < p->nargs; q++)
          if (p->args[q].buffer && !strcmp(p->args[q].name, w[3])) fl->buf = (int)q;
        if (fl->buf < 0 && strcmp(w[3], "null") && !v->err)
          v->err = rs_errf(e, name, v->line, "field at %lld: no buffer '%s' (declare it first)", (long long)off, w[3]);
      } else if (k == RS_LF_F32) {
        char *end;
        fl->value = strtod(w[3], &end);
        if (*end) fl->value = (double)eval(v, w[3]);
      } else {
        fl->value = (double)eval(v, w[3]);
      }
    } else {
      v->err = rs_errf(e, name, v->line,
                       "cannot read '%s' (kernel, default, let, buffer, scalar, grid, block, params, field, smem)", w[0]);
    }
  }
  free(copy);
  int rc = v->err;
  if (!rc && (!p->kernel[0] || !have_grid || !have_block))
    rc = rs_errf(e, name, 0, "a recipe needs kernel, grid and block lines");
  free(v);
  return rc;
}
