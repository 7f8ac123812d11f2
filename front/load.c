/* load.c - the loader above the front ends: picks one by file kind (extension, else content) and
 * hands it the text. It lives above mir/, ptx/ and sass/ so that ir/ depends on none of them. */
#include "front/front.h"
#include <stdlib.h>
#include <string.h>

static bool ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && !strcmp(s + a - b, suf);
}

rs_module *rs_module_load(const char *path, const char *target_override, rs_err *e) {
  size_t len;
  char *text = rs_read_file(path, &len, e);
  if (!text) return NULL;
  enum rs_srckind kind;
  if (ends_with(path, ".ptx"))
    kind = RS_SRC_PTX;
  else if (ends_with(path, ".sass"))
    kind = RS_SRC_SASS;
  else if (ends_with(path, ".mir"))
    kind = RS_SRC_MIR;
  else if (strstr(text, "\n---") || !strncmp(text, "---", 3))
    kind = RS_SRC_MIR;
  else if (strstr(text, ".entry") || strstr(text, ".version"))
    kind = RS_SRC_PTX;
  else if (strstr(text, ".headerflags") || strstr(text, "/*0000*/"))
    kind = RS_SRC_SASS;
  else {
    free(text);
    rs_errf(e, path, 0, "neither LLVM MIR (.mir), PTX (.ptx) nor an nvdisasm listing (.sass)");
    return NULL;
  }
  return rs_module_parse(path, text, len, kind, target_override, e);
}

rs_module *rs_module_parse(const char *path, char *text, size_t len, enum rs_srckind kind,
                           const char *target_override, rs_err *e) {
  rs_module *m = rs_xcalloc(1, sizeof *m);
  m->path = rs_xstrndup(path, strlen(path));
  m->text = text;
  m->len = len;
  m->kind = kind;
  if (target_override) {
    m->tgt = rs_target_by_name(target_override);
    if (!m->tgt) {
      rs_errf(e, path, 0, "unknown target '%s' (known: gfx90a, sm_75, sm_80, sm_86, sm_87, sm_89, sm_90)",
              target_override);
      rs_module_free(m);
      return NULL;
    }
  }
  if (memchr(text, 0, len)) {
    rs_errf(e, path, rs_line_of(text, strlen(text)), "NUL byte in input");
    rs_module_free(m);
    return NULL;
  }
  int rc = kind == RS_SRC_MIR ? rs_mir_parse(m, e) : kind == RS_SRC_PTX ? rs_ptx_parse(m, e) : rs_sass_parse(m, e);
  if (rc == 0 && m->nfuncs == 0 && m->nrefused == 0) rc = rs_errf(e, path, 0, "no function found");
  if (rc) {
    rs_module_free(m);
    return NULL;
  }
  return m;
}
