/* test_mir_parse.c - parser accounting on every AMD fixture: the number of instructions and of
 * operands the parser produced equals an independent line-level count made here with simpler
 * rules (one instruction per body line; operands = top-level comma-separated items on both
 * sides of " = ", memory operands and debug annotations excluded). */
#include "front/front.h"
#include "check.h"
#include "ir/ir.h"
#include <stdlib.h>
#include <string.h>

static int count_items(const char *s, const char *e) {
  int depth = 0, n = 0;
  bool any = false;
  for (const char *c = s; c < e; c++) {
    if (*c == '(' || *c == '[' || *c == '{' || *c == '<') depth++;
    else if (*c == ')' || *c == ']' || *c == '}' || *c == '>') depth--;
    else if (*c == ',' && depth == 0) n++;
    if (*c != ' ') any = true;
  }
  return any ? n + 1 : 0;
}

static void independent_count(const char *text, long *insts, long *ops) {
  *insts = *ops = 0;
  const char *body = NULL;
  for (const char *c = text; c && *c;) {
    const char *nl = strchr(c, '\n');
    const char *end = nl ? nl : c + strlen(c);
    if (!strncmp(c, "body:", 5)) body = c;
    else if (body && c[0] != ' ' && end > c) body = NULL;
    else if (body && end - c > 4 && !strncmp(c, "    ", 4)) {
      const char *s = c + 4;
      if (strncmp(s, "successors:", 11) && strncmp(s, "liveins:", 8) && *s != ';') {
        char line[65536];
        size_t n = (size_t)(end - s) < sizeof line - 1 ? (size_t)(end - s) : sizeof line - 1;
        memcpy(line, s, n);
        line[n] = 0;
        char *mem = strstr(line, " :: ");
        if (mem) *mem = 0;
        char *dbg = strstr(line, ", debug-location");
        if (dbg) *dbg = 0;
        (*insts)++;
        char *eq = strstr(line, " = ");
        const char *rhs = line;
        if (eq) {
          *ops += count_items(line, eq);
          rhs = eq + 3;
        }
        /* skip instruction flags and the opcode */
        static const char *const flags[] = {"nofpexcept ", "nsw ", "nuw ", "exact ", "contract ", "afn ",
                                            "reassoc ", "nnan ", "ninf ", "nsz ", "arcp ", "frame-setup ",
                                            "frame-destroy "};
        for (bool again = true; again;) {
          again = false;
          for (size_t k = 0; k < sizeof flags / sizeof *flags; k++)
            if (!strncmp(rhs, flags[k], strlen(flags[k]))) rhs += strlen(flags[k]), again = true;
        }
        const char *sp = strchr(rhs, ' ');
        if (sp) *ops += count_items(sp + 1, rhs + strlen(rhs));
      }
    }
    c = nl ? nl + 1 : NULL;
  }
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  char **files;
  int n = rs_check_list("tests/fixtures/amd", ".mir", &files);
  CHECKF(n >= 30, "expected the AMD fixtures (3 stages each), found %d", n);
  long tot_i = 0, tot_o = 0;
  for (int i = 0; i < n; i++) {
    rs_err e = {{0}};
    rs_module *m = rs_module_load(files[i], NULL, &e);
    CHECKF(m != NULL, "%s", e.msg);
    if (!m) continue;
    long pi = 0, po = 0, ci, co;
    for (uint32_t k = 0; k < m->nfuncs; k++) {
      pi += m->funcs[k]->ninsts;
      po += m->funcs[k]->nops;
      CHECKF(m->funcs[k]->nblocks > 0, "%s: no blocks", files[i]);
    }
    independent_count(m->text, &ci, &co);
    CHECKF(pi == ci, "%s: parser %ld instructions, line count %ld", files[i], pi, ci);
    CHECKF(po == co, "%s: parser %ld operands, line count %ld", files[i], po, co);
    /* the final stage is fully allocated, the earlier ones are not */
    bool final = strstr(files[i], ".final.mir") != NULL;
    CHECKF(m->funcs[0]->allocated == final, "%s: allocated=%d", files[i], m->funcs[0]->allocated);
    tot_i += pi;
    tot_o += po;
    rs_module_free(m);
  }
  printf("parsed %d MIR files: %ld instructions, %ld operands\n", n, tot_i, tot_o);
  rs_check_free_list(files, n);
  return rs_check_done("test_mir_parse");
}
