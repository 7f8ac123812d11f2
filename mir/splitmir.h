/* splitmir.h - the split instance of a pre-RA function (mir/splitmir.c, docs/real-suite.md). */
#ifndef RS_SPLITMIR_H
#define RS_SPLITMIR_H
#include "mir/align.h"

/* The MIR text of `pre` with the copies greedy inserted (in `ps`, aligned by `lo`) between the pieces
 * of the values `split` marks (per vreg of pre), each such value's operands renamed to its pieces.
 * Returns the text (malloc'd, *len bytes) and in *seg the pieces (per vreg of ps, malloc'd); NULL
 * with the reason in w when greedy did more than split those values with copies (spill code,
 * rematerialization, a split in the SGPR round, ...). */
char *rs_mir_split_instance(const rs_func *pre, const rs_func *ps, const rs_loose *lo, const uint8_t *split,
                            uint8_t **seg, size_t *len, char *w, size_t nw);

#endif
