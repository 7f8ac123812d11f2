/* front.h - the front ends (mir/, ptx/, sass/) and the loader above them that picks one. Each
 * front end fills an rs_module (ir/ir.h) from its text; nothing below this header calls them. */
#ifndef RS_FRONT_H
#define RS_FRONT_H
#include "ir/ir.h"

/* Parse a file (kind from its extension/content; target from --target or the file). */
rs_module *rs_module_load(const char *path, const char *target_override, rs_err *e);
/* Parse text already in memory; takes ownership of text (malloc'd, NUL-terminated). */
rs_module *rs_module_parse(const char *path, char *text, size_t len, enum rs_srckind kind,
                           const char *target_override, rs_err *e);

int rs_mir_parse(rs_module *m, rs_err *e);  /* mir/mir_parse.c */
int rs_ptx_parse(rs_module *m, rs_err *e);  /* ptx/ptx_parse.c */
int rs_sass_parse(rs_module *m, rs_err *e); /* sass/sass_parse.c (options: sass/sass.h) */

#endif
