/* sass_run.c - run an original and a rewritten cubin on the same inputs and compare every output
 * byte (the last step of seed 004's free mode: the patched kernel must compute the same thing).
 *
 *   sass_run --recipe R.launch [--params "-DBM=64 ..."] ORIG.cubin NEW.cubin [--rounds N] [--seed S]
 *   sass_run --corpus C.h5 --instance ID NEW.cubin [--rounds N] [--seed S]
 *            (the original cubin, the variant's macros and the family's recipe from the corpus row)
 *
 * The CUDA driver is opened at run time (dlopen libcuda.so.1), so the tool builds wherever cuda.h
 * exists and, without a driver or a GPU, reports itself SKIPPED with exit status 77 (ctest's
 * SKIP_RETURN_CODE), never a pass. A cubin for another architecture than the GPU's, or a block
 * over the device's limit, is not runnable there: also 77, with the reason.
 * Every buffer of the recipe gets the same seeded random contents for both cubins; after one
 * launch each, every buffer is copied back and compared byte for byte. Then N timed launches each
 * (cuEvent), alternating. The driver's own register count (CU_FUNC_ATTRIBUTE_NUM_REGS) of both is
 * printed: the count the rewrite wrote is the one the driver allocates.
 * Exit: 0 identical, 1 outputs differ, 2 bad input or a CUDA error, 77 skipped. */
#include "corpus/grid.h"
#include "corpus/launch.h"
#include "storage/corpus.h"
#include <cuda.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

typedef struct {
  void *lib;
  __typeof__(cuInit) *Init;
  __typeof__(cuDeviceGetCount) *DeviceGetCount;
  __typeof__(cuDeviceGet) *DeviceGet;
  __typeof__(cuDeviceGetAttribute) *DeviceGetAttribute;
  __typeof__(cuDevicePrimaryCtxRetain) *PrimaryCtxRetain; /* stable across CUDA 11-13 (cuCtxCreate is not) */
  __typeof__(cuDevicePrimaryCtxRelease) *PrimaryCtxRelease;
  __typeof__(cuCtxSetCurrent) *CtxSetCurrent;
  __typeof__(cuModuleLoadData) *ModuleLoadData;
  __typeof__(cuModuleUnload) *ModuleUnload;
  __typeof__(cuModuleGetFunction) *ModuleGetFunction;
  __typeof__(cuFuncGetAttribute) *FuncGetAttribute;
  __typeof__(cuFuncSetAttribute) *FuncSetAttribute;
  __typeof__(cuMemAlloc) *MemAlloc;
  __typeof__(cuMemFree) *MemFree;
  __typeof__(cuMemcpyHtoD) *MemcpyHtoD;
  __typeof__(cuMemcpyDtoH) *MemcpyDtoH;
  __typeof__(cuLaunchKernel) *LaunchKernel;
  __typeof__(cuCtxSynchronize) *CtxSynchronize;
  __typeof__(cuEventCreate) *EventCreate;
  __typeof__(cuEventRecord) *EventRecord;
  __typeof__(cuEventSynchronize) *EventSynchronize;
  __typeof__(cuEventElapsedTime) *EventElapsedTime;
  __typeof__(cuEventDestroy) *EventDestroy;
  __typeof__(cuGetErrorString) *GetErrorString;
} drv;

/* The driver's entry points by their exported names (cuda.h maps several to _v2). */
static int open_driver(drv *d, char *why, size_t n) {
  memset(d, 0, sizeof *d);
  d->lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!d->lib) {
    snprintf(why, n, "no CUDA driver (libcuda.so.1: %s)", dlerror());
    return -1;
  }
#define L(f, name)                                                                                                 \
  if (!(*(void **)&d->f = dlsym(d->lib, name))) {                                                                  \
    snprintf(why, n, "the CUDA driver has no %s", name);                                                          \
    return -1;                                                                                                     \
  }
  L(Init, "cuInit") L(DeviceGetCount, "cuDeviceGetCount") L(DeviceGet, "cuDeviceGet")
  L(DeviceGetAttribute, "cuDeviceGetAttribute") L(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
  L(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2") L(CtxSetCurrent, "cuCtxSetCurrent")
  L(ModuleLoadData, "cuModuleLoadData") L(ModuleUnload, "cuModuleUnload") L(ModuleGetFunction, "cuModuleGetFunction")
  L(FuncGetAttribute, "cuFuncGetAttribute") L(FuncSetAttribute, "cuFuncSetAttribute") L(MemAlloc, "cuMemAlloc_v2") L(MemFree, "cuMemFree_v2")
  L(MemcpyHtoD, "cuMemcpyHtoD_v2") L(MemcpyDtoH, "cuMemcpyDtoH_v2") L(LaunchKernel, "cuLaunchKernel")
  L(CtxSynchronize, "cuCtxSynchronize") L(EventCreate, "cuEventCreate") L(EventRecord, "cuEventRecord")
  L(EventSynchronize, "cuEventSynchronize") L(EventElapsedTime, "cuEventElapsedTime")
  L(EventDestroy, "cuEventDestroy_v2") L(GetErrorString, "cuGetErrorString")
#undef L
  return 0;
}

static const char *cuerr(const drv *d, CUresult r) {
  const char *s = NULL;
  if (d->GetErrorString) d->GetErrorString(r, &s);
  return s ? s : "unknown CUDA error";
}

/* Seeded contents: floats uniform in [-1, 1), ints in [0, 1024). */
static void fill(uint8_t *p, const rs_launch_arg *a, uint64_t *s) {
  for (uint64_t i = 0; i < a->count; i++) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    double u = (double)(*s >> 11) / 9007199254740992.0 * 2 - 1;
    switch (a->type) {
    case RS_LT_F32: {
      float f = (float)u;
      memcpy(p + 4 * i, &f, 4);
    } break;
    case RS_LT_F64: memcpy(p + 8 * i, &u, 8); break;
    case RS_LT_I32: {
      int32_t v = (int32_t)(*s >> 54);
      memcpy(p + 4 * i, &v, 4);
    } break;
    case RS_LT_F16: { /* IEEE half of u, by hand (no CUDA headers for host halves here) */
      float f = (float)u;
      uint32_t x;
      memcpy(&x, &f, 4);
      uint32_t sign = x >> 16 & 0x8000, ex = x >> 23 & 0xff, man = x & 0x7fffff;
      uint16_t h = (uint16_t)sign;
      if (ex > 112) h |= (uint16_t)((ex - 112) << 10 | man >> 13);
      memcpy(p + 2 * i, &h, 2);
    } break;
    default: break;
    }
  }
}

typedef struct {
  CUmodule mod;
  CUfunction fn;
  CUdeviceptr buf[RS_LAUNCH_MAX_ARGS];
  int regs;
} loaded;

static CUresult load(const drv *d, const uint8_t *cubin, const rs_launch_plan *p, uint8_t **host, loaded *l) {
  memset(l, 0, sizeof *l);
  CUresult r = d->ModuleLoadData(&l->mod, cubin);
  if (!r) r = d->ModuleGetFunction(&l->fn, l->mod, p->kernel);
  if (!r) r = d->FuncGetAttribute(&l->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, l->fn);
  if (!r && p->smem > 48 * 1024) /* past the default: the kernel must ask (FlashAttention-2 does) */
    r = d->FuncSetAttribute(l->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)p->smem);
  for (unsigned k = 0; !r && k < p->nargs; k++) {
    if (!p->args[k].buffer) continue;
    size_t bytes = p->args[k].count * rs_ltype_size[p->args[k].type];
    r = d->MemAlloc(&l->buf[k], bytes);
    if (!r) r = d->MemcpyHtoD(l->buf[k], host[k], bytes);
  }
  return r;
}

static CUresult launch(const drv *d, const rs_launch_plan *p, loaded *l) {
  void *params[RS_LAUNCH_MAX_ARGS];
  union {
    int32_t i;
    float f;
    double g;
    uint16_t h;
  } sc[RS_LAUNCH_MAX_ARGS];
  if (p->params_size) { /* one struct by value: buffers' device addresses and scalars at their offsets */
    uint8_t blob[4096] = {0};
    for (unsigned k = 0; k < p->nfields; k++) {
      const rs_launch_field *fl = &p->fields[k];
      uint8_t *at = blob + fl->off;
      if (fl->kind == RS_LF_PTR) {
        uint64_t a = fl->buf >= 0 ? (uint64_t)l->buf[fl->buf] : 0;
        memcpy(at, &a, 8);
      } else if (fl->kind == RS_LF_I32) {
        int32_t x = (int32_t)fl->value;
        memcpy(at, &x, 4);
      } else if (fl->kind == RS_LF_I64) {
        int64_t x = (int64_t)fl->value;
        memcpy(at, &x, 8);
      } else if (fl->kind == RS_LF_F32) {
        float x = (float)fl->value;
        memcpy(at, &x, 4);
      } else {
        *at = (uint8_t)fl->value;
      }
    }
    void *one[1] = {blob};
    return d->LaunchKernel(l->fn, p->grid[0], p->grid[1], p->grid[2], p->block[0], p->block[1], p->block[2], p->smem,
                           NULL, one, NULL);
  }
  for (unsigned k = 0; k < p->nargs; k++) {
    const rs_launch_arg *a = &p->args[k];
    if (a->buffer) {
      params[k] = &l->buf[k];
      continue;
    }
    if (a->type == RS_LT_I32) sc[k].i = (int32_t)a->value;
    else if (a->type == RS_LT_F32) sc[k].f = (float)a->value;
    else if (a->type == RS_LT_F64) sc[k].g = a->value;
    else sc[k].h = 0x3c00; /* a half scalar: 1.0 (no recipe uses another) */
    params[k] = &sc[k];
  }
  return d->LaunchKernel(l->fn, p->grid[0], p->grid[1], p->grid[2], p->block[0], p->block[1], p->block[2], 0, NULL,
                         params, NULL);
}

static void unload(const drv *d, const rs_launch_plan *p, loaded *l) {
  for (unsigned k = 0; k < p->nargs; k++)
    if (l->buf[k]) d->MemFree(l->buf[k]);
  if (l->mod) d->ModuleUnload(l->mod);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  const char *recipe_path = NULL, *params = "", *corpus = NULL, *instance = NULL, *cub[2] = {0, 0};
  unsigned rounds = 5, ncub = 0;
  uint64_t seed = 1;
  for (int i = 1; i < argc; i++) {
    bool v = i + 1 < argc;
    if (!strcmp(argv[i], "--recipe") && v) recipe_path = argv[++i];
    else if (!strcmp(argv[i], "--params") && v) params = argv[++i];
    else if (!strcmp(argv[i], "--corpus") && v) corpus = argv[++i];
    else if (!strcmp(argv[i], "--instance") && v) instance = argv[++i];
    else if (!strcmp(argv[i], "--rounds") && v) rounds = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && v) seed = strtoull(argv[++i], NULL, 0);
    else if (argv[i][0] != '-' && ncub < 2) cub[ncub++] = argv[i];
    else {
      fprintf(stderr, "usage: sass_run --recipe R.launch [--params P] ORIG.cubin NEW.cubin | --corpus C --instance ID "
                      "NEW.cubin [--rounds N] [--seed S]\n");
      return 2;
    }
  }
  if (rounds < 1) rounds = 1;
  rs_err e = {{0}};
  size_t len[2] = {0, 0};
  uint8_t *bytes[2] = {NULL, NULL};
  char *recipe = NULL, rpath[300] = "", pbuf[300] = "";
  int status = 2;
  if (corpus && instance && ncub == 1) { /* the original, the macros and the recipe from the row */
    rs_corpus *c = rs_corpus_open(corpus, &e);
    int64_t row = c ? rs_corpus_find(c, instance, &e) : -1;
    rs_instance in;
    memset(&in, 0, sizeof in);
    if (row < 0 && c && !e.msg[0]) rs_errf(&e, corpus, 0, "no instance %s", instance);
    if (row >= 0 && !rs_corpus_get(c, (uint64_t)row, &in, 1, &e)) {
      if (!in.cubin) rs_errf(&e, instance, 0, "no cubin stored for this instance (a corpus from before /text/cubin)");
      bytes[0] = in.cubin, len[0] = in.cubin_len, in.cubin = NULL;
      snprintf(pbuf, sizeof pbuf, "%s", in.params);
      rs_variant *vs = NULL;
      uint32_t nv = 0;
      if (!rs_grid_load("corpus/recipes/grid.tsv", &vs, &nv, &e))
        for (uint32_t k = 0; k < nv && !rpath[0]; k++)
          if (!strcmp(vs[k].family, in.family) && !strcmp(vs[k].vendor, "nv"))
            snprintf(rpath, sizeof rpath, "corpus/kernels/%.*s.launch", (int)strlen(vs[k].source) - 3, vs[k].source);
      free(vs);
      rs_instance_clear(&in);
    }
    if (c) rs_corpus_close(c, NULL);
    recipe_path = rpath[0] ? rpath : NULL;
    params = pbuf;
    cub[1] = cub[0];
    cub[0] = NULL;
  } else if (!recipe_path || ncub != 2) {
    fprintf(stderr, "sass_run: give --recipe and two cubins, or --corpus, --instance and one cubin\n");
    return 2;
  }
  for (int k = 0; k < 2 && !e.msg[0]; k++)
    if (cub[k] && !(bytes[k] = (uint8_t *)rs_read_file(cub[k], &len[k], &e))) break;
  if (!e.msg[0] && !recipe_path) rs_errf(&e, instance, 0, "no launch recipe for its family");
  size_t rlen;
  if (!e.msg[0]) recipe = rs_read_file(recipe_path, &rlen, &e);
  rs_launch_plan p;
  if (!e.msg[0] && recipe) rs_launch_plan_of(recipe, recipe_path, params, &p, &e);
  if (e.msg[0]) {
    fprintf(stderr, "sass_run: %s\n", e.msg);
    goto out;
  }
  drv d;
  char why[300] = "";
  CUdevice dev;
  CUcontext ctx = NULL;
  int count = 0, major = 0, minor = 0, maxthreads = 0;
  CUresult ir = CUDA_SUCCESS;
  if (open_driver(&d, why, sizeof why) || (ir = d.Init(0)) || d.DeviceGetCount(&count) || !count) {
    printf("sass_run: SKIPPED: %s%s\n", ir ? "cuInit: " : "", ir ? cuerr(&d, ir) : why[0] ? why : "no CUDA device");
    status = SKIP;
    goto out;
  }
  d.DeviceGet(&dev, 0);
  d.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  d.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  d.DeviceGetAttribute(&maxthreads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev);
  if ((uint64_t)p.block[0] * p.block[1] * p.block[2] > (uint64_t)maxthreads) {
    printf("sass_run: SKIPPED: %s: a block of %u threads (the device allows %d)\n", p.kernel,
           p.block[0] * p.block[1] * p.block[2], maxthreads);
    status = SKIP;
    goto out;
  }
  CUresult r = d.PrimaryCtxRetain(&ctx, dev);
  if (!r) r = d.CtxSetCurrent(ctx);
  uint8_t *host[RS_LAUNCH_MAX_ARGS] = {0}, *back[2][RS_LAUNCH_MAX_ARGS] = {{0}};
  uint64_t s = seed * 0x9e3779b97f4a7c15ull | 1;
  for (unsigned k = 0; k < p.nargs; k++)
    if (p.args[k].buffer) {
      size_t b = p.args[k].count * rs_ltype_size[p.args[k].type];
      host[k] = rs_xmalloc(b);
      fill(host[k], &p.args[k], &s);
      back[0][k] = rs_xmalloc(b);
      back[1][k] = rs_xmalloc(b);
    }
  loaded l[2];
  memset(l, 0, sizeof l);
  for (int k = 0; k < 2 && !r; k++) {
    r = load(&d, bytes[k], &p, host, &l[k]);
    if (r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_SOURCE) {
      printf("sass_run: SKIPPED: %s: the cubin is not for this GPU (sm_%d%d): %s\n", p.kernel, major, minor,
             cuerr(&d, r));
      status = SKIP;
      break;
    }
    if (!r) r = launch(&d, &p, &l[k]);
    if (!r) r = d.CtxSynchronize();
    for (unsigned a = 0; !r && a < p.nargs; a++)
      if (p.args[a].buffer) r = d.MemcpyDtoH(back[k][a], l[k].buf[a], p.args[a].count * rs_ltype_size[p.args[a].type]);
  }
  if (r && status != SKIP) fprintf(stderr, "sass_run: %s: CUDA: %s\n", p.kernel, cuerr(&d, r));
  if (!r) {
    uint64_t total = 0, differ = 0;
    char first[200] = "";
    for (unsigned a = 0; a < p.nargs; a++) {
      if (!p.args[a].buffer) continue;
      size_t b = p.args[a].count * rs_ltype_size[p.args[a].type];
      total += b;
      for (size_t i = 0; i < b; i++)
        if (back[0][a][i] != back[1][a][i] && !differ++)
          snprintf(first, sizeof first, "buffer %s byte %zu: 0x%02x vs 0x%02x", p.args[a].name, i, back[0][a][i],
                   back[1][a][i]);
    }
    double *ms[2] = {rs_xcalloc(rounds, sizeof(double)), rs_xcalloc(rounds, sizeof(double))};
    CUevent e0, e1;
    d.EventCreate(&e0, 0);
    d.EventCreate(&e1, 0);
    for (unsigned i = 0; i < rounds && !r; i++)
      for (int k = 0; k < 2 && !r; k++) { /* alternating, so drift hits both */
        float t = 0;
        d.EventRecord(e0, NULL);
        r = launch(&d, &p, &l[k]);
        d.EventRecord(e1, NULL);
        d.EventSynchronize(e1);
        d.EventElapsedTime(&t, e0, e1);
        ms[k][i] = t;
      }
    d.EventDestroy(e0);
    d.EventDestroy(e1);
    qsort(ms[0], rounds, sizeof(double), cmp_double);
    qsort(ms[1], rounds, sizeof(double), cmp_double);
    printf("sass_run: %s (sm_%d%d): grid %u,%u,%u block %u,%u,%u; registers (driver) %d -> %d; %llu output bytes, "
           "%s%s%s; median %.3f ms -> %.3f ms (%u rounds)\n",
           p.kernel, major, minor, p.grid[0], p.grid[1], p.grid[2], p.block[0], p.block[1], p.block[2], l[0].regs,
           l[1].regs, (unsigned long long)total, differ ? "DIFFER: " : "identical", differ ? first : "",
           differ ? "" : "", ms[0][rounds / 2], ms[1][rounds / 2], rounds);
    status = r ? 2 : differ ? 1 : 0;
    free(ms[0]);
    free(ms[1]);
  }
  for (int k = 0; k < 2; k++) unload(&d, &p, &l[k]);
  for (unsigned k = 0; k < p.nargs; k++) free(host[k]), free(back[0][k]), free(back[1][k]);
  if (ctx) d.PrimaryCtxRelease(dev);
out:
  free(recipe);
  free(bytes[0]);
  free(bytes[1]);
  return status;
}
