/* test_bind.c - worker pinning (worker/bind.c).
 *
 * 1. Mode strings parse; anything else is an error.
 * 2. core mode: local ranks 0 and 1 get distinct cpusets when the machine has >= 2 cores, and the
 *    recorded cpuset is what the kernel reports (/proc/self/status Cpus_allowed_list).
 * 3. gpu mode with CUDA_VISIBLE_DEVICES=0 but no GPU in hwloc falls back to core mode and says
 *    "no GPU"; an empty list says so too. (On a machine with a GPU it must bind near it.)
 * 4. none leaves an existing binding as it is and records it.
 * 5. Out-of-range local ranks are errors.
 * 6. The GPU path on a described machine (HWLOC_XMLFILE + HWLOC_THISSYSTEM=1, so binding is real):
 *    PUs 0-1; NVIDIA GPUs 1a:00.0 (local to the package) and 3b:00.0 (local to core 1), AMD
 *    c1:00.0 (local to core 0). Index entries follow PCI bus order per vendor; ranks sharing a GPU
 *    split its cores. Needs CPUs 0 and 1 to be usable here; skipped otherwise.
 * Every bind runs in a forked child so no binding leaks into the next case; the child sends back
 * its rs_binding and the kernel's view through a pipe. */
#include "check.h"
#include "worker/bind.h"
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
  int rc;
  rs_binding b;
  rs_err e;
  char before[128], after[128]; /* Cpus_allowed_list around the rs_bind_apply call */
} child_result;

typedef enum { PRE_NONE, PRE_CORE1 } prebind;

static void cpus_allowed(char *out, size_t cap) {
  out[0] = 0;
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "Cpus_allowed_list:", 18)) {
      const char *p = line + 18;
      while (*p == ' ' || *p == '\t') p++;
      snprintf(out, cap, "%.*s", (int)strcspn(p, "\n"), p);
    }
  fclose(f);
}

/* Run rs_bind_apply in a child with `env` ("NAME=value" or "-NAME" to unset, NULL-terminated). */
static child_result run_child(rs_bind_mode mode, int rank, int size, const char *const *env, prebind pre) {
  child_result r;
  memset(&r, 0, sizeof r);
  r.rc = -2;
  int fd[2];
  if (pipe(fd)) return r;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    for (; env && *env; env++) {
      if (**env == '-') {
        unsetenv(*env + 1);
      } else {
        const char *eq = strchr(*env, '=');
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(eq - *env), *env);
        setenv(name, eq + 1, 1);
      }
    }
    rs_binding tmp;
    if (pre == PRE_CORE1 && rs_bind_apply(RS_BIND_CORE, 1, 2, &tmp, &r.e)) r.rc = -3;
    cpus_allowed(r.before, sizeof r.before);
    if (r.rc != -3) r.rc = rs_bind_apply(mode, rank, size, &r.b, &r.e);
    cpus_allowed(r.after, sizeof r.after);
    ssize_t w = write(fd[1], &r, sizeof r);
    close(fd[1]);
    _exit(w == (ssize_t)sizeof r ? 0 : 1);
  }
  close(fd[1]);
  if (pid > 0) {
    ssize_t got = 0, n;
    while (got < (ssize_t)sizeof r && (n = read(fd[0], (char *)&r + got, sizeof r - (size_t)got)) > 0) got += n;
    int st = 0;
    waitpid(pid, &st, 0);
    CHECKF(got == (ssize_t)sizeof r && WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed");
    if (got != (ssize_t)sizeof r) r.rc = -2;
  }
  close(fd[0]);
  return r;
}

/* Two cpu lists name the same set (formats may differ: "0,1" vs "0-1"). */
static int same_cpus(const char *a, const char *b) {
  hwloc_bitmap_t x = hwloc_bitmap_alloc(), y = hwloc_bitmap_alloc();
  int ok = x && y && hwloc_bitmap_list_sscanf(x, a) == 0 && hwloc_bitmap_list_sscanf(y, b) == 0 &&
           !hwloc_bitmap_iszero(x) && hwloc_bitmap_isequal(x, y);
  hwloc_bitmap_free(x);
  hwloc_bitmap_free(y);
  return ok;
}

static int count_cores(void) {
  hwloc_topology_t t;
  if (hwloc_topology_init(&t)) return 0;
  int n = hwloc_topology_load(t) ? 0 : hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  hwloc_topology_destroy(t);
  return n;
}

static void test_parse(void) {
  rs_bind_mode m = RS_BIND_GPU;
  CHECK(rs_bind_mode_parse("none", &m) == 0 && m == RS_BIND_NONE);
  CHECK(rs_bind_mode_parse("core", &m) == 0 && m == RS_BIND_CORE);
  CHECK(rs_bind_mode_parse("gpu", &m) == 0 && m == RS_BIND_GPU);
  m = RS_BIND_CORE;
  CHECK(rs_bind_mode_parse("GPU", &m) == -1 && m == RS_BIND_CORE);
  CHECK(rs_bind_mode_parse("", &m) == -1);
  CHECK(rs_bind_mode_parse("socket", &m) == -1);
  CHECK(rs_bind_mode_parse(NULL, &m) == -1);
  CHECK(!strcmp(rs_bind_mode_name(RS_BIND_GPU), "gpu"));
}

static void test_core(int ncores) {
  child_result r0 = run_child(RS_BIND_CORE, 0, 2, NULL, PRE_NONE);
  child_result r1 = run_child(RS_BIND_CORE, 1, 2, NULL, PRE_NONE);
  CHECKF(r0.rc == 0, "%s", r0.e.msg);
  CHECKF(r1.rc == 0, "%s", r1.e.msg);
  if (r0.rc || r1.rc) return;
  CHECK(r0.b.requested == RS_BIND_CORE && r0.b.applied == RS_BIND_CORE);
  CHECK(r1.b.local_rank == 1 && r1.b.local_size == 2);
  CHECK(r0.b.gpu[0] == 0 && r0.b.note[0]);
  CHECKF(same_cpus(r0.b.cpuset, r0.after), "recorded %s, kernel %s", r0.b.cpuset, r0.after);
  CHECKF(same_cpus(r1.b.cpuset, r1.after), "recorded %s, kernel %s", r1.b.cpuset, r1.after);
  if (ncores >= 2) {
    CHECKF(strcmp(r0.b.cpuset, r1.b.cpuset) != 0, "ranks 0 and 1 share %s", r0.b.cpuset);
    CHECKF(!strstr(r0.b.note, "oversubscribed"), "%s", r0.b.note);
  }
  /* More ranks than cores wraps around and says so. */
  child_result ro = run_child(RS_BIND_CORE, ncores, ncores + 1, NULL, PRE_NONE);
  CHECKF(ro.rc == 0, "%s", ro.e.msg);
  CHECKF(ro.rc || !strcmp(ro.b.cpuset, r0.b.cpuset), "rank %d got %s, rank 0 %s", ncores, ro.b.cpuset, r0.b.cpuset);
  CHECKF(ro.rc || strstr(ro.b.note, "oversubscribed"), "%s", ro.b.note);
}

static void test_gpu_fallback(int ncores) {
  const char *const cuda0[] = {"CUDA_VISIBLE_DEVICES=0", "-ROCR_VISIBLE_DEVICES", "-HIP_VISIBLE_DEVICES", NULL};
  child_result r = run_child(RS_BIND_GPU, 0, 1, cuda0, PRE_NONE);
  CHECKF(r.rc == 0, "%s", r.e.msg);
  if (r.rc) return;
  CHECK(r.b.requested == RS_BIND_GPU);
  printf("gpu mode, CUDA_VISIBLE_DEVICES=0: applied=%s cpuset=%s gpu='%s' note='%s'\n",
         rs_bind_mode_name(r.b.applied), r.b.cpuset, r.b.gpu, r.b.note);
  CHECKF(same_cpus(r.b.cpuset, r.after), "recorded %s, kernel %s", r.b.cpuset, r.after);
  if (r.b.applied == RS_BIND_GPU) {
    /* A machine with an NVIDIA GPU: bound near cuda:0, with its PCI address recorded. */
    CHECKF(!strncmp(r.b.gpu, "cuda:0 (pci ", 12), "%s", r.b.gpu);
  } else {
    CHECK(r.b.applied == RS_BIND_CORE && r.b.gpu[0] == 0);
    CHECKF(strstr(r.b.note, "no GPU") != NULL, "%s", r.b.note);
    CHECKF(strstr(r.b.note, "distinct cores") != NULL, "%s", r.b.note);
    if (ncores >= 2) {
      child_result r1 = run_child(RS_BIND_GPU, 1, 2, cuda0, PRE_NONE);
      CHECKF(r1.rc == 0 && strcmp(r1.b.cpuset, r.b.cpuset), "fallback ranks share %s", r.b.cpuset);
    }
  }
  /* An empty list hides every GPU on any machine. */
  const char *const none[] = {"CUDA_VISIBLE_DEVICES=", NULL};
  child_result re = run_child(RS_BIND_GPU, 0, 1, none, PRE_NONE);
  CHECKF(re.rc == 0, "%s", re.e.msg);
  CHECK(re.b.applied == RS_BIND_CORE && re.b.gpu[0] == 0);
  CHECKF(strstr(re.b.note, "no GPU") && strstr(re.b.note, "CUDA_VISIBLE_DEVICES"), "%s", re.b.note);
  /* A UUID is recorded even where hwloc cannot place it. */
  const char *const uuid[] = {"CUDA_VISIBLE_DEVICES=GPU-00000000-1111-2222-3333-444444444444", NULL};
  child_result ru = run_child(RS_BIND_GPU, 0, 1, uuid, PRE_NONE);
  CHECKF(ru.rc == 0, "%s", ru.e.msg);
  CHECKF(!strncmp(ru.b.gpu, "cuda:GPU-00000000", 17), "%s", ru.b.gpu);
  CHECKF(ru.b.applied == RS_BIND_CORE && strstr(ru.b.note, "UUID"), "%s", ru.b.note);
}

static void test_none(int ncores) {
  child_result r = run_child(RS_BIND_NONE, 0, 1, NULL, PRE_NONE);
  CHECKF(r.rc == 0, "%s", r.e.msg);
  CHECK(r.b.applied == RS_BIND_NONE);
  CHECKF(!strcmp(r.before, r.after), "before %s, after %s", r.before, r.after);
  CHECKF(same_cpus(r.b.cpuset, r.after), "recorded %s, kernel %s", r.b.cpuset, r.after);
  if (ncores < 2) return;
  /* Already pinned (as a launcher might): none keeps that pin and records it. */
  child_result p = run_child(RS_BIND_NONE, 0, 1, NULL, PRE_CORE1);
  CHECKF(p.rc == 0, "%s", p.e.msg);
  CHECKF(!strcmp(p.before, p.after), "before %s, after %s", p.before, p.after);
  CHECKF(same_cpus(p.b.cpuset, p.before), "recorded %s, kernel %s", p.b.cpuset, p.before);
  CHECKF(!same_cpus(p.b.cpuset, r.b.cpuset), "pinned child reports the full set %s", p.b.cpuset);
}

static void test_errors(void) {
  rs_binding b;
  rs_err e = {{0}};
  CHECK(rs_bind_apply(RS_BIND_CORE, 2, 2, &b, &e) == -1 && strstr(e.msg, "out of range"));
  CHECK(rs_bind_apply(RS_BIND_CORE, -1, 2, &b, &e) == -1);
  CHECK(rs_bind_apply(RS_BIND_NONE, 0, 0, &b, &e) == -1);
  CHECK(rs_bind_apply((rs_bind_mode)7, 0, 1, &b, &e) == -1 && strstr(e.msg, "mode"));
}

static const char gpu_xml[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
    "<topology version=\"2.0\">\n"
    " <object type=\"Machine\" os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"0x3\" allowed_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\" allowed_nodeset=\"0x1\" gp_index=\"1\">\n"
    "  <object type=\"Package\" os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"2\">\n"
    "   <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"3\" local_memory=\"1073741824\"/>\n"
    "   <object type=\"Core\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"4\">\n"
    "    <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"5\"/>\n"
    "    <object type=\"Bridge\" gp_index=\"20\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"0000:[c0-c1]\">\n"
    "     <object type=\"PCIDev\" gp_index=\"21\" pci_busid=\"0000:c1:00.0\" pci_type=\"0380 [1002:740c] [1002:0b0c] 01\" pci_link_speed=\"0.000000\"/>\n"
    "    </object>\n"
    "   </object>\n"
    "   <object type=\"Core\" os_index=\"1\" cpuset=\"0x2\" complete_cpuset=\"0x2\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"6\">\n"
    "    <object type=\"PU\" os_index=\"1\" cpuset=\"0x2\" complete_cpuset=\"0x2\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"7\"/>\n"
    "    <object type=\"Bridge\" gp_index=\"30\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"0000:[3a-3b]\">\n"
    "     <object type=\"PCIDev\" gp_index=\"31\" pci_busid=\"0000:3b:00.0\" pci_type=\"0302 [10de:2335] [10de:18be] a1\" pci_link_speed=\"0.000000\"/>\n"
    "    </object>\n"
    "   </object>\n"
    "   <object type=\"Bridge\" gp_index=\"40\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"0000:[19-1a]\">\n"
    "    <object type=\"PCIDev\" gp_index=\"41\" pci_busid=\"0000:1a:00.0\" pci_type=\"0302 [10de:2335] [10de:18be] a1\" pci_link_speed=\"0.000000\">\n"
    "     <object type=\"OSDev\" gp_index=\"42\" name=\"opencl0d0\" osdev_type=\"5\"/>\n"
    "    </object>\n"
    "   </object>\n"
    "  </object>\n"
    " </object>\n"
    "</topology>\n";

typedef struct {
  const char *env[4];
  int rank, size;
  const char *gpu, *cpus, *note; /* expected: gpu prefix, cpu list, note substring */
} gpu_case;

static void test_gpu_described(void) {
  char allowed[128];
  cpus_allowed(allowed, sizeof allowed);
  hwloc_bitmap_t a = hwloc_bitmap_alloc();
  int usable = a && hwloc_bitmap_list_sscanf(a, allowed) == 0 && hwloc_bitmap_isset(a, 0) && hwloc_bitmap_isset(a, 1);
  hwloc_bitmap_free(a);
  if (!usable) {
    printf("described-GPU cases skipped: CPUs 0-1 not both allowed (%s)\n", allowed);
    return;
  }
  char path[] = "/tmp/rs_test_bind_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return;
  ssize_t w = write(fd, gpu_xml, sizeof gpu_xml - 1);
  close(fd);
  CHECK(w == (ssize_t)sizeof gpu_xml - 1);
  char xmlenv[64];
  snprintf(xmlenv, sizeof xmlenv, "HWLOC_XMLFILE=%s", path);
  static const gpu_case cases[] = {
      {{"CUDA_VISIBLE_DEVICES=1"}, 0, 1, "cuda:1 (pci 0000:3b:00.0)", "1", "all its local cores"},
      {{"CUDA_VISIBLE_DEVICES=0"}, 0, 2, "cuda:0 (pci 0000:1a:00.0)", "0", "split"},
      {{"CUDA_VISIBLE_DEVICES=0"}, 1, 2, "cuda:0 (pci 0000:1a:00.0)", "1", "split"},
      {{"CUDA_VISIBLE_DEVICES=0,1"}, 1, 2, "cuda:1 (pci 0000:3b:00.0)", "1", "all its local cores"},
      {{"CUDA_VISIBLE_DEVICES=1"}, 1, 2, "cuda:1 (pci 0000:3b:00.0)", "1", "oversubscribed"},
      {{"ROCR_VISIBLE_DEVICES=0"}, 0, 1, "rocm:0 (pci 0000:c1:00.0)", "0", "all its local cores"},
      {{"ROCR_VISIBLE_DEVICES=0", "HIP_VISIBLE_DEVICES=0"}, 0, 1, "rocm:0 (pci 0000:c1:00.0)", "0", "near"},
      {{"HIP_VISIBLE_DEVICES=0"}, 0, 1, "rocm:0 (pci 0000:c1:00.0)", "0", "near"},
      {{"-CUDA_VISIBLE_DEVICES"}, 0, 1, "cuda:0 (pci 0000:1a:00.0)", "0-1", "no *_VISIBLE_DEVICES set"},
      {{"-CUDA_VISIBLE_DEVICES"}, 2, 3, "rocm:0 (pci 0000:c1:00.0)", "0", "near"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const gpu_case *c = &cases[i];
    const char *env[10] = {xmlenv, "HWLOC_THISSYSTEM=1", "-CUDA_VISIBLE_DEVICES", "-ROCR_VISIBLE_DEVICES",
                           "-HIP_VISIBLE_DEVICES"};
    int n = 5;
    for (int k = 0; k < 4 && c->env[k]; k++) env[n++] = c->env[k];
    child_result r = run_child(RS_BIND_GPU, c->rank, c->size, env, PRE_NONE);
    CHECKF(r.rc == 0, "case %zu: %s", i, r.e.msg);
    CHECKF(r.b.applied == RS_BIND_GPU, "case %zu: %s", i, r.b.note);
    CHECKF(!strcmp(r.b.gpu, c->gpu), "case %zu: gpu '%s', want '%s'", i, r.b.gpu, c->gpu);
    CHECKF(same_cpus(r.b.cpuset, c->cpus), "case %zu: cpuset %s, want %s", i, r.b.cpuset, c->cpus);
    CHECKF(same_cpus(r.after, c->cpus), "case %zu: kernel says %s, want %s", i, r.after, c->cpus);
    CHECKF(strstr(r.b.note, c->note) != NULL, "case %zu: note '%s' lacks '%s'", i, r.b.note, c->note);
  }
  /* An index past the described GPUs falls back and says so. */
  const char *const past[] = {xmlenv, "HWLOC_THISSYSTEM=1", "CUDA_VISIBLE_DEVICES=2", NULL};
  child_result r = run_child(RS_BIND_GPU, 0, 1, past, PRE_NONE);
  CHECKF(r.rc == 0 && r.b.applied == RS_BIND_CORE && strstr(r.b.note, "found 2 NVIDIA GPUs"), "%s", r.b.note);
  unlink(path);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  int ncores = count_cores();
  CHECKF(ncores >= 1, "hwloc found %d cores", ncores);
  test_parse();
  test_core(ncores);
  test_gpu_fallback(ncores);
  test_none(ncores);
  test_errors();
  test_gpu_described();
  return rs_check_done("test_bind");
}
