/* disasm.h - cubin -> complete SASS listing: run nvdisasm (rewriting a CUDA 13 header for
 * 11.8), find address holes, fill the instructions 11.8 drops on sm_90 from their encoding,
 * and write the hidden `.E` descriptor as `desc[URx]` (see docs/sass.md). */
#ifndef RS_DISASM_H
#define RS_DISASM_H
#include "cubin/cubin.h"

typedef struct {
  char path[1024];
  unsigned major, minor; /* from `nvdisasm --version` ("release 11.8") */
} rs_nvdisasm;

/* Find nvdisasm: `explicit_path` when given, else PATH, else /opt/nvidia-cuda-11.8/usr/bin. */
int rs_nvdisasm_open(const char *explicit_path, rs_nvdisasm *nd, rs_err *e);
/* Run `nvdisasm ARGS... CUBIN` (args NULL-terminated); its stdout in *out. A non-zero exit or
 * any text on stderr is an error naming `name`, with nvdisasm's first message line. */
/* The file nvdisasm nd should read for cubin c (held in memory, read from path, or NULL): path
 * itself, or a temporary copy written to tmp (a "/tmp/...XXXXXX" template) when there is no path
 * or nvdisasm < 12.8 needs the CUDA 13 header rewritten (c is left as read). Returns the file to
 * feed, NULL on error; the caller unlinks tmp when *made is set. */
const char *rs_nvdisasm_feed(const rs_nvdisasm *nd, const rs_cubin *c, const char *path, char *tmp, bool *made,
                             rs_err *e);
int rs_nvdisasm_run(const rs_nvdisasm *nd, const char *cubin_path, const char *name, const char *const *args,
                    char **out, rs_err *e);

typedef struct {
  uint32_t funcs, insts;   /* functions and instructions of the completed listing */
  uint32_t holes;          /* addresses of .text the listing did not print */
  uint32_t filled;         /* ... decoded from the encoding (the rest rejects the listing) */
  uint32_t descs;          /* desc[URx] written from the encoding */
  uint32_t descs_listed;   /* desc[...] printed by nvdisasm itself (CUDA 12+) */
  uint32_t padding;        /* trailing NOPs not listed (outside the function symbol: -plr tables) */
  uint32_t branches;       /* branch targets decoded (each checked against the listing's label) */
  uint32_t labels;         /* labels nvdisasm dropped with their instruction, restored */
} rs_sass_stats;

/* Complete `listing` (nvdisasm -c [-hex] [-plr] output for cubin c): instructions of every
 * function consecutive by 16 bytes up to its .text size, holes filled, descriptors written.
 * Branch targets are decoded too: a label nvdisasm dropped with its instruction is restored, and
 * every printed label must sit where its branches go. Errors (as "name:line: function F address
 * 0xA: reason"): a hole that cannot be decoded, a label next to a hole that no decoded branch
 * places, a label where its branches do not go, addresses out of order or past the section, a
 * .E access whose descriptor field is unknown. -plr/-hex columns are kept on printed lines;
 * filled lines carry none. */
int rs_sass_complete(const rs_cubin *c, const char *listing, const char *name, char **out, rs_sass_stats *st,
                     rs_err *e);
/* A listing alone: its first address hole inside a function (without the cubin the end is
 * unknown). 0 = none; -1 with e = "name:line: address hole ...". */
int rs_sass_check_listing(const char *listing, const char *name, rs_err *e);

/* The whole pipeline: load the cubin, rewrite its header for nvdisasm < 12.8 (into a temporary
 * file), run nvdisasm with `args` (e.g. {"-c", NULL}), complete the listing. */
int rs_sass_disasm(const rs_nvdisasm *nd, const char *cubin_path, const char *const *args, char **out,
                   rs_sass_stats *st, rs_err *e);
/* The same for a cubin already read (c, as read from cubin_path; NULL when it is held in memory
 * only: then written to a temporary file, as a header nvdisasm < 12.8 cannot read is). */
int rs_sass_disasm_loaded(const rs_nvdisasm *nd, const rs_cubin *c, const char *cubin_path, const char *name,
                          const char *const *args, char **out, rs_sass_stats *st, rs_err *e);

/* fill.c: per-opcode encoding tables. */
/* Text of an instruction 11.8 does not print ("VIADD R30, R0.reuse, 0x100"), or -1 with the
 * reason in buf. Only encodings whose every field is known are decoded. */
int rs_sass_fill(unsigned sm, const uint64_t w[2], char *buf, size_t n);
/* The descriptor UR of a `.E` global/generic access whose opcode (without modifiers) is `base`
 * (LDG LD STG ST REDG ATOMG, sm_80+); -1 when it is such an access but its encoding has no
 * descriptor field we know, -2 when it is no such access (or sm_75, which has none). */
int rs_sass_desc_ur(unsigned sm, const char *base, const uint64_t w[2]);

#endif
