/* test_launch.c - the launch recipes (corpus/kernels/NAME.launch, corpus/launch.h) on a CPU:
 *  1. For every NVIDIA family of corpus/recipes/grid.tsv, every point of its grid: the recipe
 *     evaluates, names the kernel the .cu defines, has one argument per parameter of its
 *     signature with that parameter's size (pointer 8, int 4, float 4, double 8, half 2, DTYPE as
 *     the variant's), a block and a grid of at least one block (blocks over
 *     1024 threads exist in the sgemm grid: ptxas compiles them, no GPU launches them; counted).
 *  2. Against ptxas's own record: the parameter sizes in the fixture cubins' .nv.info
 *     (EIATTR_KPARAM_INFO of sgemm_tiled, sm_89 and sm_90) equal the recipe's.
 *  3. Bad recipes: an unknown name, a type that is none, a zero grid are errors with file:line. */
#include "check.h"
#include "corpus/launch.h"
#include "cubin/lower.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *p) {
  rs_err e;
  size_t n;
  char *s = rs_read_file(p, &n, &e);
  CHECKF(s != NULL, "%s", e.msg);
  return s;
}

/* The kernel's parameter sizes from its `extern "C" __global__` signature; DTYPE by `dtype`. */
static int signature(const char *cu, char *kernel, size_t kn, unsigned *sizes, const char *dtype) {
  const char *g = strstr(cu, "__global__");
  const char *open = g ? strchr(g, '(') : NULL; /* __launch_bounds__( ... ) first */
  if (open && !strncmp(open - 17, "__launch_bounds__", 17)) open = strchr(strchr(open, ')'), '(');
  if (!open) return -1;
  const char *nb = open;
  while (nb > cu && (isalnum((unsigned char)nb[-1]) || nb[-1] == '_')) nb--;
  snprintf(kernel, kn, "%.*s", (int)(open - nb), nb);
  int n = 0;
  const char *close = strchr(open, ')');
  for (const char *p = open + 1; p < close && n < 16;) {
    const char *c = memchr(p, ',', (size_t)(close - p));
    if (!c) c = close;
    char par[160];
    snprintf(par, sizeof par, "%.*s", (int)(c - p), p);
    unsigned sz = 0;
    if (strchr(par, '*')) sz = 8;
    else if (strstr(par, "double")) sz = 8;
    else if (strstr(par, "half")) sz = 2;
    else if (strstr(par, "int") || strstr(par, "float")) sz = 4;
    else if (strstr(par, "DTYPE")) sz = !strcmp(dtype, "double") ? 8 : !strcmp(dtype, "half") ? 2 : 4;
    sizes[n++] = sz;
    p = c + 1;
  }
  return n;
}

typedef struct {
  char name[16];
  char vals[8][16];
  int nv;
} axis;

static void test_family(const char *src, const char *axes) {
  char cu[256], rp[256];
  snprintf(cu, sizeof cu, "corpus/kernels/%s", src);
  snprintf(rp, sizeof rp, "corpus/kernels/%.*s.launch", (int)(strlen(src) - 3), src);
  char *code = slurp(cu), *recipe = slurp(rp);
  if (!code || !recipe) {
    free(code);
    free(recipe);
    return;
  }
  axis ax[12];
  int na = 0;
  char *copy = rs_xstrndup(axes, strlen(axes));
  for (char *t = strtok(copy, " \t"); t && na < 12; t = strtok(NULL, " \t")) {
    char *eq = strchr(t, '=');
    if (!eq || !isupper((unsigned char)t[0])) continue; /* macros only (not opt, fastmath, arch) */
    *eq = 0;
    snprintf(ax[na].name, sizeof ax[na].name, "%s", t);
    ax[na].nv = 0;
    for (char *v = strtok_r(eq + 1, "|", &eq); v && ax[na].nv < 8; v = strtok_r(NULL, "|", &eq))
      snprintf(ax[na].vals[ax[na].nv++], 16, "%s", v);
    na++;
  }
  free(copy);
  int idx[12] = {0}, points = 0, bad = 0, unlaunchable = 0;
  for (;;) {
    char params[512] = "", dtype[16] = "";
    for (int k = 0; k < na; k++) {
      size_t l = strlen(params);
      snprintf(params + l, sizeof params - l, " -D%s=%s", ax[k].name, ax[k].vals[idx[k]]);
      if (!strcmp(ax[k].name, "DTYPE")) snprintf(dtype, sizeof dtype, "%s", ax[k].vals[idx[k]]);
    }
    if (!dtype[0]) { /* the .cu's default */
      const char *d = strstr(code, "#define DTYPE ");
      if (d) sscanf(d + 14, "%15s", dtype);
    }
    rs_launch_plan p;
    rs_err e = {{0}};
    unsigned sz[16];
    char kernel[96];
    int n = signature(code, kernel, sizeof kernel, sz, dtype);
    points++;
    if (rs_launch_plan_of(recipe, rp, params, &p, &e)) {
      if (!bad++) CHECKF(0, "%s%s: %s", rp, params, e.msg);
    } else {
      bool ok = n == (int)p.nargs && !strcmp(kernel, p.kernel);
      for (unsigned k = 0; ok && k < p.nargs; k++) ok = rs_launch_arg_size(&p.args[k]) == sz[k];
      uint64_t threads = (uint64_t)p.block[0] * p.block[1] * p.block[2];
      ok = ok && threads >= 1 && p.grid[0] && p.grid[1] && p.grid[2];
      unlaunchable += threads > 1024; /* ptxas ignores such launch bounds; no GPU runs the block */
      if (!ok && !bad++)
        CHECKF(0, "%s%s: kernel %s/%s, %u args for %d parameters, block %u", rp, params, p.kernel, kernel, p.nargs, n,
               (unsigned)threads);
    }
    int k = 0;
    while (k < na && ++idx[k] == ax[k].nv) idx[k++] = 0;
    if (k == na) break;
  }
  CHECKF(!bad, "%s: %d of %d grid points", rp, bad, points);
  if (unlaunchable) printf("%s: %d of %d grid points have blocks over 1024 threads (compiled, not launchable)\n", rp,
                           unlaunchable, points);
  CHECKF(points > 1 || na == 0, "%s: %d points", rp, points);
  free(code);
  free(recipe);
}

static void test_kparams(const char *cubin) {
  rs_cubin c;
  rs_err e = {{0}};
  CHECKF(!rs_cubin_load(cubin, &c, &e), "%s", e.msg);
  uint32_t sizes[32], n = 0;
  CHECKF(!rs_nvinfo_params(&c, "sgemm_tiled", sizes, 32, &n, &e), "%s", e.msg);
  char *recipe = slurp("corpus/kernels/sgemm_tiled.launch");
  rs_launch_plan p;
  CHECKF(recipe && !rs_launch_plan_of(recipe, "sgemm_tiled.launch", "-DTM=4 -DTN=4", &p, &e), "%s", e.msg);
  CHECKF(n == p.nargs && n == 8, "%s: %u parameters, recipe %u", cubin, n, p.nargs);
  for (uint32_t k = 0; k < n && k < p.nargs; k++)
    CHECKF(sizes[k] == rs_launch_arg_size(&p.args[k]), "%s: parameter %u is %u bytes, the recipe's %u", cubin, k,
           sizes[k], rs_launch_arg_size(&p.args[k]));
  free(recipe);
  rs_cubin_free(&c);
}

static void test_bad(void) {
  rs_launch_plan p;
  rs_err e = {{0}};
  CHECK(rs_launch_plan_of("kernel k\nbuffer in A N f32\ngrid 1 1 1\nblock 32 1 1\n", "r1", "", &p, &e) &&
        strstr(e.msg, "r1:2: unknown name 'N'"));
  CHECK(rs_launch_plan_of("kernel k\nscalar x DTYPE 1\ngrid 1 1 1\nblock 32 1 1\n", "r2", "-DDTYPE=bf16", &p, &e) &&
        strstr(e.msg, "r2:2:") && strstr(e.msg, "not a type"));
  CHECK(rs_launch_plan_of("kernel k\ndefault B 64\ngrid 32/B 1 1\nblock 32 1 1\n", "r3", "", &p, &e) &&
        strstr(e.msg, "r3:3: grid dimension 0 is 0"));
  CHECK(!rs_launch_plan_of("kernel k\ndefault B 64\nlet n (B+1)*2\nscalar n i32 n\ngrid n 1 1\nblock B 1 1\n", "r4",
                           "-DB=128", &p, &e) && p.grid[0] == 258 && p.block[0] == 128 && p.args[0].value == 258);
  /* one struct parameter by value (FlashAttention-2's Flash_fwd_params): fields into its bytes */
  CHECKF(!rs_launch_plan_of("kernel k\nlet S 128\nbuffer in q S*64 f16\nbuffer out o S*64 f16\nparams 432\n"
                            "field 0 ptr q\nfield 8 ptr o\nfield 16 i64 S*64\nfield 24 i32 S\nfield 28 f32 0.125\n"
                            "field 40 ptr null\nfield 48 u8 1\nsmem 49152+16384\ngrid S/128 1 1\nblock 128 1 1\n",
                            "r5", "", &p, &e),
         "%s", e.msg);
  CHECK(p.params_size == 432 && p.nfields == 7 && p.fields[0].buf == 0 && p.fields[1].buf == 1 &&
        p.fields[2].kind == RS_LF_I64 && p.fields[2].value == 8192 && p.fields[4].value == 0.125 && p.fields[5].buf == -1 &&
        p.smem == 65536 && p.nargs == 2);
  CHECK(rs_launch_plan_of("kernel k\nfield 0 i32 1\ngrid 1 1 1\nblock 32 1 1\n", "r6", "", &p, &e) &&
        strstr(e.msg, "r6:2: a field needs params first"));
  CHECK(rs_launch_plan_of("kernel k\nparams 16\nfield 0 ptr q\ngrid 1 1 1\nblock 32 1 1\n", "r7", "", &p, &e) &&
        strstr(e.msg, "no buffer 'q'"));
  CHECK(rs_launch_plan_of("kernel k\nparams 16\nfield 12 i64 1\ngrid 1 1 1\nblock 32 1 1\n", "r8", "", &p, &e) &&
        strstr(e.msg, "outside the 16 bytes or misaligned"));
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  char *grid = slurp("corpus/recipes/grid.tsv");
  int families = 0;
  char *gs = NULL;
  for (char *l = grid ? strtok_r(grid, "\n", &gs) : NULL; l; l = strtok_r(NULL, "\n", &gs)) {
    char fam[32], vendor[8], src[64], kind[32];
    int off = 0;
    if (l[0] == '#' || sscanf(l, "%31s %7s %63s %31s %n", fam, vendor, src, kind, &off) < 4 || strcmp(vendor, "nv"))
      continue;
    char *rest = rs_xstrndup(l + off, strlen(l + off));
    test_family(src, rest);
    free(rest);
    families++;
  }
  free(grid);
  CHECKF(families >= 7, "%d NVIDIA families", families);
  test_kparams("tests/fixtures/sass/sgemm_t4x4.sm_89.cubin");
  test_kparams("tests/fixtures/sass/sgemm_t4x4.sm_90.cubin");
  test_bad();
  return rs_check_done("test_launch");
}
