/* launch.h - per-family launch recipes (corpus/kernels/FAMILY.launch): how to run a corpus
 * kernel on a GPU for one grid point. The recipe names the kernel, the default of every macro it
 * uses, integer `let`s, the arguments in order (buffers with an element count and type, filled
 * with seeded random values; scalars) and the grid and block; expressions (+ - * / % and
 * parentheses over integers, macros and lets) are evaluated with the variant's -D macros.
 * tools/sass_run.c runs a plan; tests/test_launch.c checks every recipe against the kernel's
 * signature and the cubin's parameter sizes (.nv.info EIATTR_KPARAM_INFO). */
#ifndef RS_LAUNCH_H
#define RS_LAUNCH_H
#include "util/util.h"

enum rs_ltype { RS_LT_F16, RS_LT_F32, RS_LT_F64, RS_LT_I32, RS_LT__N };
extern const char *const rs_ltype_name[RS_LT__N]; /* "f16" ... */
extern const unsigned rs_ltype_size[RS_LT__N];

enum { RS_LAUNCH_MAX_ARGS = 16 };

typedef struct {
  char name[32];
  bool buffer;          /* else a scalar */
  bool out;             /* buffer: the kernel writes it (every buffer is compared anyway) */
  enum rs_ltype type;
  uint64_t count;       /* buffer: elements */
  double value;         /* scalar */
} rs_launch_arg;

/* A kernel whose one parameter is a struct passed by value (FlashAttention-2's Flash_fwd_params):
 * `params SIZE` makes the buffers memory only, and `field OFFSET ptr BUF | i32 EXPR | i64 EXPR |
 * f32 VALUE | u8 EXPR` fill the SIZE bytes (zero elsewhere). `smem EXPR`: dynamic shared memory. */
enum rs_lfield { RS_LF_PTR, RS_LF_I32, RS_LF_I64, RS_LF_F32, RS_LF_U8 };
enum { RS_LAUNCH_MAX_FIELDS = 64 };
typedef struct {
  uint32_t off;
  enum rs_lfield kind;
  int buf;          /* RS_LF_PTR: the buffer's index in args */
  double value;
} rs_launch_field;

typedef struct {
  char kernel[96];
  rs_launch_arg args[RS_LAUNCH_MAX_ARGS];
  unsigned nargs;
  uint32_t grid[3], block[3];
  uint32_t params_size;   /* 0: args are the kernel's parameters */
  rs_launch_field fields[RS_LAUNCH_MAX_FIELDS];
  unsigned nfields;
  uint32_t smem;          /* dynamic shared memory, bytes */
} rs_launch_plan;

/* Evaluate recipe `text` (its file name in messages) for a variant's -D macros ("-DBM=64
 * -DDTYPE=double -use_fast_math"). Errors name file:line: an unknown macro or name, a type that
 * is not one of f16 f32 f64 i32 (or a macro naming half/float/double/int), division by zero, a
 * grid or block of 0, too many arguments. */
int rs_launch_plan_of(const char *text, const char *name, const char *params, rs_launch_plan *p, rs_err *e);
/* Bytes of an argument as the kernel receives it (buffers: a pointer, 8). */
unsigned rs_launch_arg_size(const rs_launch_arg *a);

#endif
