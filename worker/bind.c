/* bind.c - pin a worker rank with hwloc next to its GPU (the visible-devices variable, by local
 * rank) or to its own cores, and record what was done (bind.h). */
#include "worker/bind.h"
#include <ctype.h>
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VENDOR_NVIDIA 0x10de
#define VENDOR_AMD 0x1002
#define MAX_GPUS 64    /* per node; more than any real node has */
#define MAX_ENTRIES 64 /* entries of a visible-devices list */

int rs_bind_mode_parse(const char *s, rs_bind_mode *out) {
  static const struct { const char *name; rs_bind_mode m; } modes[] = {
      {"none", RS_BIND_NONE}, {"core", RS_BIND_CORE}, {"gpu", RS_BIND_GPU}};
  for (size_t i = 0; s && i < sizeof modes / sizeof *modes; i++)
    if (!strcmp(s, modes[i].name)) {
      *out = modes[i].m;
      return 0;
    }
  return -1;
}

const char *rs_bind_mode_name(rs_bind_mode m) {
  return m == RS_BIND_GPU ? "gpu" : m == RS_BIND_CORE ? "core" : "none";
}

/* ---- GPUs as hwloc sees them ---- */

static int is_gpu_pci(hwloc_obj_t o, unsigned vendor) {
  if (!o || o->type != HWLOC_OBJ_PCI_DEVICE) return 0;
  unsigned v = o->attr->pcidev.vendor_id, base = o->attr->pcidev.class_id >> 8;
  if (vendor ? v != vendor : v != VENDOR_NVIDIA && v != VENDOR_AMD) return 0;
  /* 0x03 display (VGA, 3D controller: every NVIDIA datacenter part); AMD Instinct parts may
   * instead report 0x12 processing accelerator. */
  return base == 0x03 || (v == VENDOR_AMD && base == 0x12);
}

static int osdev_name_is_gpu(const char *n) {
  static const char *prefixes[] = {"cuda", "nvml", "rsmi", "opencl"};
  for (size_t i = 0; n && i < sizeof prefixes / sizeof *prefixes; i++) {
    size_t l = strlen(prefixes[i]);
    if (!strncmp(n, prefixes[i], l) && isdigit((unsigned char)n[l])) return 1;
  }
  return 0;
}

static int pci_cmp(const void *a, const void *b) {
  const struct hwloc_pcidev_attr_s *x = &(*(hwloc_obj_t const *)a)->attr->pcidev;
  const struct hwloc_pcidev_attr_s *y = &(*(hwloc_obj_t const *)b)->attr->pcidev;
  unsigned long kx = ((unsigned long)x->domain << 24) | ((unsigned long)x->bus << 16) | (x->dev << 8) | x->func;
  unsigned long ky = ((unsigned long)y->domain << 24) | ((unsigned long)y->bus << 16) | (y->dev << 8) | y->func;
  return kx < ky ? -1 : kx > ky;
}

static void add_gpu(hwloc_obj_t *gpus, unsigned *n, hwloc_obj_t pci) {
  for (unsigned i = 0; i < *n; i++)
    if (gpus[i] == pci) return;
  if (*n < MAX_GPUS) gpus[(*n)++] = pci;
}

/* GPUs of `vendor` (0 = NVIDIA or AMD) in PCI bus order: the order of nvidia-smi, of CUDA with
 * CUDA_DEVICE_ORDER=PCI_BUS_ID (and in practice on homogeneous nodes) and of ROCm indices. */
static unsigned find_gpus(hwloc_topology_t topo, unsigned vendor, hwloc_obj_t *gpus) {
  unsigned n = 0;
  hwloc_obj_t o = NULL;
  while ((o = hwloc_get_next_pcidev(topo, o)))
    if (is_gpu_pci(o, vendor)) add_gpu(gpus, &n, o);
  /* OS devices catch a GPU whose PCI class is unusual; the PCI device is what carries locality. */
  o = NULL;
  while ((o = hwloc_get_next_osdev(topo, o))) {
    hwloc_obj_osdev_type_t t = o->attr->osdev.type;
    if ((t != HWLOC_OBJ_OSDEV_GPU && t != HWLOC_OBJ_OSDEV_COPROC) || !osdev_name_is_gpu(o->name)) continue;
    hwloc_obj_t p = o->parent;
    if (p && p->type == HWLOC_OBJ_PCI_DEVICE) {
      unsigned v = p->attr->pcidev.vendor_id;
      if (vendor ? v == vendor : v == VENDOR_NVIDIA || v == VENDOR_AMD) add_gpu(gpus, &n, p);
    }
  }
  qsort(gpus, n, sizeof *gpus, pci_cmp);
  return n;
}

/* The PCI device of a GPU named by UUID, if an OS device (nvml, rsmi) carries that UUID. */
static hwloc_obj_t find_gpu_by_uuid(hwloc_topology_t topo, const char *uuid) {
  const char *want = !strncmp(uuid, "GPU-", 4) ? uuid + 4 : uuid;
  hwloc_obj_t o = NULL;
  while ((o = hwloc_get_next_osdev(topo, o))) {
    const char *u = hwloc_obj_get_info_by_name(o, "NVIDIAUUID");
    if (!u) u = hwloc_obj_get_info_by_name(o, "AMDUUID");
    if (!u) continue;
    const char *have = !strncmp(u, "GPU-", 4) ? u + 4 : u;
    if (!strcmp(have, want) && o->parent && o->parent->type == HWLOC_OBJ_PCI_DEVICE) return o->parent;
  }
  return NULL;
}

/* ---- the visible-devices list ---- */

typedef struct {
  const char *var;  /* the variable that set the list; NULL = none set, every GPU is visible */
  const char *kind; /* "cuda" or "rocm" */
  unsigned vendor;
  int n;
  char tok[MAX_ENTRIES][64];
} rs_visible;

static int is_index(const char *t) {
  if (!*t) return 0;
  for (; *t; t++)
    if (!isdigit((unsigned char)*t)) return 0;
  return 1;
}

static int is_uuid(const char *t) {
  return !strncmp(t, "GPU-", 4) || !strncmp(t, "MIG-", 4) || strlen(t) >= 16;
}

/* Comma-separated entries, like the runtimes read them: the list ends at the first entry that is
 * neither an index nor a UUID ("", "-1", "NoDevFiles" all mean no device). */
static int split_list(const char *s, char tok[][64]) {
  int n = 0;
  while (*s && n < MAX_ENTRIES) {
    size_t l = strcspn(s, ",");
    const char *b = s, *end = s + l;
    while (b < end && isspace((unsigned char)*b)) b++;
    while (end > b && isspace((unsigned char)end[-1])) end--;
    if ((size_t)(end - b) >= sizeof tok[0]) break;
    memcpy(tok[n], b, (size_t)(end - b));
    tok[n][end - b] = 0;
    if (!is_index(tok[n]) && !is_uuid(tok[n])) break;
    n++;
    s += l;
    if (*s == ',') s++;
  }
  return n;
}

static void read_visible(rs_visible *v) {
  memset(v, 0, sizeof *v);
  const char *cuda = getenv("CUDA_VISIBLE_DEVICES");
  const char *rocr = getenv("ROCR_VISIBLE_DEVICES"), *hip = getenv("HIP_VISIBLE_DEVICES");
  if (cuda) {
    v->var = "CUDA_VISIBLE_DEVICES", v->kind = "cuda", v->vendor = VENDOR_NVIDIA;
    v->n = split_list(cuda, v->tok);
  } else if (rocr || hip) {
    v->kind = "rocm", v->vendor = VENDOR_AMD;
    v->var = rocr ? "ROCR_VISIBLE_DEVICES" : "HIP_VISIBLE_DEVICES";
    v->n = split_list(rocr ? rocr : hip, v->tok);
    if (rocr && hip) {
      /* HIP indices count within the devices ROCR left visible. */
      char h[MAX_ENTRIES][64];
      int nh = split_list(hip, h), n = 0;
      for (int i = 0; i < nh; i++) {
        if (!is_index(h[i])) break;
        int k = atoi(h[i]);
        if (k >= v->n) break;
        memcpy(h[n++], v->tok[k], sizeof h[0]);
      }
      memcpy(v->tok, h, sizeof h);
      v->n = n;
      v->var = "ROCR_VISIBLE_DEVICES+HIP_VISIBLE_DEVICES";
    }
  }
}

/* ---- binding ---- */

/* Cores for one of `nshare` ranks (this one at `pos`) within `avail`: an even contiguous slice, or
 * one core when there are fewer cores than ranks. Returns 1 when oversubscribed. */
static int slice_cores(hwloc_topology_t topo, hwloc_const_cpuset_t avail, unsigned pos, unsigned nshare,
                       hwloc_bitmap_t set) {
  unsigned ncores = (unsigned)hwloc_get_nbobjs_inside_cpuset_by_type(topo, avail, HWLOC_OBJ_CORE);
  if (nshare <= 1 || ncores == 0) {
    hwloc_bitmap_copy(set, avail);
    return 0;
  }
  hwloc_bitmap_zero(set);
  unsigned lo = pos % ncores, hi = lo + 1;
  if (ncores >= nshare) lo = pos * ncores / nshare, hi = (pos + 1) * ncores / nshare;
  for (unsigned i = lo; i < hi; i++)
    hwloc_bitmap_or(set, set, hwloc_get_obj_inside_cpuset_by_type(topo, avail, HWLOC_OBJ_CORE, i)->cpuset);
  return ncores < nshare;
}

/* Core mode: core (local_rank mod ncores) of the whole (allowed) machine. */
static int core_set(hwloc_topology_t topo, const rs_binding *b, hwloc_bitmap_t set, char *what, size_t cap,
                    rs_err *e) {
  int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  if (ncores <= 0) return rs_errf(e, "bind", 0, "hwloc found no cores");
  int i = b->local_rank % ncores;
  hwloc_bitmap_copy(set, hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)i)->cpuset);
  snprintf(what, cap, "core %d of %d%s", i, ncores,
           b->local_size > ncores ? " (oversubscribed: more local ranks than cores)" : "");
  return 0;
}

/* GPU mode. Returns 1 when bound near the GPU, 0 when it fell back to core mode (note says why). */
static int gpu_set(hwloc_topology_t topo, rs_binding *b, hwloc_bitmap_t set, rs_err *e) {
  rs_visible v;
  read_visible(&v);
  hwloc_obj_t gpus[MAX_GPUS], pci = NULL;
  unsigned ngpus = find_gpus(topo, v.vendor, gpus);
  unsigned nlist = v.var ? (unsigned)v.n : ngpus, idx = 0;
  char why[160] = "";
  if (nlist == 0) {
    if (v.var)
      snprintf(why, sizeof why, "no GPU visible (%s lists none)", v.var);
    else
      snprintf(why, sizeof why, "no GPU visible (no *_VISIBLE_DEVICES set and hwloc found no GPU)");
  } else {
    idx = (unsigned)b->local_rank % nlist;
    if (!v.var) {
      pci = gpus[idx];
      /* Index among the GPUs of its own vendor, as that vendor's runtime counts. */
      unsigned k = 0;
      for (unsigned i = 0; i < idx; i++) k += gpus[i]->attr->pcidev.vendor_id == pci->attr->pcidev.vendor_id;
      snprintf(b->gpu, sizeof b->gpu, "%s:%u", pci->attr->pcidev.vendor_id == VENDOR_NVIDIA ? "cuda" : "rocm", k);
    } else if (is_index(v.tok[idx])) {
      unsigned long k = strtoul(v.tok[idx], NULL, 10);
      if (k < ngpus) {
        pci = gpus[k];
        snprintf(b->gpu, sizeof b->gpu, "%s:%.48s", v.kind, v.tok[idx]);
      } else {
        snprintf(why, sizeof why, "no GPU visible (%s entry %s, but hwloc found %u %s GPU%s)", v.var, v.tok[idx],
                 ngpus, v.vendor == VENDOR_NVIDIA ? "NVIDIA" : "AMD", ngpus == 1 ? "" : "s");
      }
    } else {
      pci = find_gpu_by_uuid(topo, v.tok[idx]);
      snprintf(b->gpu, sizeof b->gpu, "%s:%.56s", v.kind, v.tok[idx]);
      if (!pci) snprintf(why, sizeof why, "GPU %.64s given by UUID has no PCI locality in hwloc", v.tok[idx]);
    }
  }
  hwloc_obj_t anc = pci ? hwloc_get_non_io_ancestor_obj(topo, pci) : NULL;
  if (pci && (!anc || !anc->cpuset || hwloc_bitmap_iszero(anc->cpuset))) {
    snprintf(why, sizeof why, "GPU %s has no usable local cores", b->gpu);
    pci = NULL;
  }
  if (pci) {
    struct hwloc_pcidev_attr_s *a = &pci->attr->pcidev;
    size_t l = strlen(b->gpu);
    snprintf(b->gpu + l, sizeof b->gpu - l, " (pci %04x:%02x:%02x.%01x)", (unsigned)a->domain, a->bus, a->dev, a->func);
    /* Local ranks sharing this GPU split its cores; one rank per GPU takes them all. */
    unsigned nshare = (unsigned)(b->local_size - 1 - (int)idx) / nlist + 1;
    int over = slice_cores(topo, anc->cpuset, (unsigned)b->local_rank / nlist, nshare, set);
    snprintf(b->note, sizeof b->note, "bound near GPU %s%s%s", b->gpu,
             nshare > 1 ? (over ? ": oversubscribed, fewer local cores than ranks sharing it"
                                : ": its local cores split among the ranks sharing it")
                        : ": all its local cores",
             v.var ? "" : " (no *_VISIBLE_DEVICES set: GPU chosen by local rank)");
    return 1;
  }
  char what[96];
  if (core_set(topo, b, set, what, sizeof what, e)) return -1;
  snprintf(b->note, sizeof b->note, "%.150s: bound to distinct cores instead, %.60s", why, what);
  return 0;
}

int rs_bind_apply(rs_bind_mode mode, int local_rank, int local_size, rs_binding *out, rs_err *e) {
  memset(out, 0, sizeof *out);
  out->requested = out->applied = mode;
  out->local_rank = local_rank, out->local_size = local_size;
  if (mode != RS_BIND_NONE && mode != RS_BIND_CORE && mode != RS_BIND_GPU)
    return rs_errf(e, "bind", 0, "unknown bind mode %d", (int)mode);
  if (local_size < 1 || local_rank < 0 || local_rank >= local_size)
    return rs_errf(e, "bind", 0, "local rank %d of %d is out of range", local_rank, local_size);
  /* The ABI changes between hwloc major versions; a mismatch would misread every object. */
  if ((hwloc_get_api_version() >> 16) != (HWLOC_API_VERSION >> 16))
    return rs_errf(e, "bind", 0, "hwloc library version %#x does not match headers %#x", hwloc_get_api_version(),
                   (unsigned)HWLOC_API_VERSION);

  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo)) return rs_errf(e, "bind", 0, "hwloc_topology_init failed");
  /* PCI discovery costs time; only gpu mode needs it. */
  if (mode == RS_BIND_GPU) hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  char *list = NULL;
  int rc = -1;
  if (!set) {
    rs_errf(e, "bind", 0, "out of memory");
    goto done;
  }
  if (hwloc_topology_load(topo)) {
    rs_errf(e, "bind", 0, "hwloc could not load the topology: %s", strerror(errno));
    goto done;
  }
  if (mode == RS_BIND_GPU) {
    int g = gpu_set(topo, out, set, e);
    if (g < 0) goto done;
    if (g == 0) out->applied = RS_BIND_CORE;
  } else if (mode == RS_BIND_CORE) {
    char what[96];
    if (core_set(topo, out, set, what, sizeof what, e)) goto done;
    snprintf(out->note, sizeof out->note, "bound to %s", what);
  } else {
    snprintf(out->note, sizeof out->note, "not bound: the binding inherited from the launcher");
  }
  if (out->applied != RS_BIND_NONE && hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_PROCESS)) {
    char *want = NULL;
    hwloc_bitmap_list_asprintf(&want, set);
    rs_errf(e, "bind", 0, "binding to cpus %s failed: %s", want ? want : "?", strerror(errno));
    free(want);
    goto done;
  }
  /* Record what the OS reports, not what was asked: a cgroup or the launcher may narrow it. */
  if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) || hwloc_bitmap_list_asprintf(&list, set) < 0) {
    rs_errf(e, "bind", 0, "cannot read back the binding: %s", strerror(errno));
    goto done;
  }
  if (strlen(list) >= sizeof out->cpuset)
    snprintf(out->cpuset, sizeof out->cpuset, "%.*s...", (int)sizeof out->cpuset - 4, list);
  else
    memcpy(out->cpuset, list, strlen(list) + 1);
  rc = 0;
done:
  free(list);
  if (set) hwloc_bitmap_free(set);
  hwloc_topology_destroy(topo);
  return rc;
}
