/* cmd_slurm.c - `regsweep slurm`: write a Slurm job script for a sweep and submit it (docs/slurm.md). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "cli/cli.h"
#include "slurm/slurm.h"
#include "util/util.h"
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void rs_usage_slurm(void) {
  puts("usage: regsweep slurm submit --corpus C.h5 --model SPEC [--model SPEC2 ...] --out DIR\n"
       "         --nodes N --gpus-per-node G [--workers-per-node W] [--partition P] [--time T]\n"
       "         [--account A] [--job-name NAME] [--sbatch-arg ARG ...] [--array-over models]\n"
       "         [--server-cmd 'CMD'] [--server-per gpu|node] [--port P] [--health-path /health]\n"
       "         [--health-timeout S] [--gpu-vendor nvidia|amd] [--launcher srun|mpirun]\n"
       "         [--regsweep PATH] [--template FILE] [--requeue] [--dry-run]\n"
       "         [sweep options: --samples N --filter F --split S --seed S --verifier V --keep K\n"
       "          --block N --z3-timeout-ms N --progress-every S --max-infra N --until-pass --feedback]\n"
       "       regsweep slurm template      (print the built-in job script template)\n"
       "\n"
       "Writes DIR/job.sbatch and submits it with sbatch (--dry-run prints it instead). The job runs\n"
       "`regsweep sweep` through `srun --mpi=pmix` (or mpirun): rank 0 coordinates and W workers per\n"
       "node (default W = G; G = 0 means CPU-only workers, W default 1) generate and verify. The run\n"
       "directory is DIR/run; with --array-over models each model is one array task with its own\n"
       "run directory DIR/<index>-<model>, so `regsweep report DIR/0-* DIR/1-*` compares them.\n"
       "--server-cmd starts, on every node, one inference server per GPU (--server-per node: one per\n"
       "node) with that GPU alone visible (CUDA_VISIBLE_DEVICES, or ROCR_VISIBLE_DEVICES and\n"
       "HIP_VISIBLE_DEVICES with --gpu-vendor amd); {port}, {gpu}, {ngpus}, {model} in CMD are replaced\n"
       "(server g listens on --port + g, default 8000; array task i adds i times its server count, so\n"
       "tasks sharing a node never share a port; a port in use is refused). Each worker waits for its\n"
       "server's health URL, and openai: specs are pointed at http://localhost:<port>. The servers are\n"
       "stopped at the end. A run directory with a config.json is always resumed, so\n"
       "`sbatch DIR/job.sbatch` (or the same submit again) after a cancel continues it; --requeue\n"
       "adds #SBATCH --requeue.\n"
       "API keys stay in the environment (the spec's key_env=); none is written into the script.");
}

#define MAXM 16
#define MAXA 64

typedef struct {
  const char *corpus, *out, *partition, *time, *account, *job_name, *server_cmd, *server_per, *vendor;
  const char *launcher, *health_path, *regsweep, *template_file, *array_over;
  const char *models[MAXM];
  const char *sweep_args[MAXA], *sbatch_args[MAXA];
  int nmodels, nsweep, nsbatch;
  long nodes, gpus, workers, port, health_timeout;
  bool dry_run, requeue, samples_given;
} sopts;


/* Shell single quoting: 'it'\''s' - safe for any byte string. */
static void sb_quote(rs_sbuf *b, const char *s) {
  rs_sbuf_puts(b, "'");
  for (const char *p = s; *p; p++)
    if (*p == '\'') rs_sbuf_puts(b, "'\\''");
    else rs_sbuf_put(b, p, 1);
  rs_sbuf_puts(b, "'");
}
static void sb_var(rs_sbuf *b, const char *name, const char *val) {
  rs_sbuf_printf(b, "%s=", name);
  sb_quote(b, val ? val : "");
  rs_sbuf_puts(b, "\n");
}

/* Values of #SBATCH lines that are not paths: names, times, accounts. */
static bool plain_value(const char *s) {
  if (!*s) return false;
  for (const char *p = s; *p; p++)
    if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') || ('0' <= *p && *p <= '9') || strchr("_.:,+-=@/[]", *p)))
      return false;
  return true;
}

/* "openai:http://h:8000/v1?model=Q/Q-7B&temperature=0.7" -> "openai_model_Q_Q-7B_temperature_0.7";
 * "builtin:sampled?temp=0.3" -> "builtin_sampled_temp_0.3". */
static void sanitize(const char *spec, char *out, size_t n) {
  const char *s = spec;
  char head[32] = "";
  if (!strncmp(spec, "openai:", 7)) {
    const char *q = strchr(spec, '?');
    snprintf(head, sizeof head, "openai_");
    s = q ? q + 1 : spec + 7;
  }
  size_t k = snprintf(out, n, "%s", head);
  bool sep = false;
  for (const char *p = s; *p && k + 2 < n && k < 80; p++) {
    char c = *p;
    bool ok = ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || c == '.' || c == '-';
    if (ok) {
      if (sep && k > 0 && out[k - 1] != '_') out[k++] = '_';
      out[k++] = c;
      sep = false;
    } else sep = true;
  }
  while (k > 0 && (out[k - 1] == '_' || out[k - 1] == '.')) k--;
  out[k] = 0;
  if (!k) snprintf(out, n, "model");
}

static const char *valued_sweep[] = {"--samples", "--filter", "--split", "--seed", "--verifier", "--keep",
                                     "--block", "--z3-timeout-ms", "--progress-every", "--max-infra"};

static int parse(int argc, char **argv, sopts *o) {
  memset(o, 0, sizeof *o);
  o->nodes = 1;
  o->gpus = -1;
  o->workers = -1;
  o->port = 8000;
  o->health_timeout = 900;
  o->server_per = "gpu";
  o->vendor = "nvidia";
  o->launcher = "srun";
  o->health_path = "/health";
  o->job_name = "regsweep";
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--dry-run")) o->dry_run = true;
    else if (!strcmp(a, "--requeue")) o->requeue = true;
    else if (!strcmp(a, "--until-pass") || !strcmp(a, "--feedback")) {
      if (o->nsweep == MAXA) return fprintf(stderr, "regsweep slurm: too many options\n"), -1;
      o->sweep_args[o->nsweep++] = a;
    } else if (!v) return fprintf(stderr, "regsweep slurm: %s needs a value\n", a), -1;
    else {
      i++;
      bool sw = false;
      for (size_t k = 0; k < sizeof valued_sweep / sizeof *valued_sweep; k++) sw |= !strcmp(a, valued_sweep[k]);
      char *end = NULL;
      if (sw) {
        if (o->nsweep + 2 > MAXA) return fprintf(stderr, "regsweep slurm: too many options\n"), -1;
        o->sweep_args[o->nsweep++] = a;
        o->sweep_args[o->nsweep++] = v;
        if (!strcmp(a, "--samples")) o->samples_given = true;
      } else if (!strcmp(a, "--corpus")) o->corpus = v;
      else if (!strcmp(a, "--out")) o->out = v;
      else if (!strcmp(a, "--model")) {
        if (o->nmodels == MAXM) return fprintf(stderr, "regsweep slurm: at most %d models\n", MAXM), -1;
        o->models[o->nmodels++] = v;
      } else if (!strcmp(a, "--nodes") || !strcmp(a, "--gpus-per-node") || !strcmp(a, "--workers-per-node") ||
                 !strcmp(a, "--port") || !strcmp(a, "--health-timeout")) {
        errno = 0;
        long x = strtol(v, &end, 10);
        if (errno || end == v || *end || x < 0 || x > 65535)
          return fprintf(stderr, "regsweep slurm: %s wants a number, not '%s'\n", a, v), -1;
        if (!strcmp(a, "--nodes")) o->nodes = x;
        else if (!strcmp(a, "--gpus-per-node")) o->gpus = x;
        else if (!strcmp(a, "--workers-per-node")) o->workers = x;
        else if (!strcmp(a, "--port")) o->port = x;
        else o->health_timeout = x;
      } else if (!strcmp(a, "--partition")) o->partition = v;
      else if (!strcmp(a, "--time")) o->time = v;
      else if (!strcmp(a, "--account")) o->account = v;
      else if (!strcmp(a, "--job-name")) o->job_name = v;
      else if (!strcmp(a, "--sbatch-arg")) {
        if (o->nsbatch == MAXA) return fprintf(stderr, "regsweep slurm: too many --sbatch-arg\n"), -1;
        o->sbatch_args[o->nsbatch++] = v;
      } else if (!strcmp(a, "--array-over")) o->array_over = v;
      else if (!strcmp(a, "--server-cmd")) o->server_cmd = v;
      else if (!strcmp(a, "--server-per")) o->server_per = v;
      else if (!strcmp(a, "--gpu-vendor")) o->vendor = v;
      else if (!strcmp(a, "--launcher")) o->launcher = v;
      else if (!strcmp(a, "--health-path")) o->health_path = v;
      else if (!strcmp(a, "--regsweep")) o->regsweep = v;
      else if (!strcmp(a, "--template")) o->template_file = v;
      else return fprintf(stderr, "regsweep slurm: unknown option '%s'\n", a), -1;
    }
  }
  if (!o->corpus || !o->out || !o->nmodels || o->gpus < 0)
    return fprintf(stderr, "regsweep slurm submit: need --corpus, --out, --model and --gpus-per-node\n"), -1;
  if (o->nodes < 1 || o->nodes > 4096) return fprintf(stderr, "regsweep slurm: 1 <= --nodes <= 4096\n"), -1;
  if (o->workers < 0) o->workers = o->gpus > 0 ? o->gpus : 1;
  if (o->workers < 1 || o->workers > 1024) return fprintf(stderr, "regsweep slurm: 1 <= --workers-per-node <= 1024\n"), -1;
  if (o->gpus > 64) return fprintf(stderr, "regsweep slurm: --gpus-per-node <= 64\n"), -1;
  if (strcmp(o->vendor, "nvidia") && strcmp(o->vendor, "amd"))
    return fprintf(stderr, "regsweep slurm: --gpu-vendor nvidia|amd\n"), -1;
  if (strcmp(o->launcher, "srun") && strcmp(o->launcher, "mpirun"))
    return fprintf(stderr, "regsweep slurm: --launcher srun|mpirun\n"), -1;
  if (strcmp(o->server_per, "gpu") && strcmp(o->server_per, "node"))
    return fprintf(stderr, "regsweep slurm: --server-per gpu|node\n"), -1;
  if (o->array_over && strcmp(o->array_over, "models"))
    return fprintf(stderr, "regsweep slurm: --array-over models (the only kind)\n"), -1;
  /* The job script's ports: NSERV per array task (one per GPU, else per worker; one with
   * --server-per node), array task i from --port + i*NSERV. */
  long nserv = !strcmp(o->server_per, "node") ? 1 : o->gpus > 0 ? o->gpus : o->workers;
  long nport = nserv * (o->array_over ? o->nmodels : 1);
  if (o->port < 1 || o->port + nport - 1 > 65535)
    return fprintf(stderr, "regsweep slurm: --port %ld needs %ld ports up to %ld (> 65535)\n", o->port, nport,
                   o->port + nport - 1), -1;
  if (o->health_path[0] != '/') return fprintf(stderr, "regsweep slurm: --health-path starts with '/'\n"), -1;
  if (o->server_cmd && !*o->server_cmd) o->server_cmd = NULL;
  const char *names[] = {"--partition", "--time", "--account", "--job-name"};
  const char *vals[] = {o->partition, o->time, o->account, o->job_name};
  for (int k = 0; k < 4; k++)
    if (vals[k] && !plain_value(vals[k]))
      return fprintf(stderr, "regsweep slurm: %s '%s': only letters, digits and _.:,+-=@/[]\n", names[k], vals[k]), -1;
  for (int k = 0; k < o->nsbatch; k++)
    if (strncmp(o->sbatch_args[k], "--", 2) || strpbrk(o->sbatch_args[k], "\n\r"))
      return fprintf(stderr, "regsweep slurm: --sbatch-arg '%s' must be one --option[=value]\n", o->sbatch_args[k]), -1;
  for (int k = 0; k < o->nmodels; k++)
    if (strstr(o->models[k], "key=") && !strstr(o->models[k], "key_env="))
      return fprintf(stderr, "regsweep slurm: put API keys in the environment (key_env=VAR), not in the spec\n"), -1;
  return 0;
}

static void build_script(const sopts *o, const char *tmpl, const char *bin, const char *corpus, const char *dir,
                         const char *script, char names[][128], rs_sbuf *out, char *log_pat, size_t log_n) {
  bool array = o->array_over != NULL;
  rs_sbuf sb = {0}, cfg = {0};
  rs_sbuf_printf(&sb, "#SBATCH --job-name=%s\n", o->job_name);
  rs_sbuf_printf(&sb, "#SBATCH --nodes=%ld\n", o->nodes);
  rs_sbuf_printf(&sb, "#SBATCH --ntasks-per-node=%ld\n", o->workers + 1); /* +1: room for rank 0 on node 1 */
  if (o->gpus > 0) rs_sbuf_printf(&sb, "#SBATCH --gpus-per-node=%ld\n", o->gpus);
  if (o->partition) rs_sbuf_printf(&sb, "#SBATCH --partition=%s\n", o->partition);
  if (o->time) rs_sbuf_printf(&sb, "#SBATCH --time=%s\n", o->time);
  if (o->account) rs_sbuf_printf(&sb, "#SBATCH --account=%s\n", o->account);
  if (array) rs_sbuf_printf(&sb, "#SBATCH --array=0-%d\n", o->nmodels - 1);
  if (o->requeue) rs_sbuf_puts(&sb, "#SBATCH --requeue\n");
  rs_sbuf_puts(&sb, "#SBATCH --open-mode=append\n");
  snprintf(log_pat, log_n, "%s/logs/slurm-%s.out", dir, array ? "%A_%a" : "%j");
  char lp[PATH_MAX + 64];
  snprintf(lp, sizeof lp, "%s/logs/slurm-", dir);
  rs_sbuf tmp = {0};
  /* the log path: escape '%' in the directory part, keep the job-id pattern */
  if (!strpbrk(dir, "\"\n\r")) {
    rs_sbuf_puts(&tmp, "#SBATCH --output=\"");
    for (const char *p = lp; *p; p++)
      if (*p == '%') rs_sbuf_puts(&tmp, "%%");
      else rs_sbuf_put(&tmp, p, 1);
    rs_sbuf_printf(&tmp, "%s.out\"\n", array ? "%A_%a" : "%j");
    rs_sbuf_puts(&sb, tmp.s);
  } else {
    rs_sbuf_puts(&sb, "# (the log path has a double quote or newline: sbatch is given --output instead)\n");
  }
  free(tmp.s);
  for (int k = 0; k < o->nsbatch; k++) rs_sbuf_printf(&sb, "#SBATCH %s\n", o->sbatch_args[k]);

  rs_sbuf_puts(&cfg, "# ---- written by regsweep slurm submit ----\n");
  sb_var(&cfg, "REGSWEEP", bin);
  sb_var(&cfg, "CORPUS", corpus);
  sb_var(&cfg, "JOB_DIR", dir);
  sb_var(&cfg, "JOB_SCRIPT", script);
  rs_sbuf_puts(&cfg, "MODELS=(");
  for (int k = 0; k < o->nmodels; k++) {
    rs_sbuf_puts(&cfg, k ? " " : "");
    sb_quote(&cfg, o->models[k]);
  }
  rs_sbuf_puts(&cfg, ")\nRUN_NAMES=(");
  for (int k = 0; array && k < o->nmodels; k++) {
    rs_sbuf_puts(&cfg, k ? " " : "");
    sb_quote(&cfg, names[k]);
  }
  rs_sbuf_puts(&cfg, ")\nSWEEP_ARGS=(");
  for (int k = 0; k < o->nsweep; k++) {
    rs_sbuf_puts(&cfg, k ? " " : "");
    sb_quote(&cfg, o->sweep_args[k]);
  }
  rs_sbuf_puts(&cfg, ")\n");
  sb_var(&cfg, "ARRAY", array ? "1" : "0");
  char num[32];
  snprintf(num, sizeof num, "%ld", o->gpus);
  sb_var(&cfg, "GPUS_PER_NODE", num);
  snprintf(num, sizeof num, "%ld", o->workers);
  sb_var(&cfg, "WORKERS_PER_NODE", num);
  sb_var(&cfg, "GPU_VENDOR", o->vendor);
  sb_var(&cfg, "SERVER_CMD", o->server_cmd);
  sb_var(&cfg, "SERVER_PER", o->server_per);
  snprintf(num, sizeof num, "%ld", o->port);
  sb_var(&cfg, "BASE_PORT", num);
  sb_var(&cfg, "HEALTH_PATH", o->health_path);
  snprintf(num, sizeof num, "%ld", o->health_timeout);
  sb_var(&cfg, "HEALTH_TIMEOUT", num);
  sb_var(&cfg, "LAUNCHER", o->launcher);
  rs_sbuf_puts(&cfg, "# ---- end ----");

  /* the template, line by line: a line that is exactly @SBATCH@ or @CONFIG@ is replaced */
  for (const char *p = tmpl; *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    if (len == 8 && !strncmp(p, "@SBATCH@", 8)) rs_sbuf_put(out, sb.s, sb.n ? sb.n - 1 : 0);
    else if (len == 8 && !strncmp(p, "@CONFIG@", 8)) rs_sbuf_puts(out, cfg.s);
    else rs_sbuf_put(out, p, len);
    if (nl) rs_sbuf_puts(out, "\n");
    p += len + (nl ? 1 : 0);
  }
  free(sb.s);
  free(cfg.s);
}

static int mkdir_p(const char *path) {
  char buf[PATH_MAX];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(buf, 0755) && errno != EEXIST) return -1;
      *p = '/';
    }
  return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

/* sbatch --parsable [--output LOG] SCRIPT; prints the job id. */
static int submit(const char *script, const char *log_pat, bool pass_output) {
  int fd[2];
  if (pipe(fd)) return perror("regsweep slurm: pipe"), 1;
  pid_t pid = fork();
  if (pid < 0) return perror("regsweep slurm: fork"), 1;
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]);
    close(fd[1]);
    if (pass_output) execlp("sbatch", "sbatch", "--parsable", "--output", log_pat, script, (char *)NULL);
    else execlp("sbatch", "sbatch", "--parsable", script, (char *)NULL);
    fprintf(stderr, "regsweep slurm: cannot run sbatch: %s (is Slurm installed and on PATH?)\n", strerror(errno));
    _exit(127);
  }
  close(fd[1]);
  char id[256] = "";
  ssize_t n = read(fd[0], id, sizeof id - 1);
  close(fd[0]);
  id[n > 0 ? n : 0] = 0;
  id[strcspn(id, ";\n")] = 0; /* --parsable: "ID" or "ID;cluster" */
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) || !id[0]) {
    fprintf(stderr, "regsweep slurm: sbatch failed (status %d)\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 1;
  }
  printf("submitted job %s (%s)\n", id, script);
  return 0;
}

int rs_cmd_slurm(int argc, char **argv) {
  if (argc < 2 || rs_cli_wants_help(argc, argv)) {
    rs_usage_slurm();
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "template")) {
    fputs(rs_slurm_template, stdout);
    return 0;
  }
  if (strcmp(argv[1], "submit")) {
    fprintf(stderr, "regsweep slurm: unknown subcommand '%s' (submit, template)\n", argv[1]);
    return 2;
  }
  sopts o;
  if (parse(argc, argv, &o)) return 2;

  /* absolute paths: the job runs elsewhere (another node, another working directory) */
  char bin[PATH_MAX], corpus[PATH_MAX], dir[PATH_MAX], script[PATH_MAX + 16];
  if (o.regsweep) {
    if (!realpath(o.regsweep, bin)) return fprintf(stderr, "regsweep slurm: %s: %s\n", o.regsweep, strerror(errno)), 2;
  } else {
    ssize_t n = readlink("/proc/self/exe", bin, sizeof bin - 1);
    if (n <= 0) return fprintf(stderr, "regsweep slurm: cannot find this binary; give --regsweep PATH\n"), 2;
    bin[n] = 0;
  }
  if (!realpath(o.corpus, corpus)) return fprintf(stderr, "regsweep slurm: %s: %s\n", o.corpus, strerror(errno)), 2;
  if (!o.dry_run && mkdir_p(o.out)) return fprintf(stderr, "regsweep slurm: cannot create %s: %s\n", o.out, strerror(errno)), 2;
  if (!realpath(o.out, dir)) {
    if (!o.dry_run) return fprintf(stderr, "regsweep slurm: %s: %s\n", o.out, strerror(errno)), 2;
    if (o.out[0] == '/') snprintf(dir, sizeof dir, "%s", o.out);
    else {
      char cwd[PATH_MAX];
      if (!getcwd(cwd, sizeof cwd)) return 2;
      if (strlen(cwd) + strlen(o.out) + 2 > sizeof dir) return fprintf(stderr, "regsweep slurm: path too long\n"), 2;
      size_t lc = strlen(cwd);
      memcpy(dir, cwd, lc);
      dir[lc] = '/';
      memcpy(dir + lc + 1, o.out, strlen(o.out) + 1);
    }
  }
  snprintf(script, sizeof script, "%s/job.sbatch", dir);

  char names[MAXM][128];
  for (int k = 0; k < o.nmodels; k++) {
    char s[100];
    sanitize(o.models[k], s, sizeof s);
    snprintf(names[k], sizeof names[k], "%d-%s", k, s);
  }
  char *tmpl = NULL;
  if (o.template_file) {
    rs_err e;
    if (!(tmpl = rs_read_file(o.template_file, NULL, &e))) return fprintf(stderr, "regsweep slurm: %s\n", e.msg), 2;
  }
  rs_sbuf out = {0};
  char log_pat[PATH_MAX + 64];
  build_script(&o, tmpl ? tmpl : rs_slurm_template, bin, corpus, dir, script, names, &out, log_pat, sizeof log_pat);
  free(tmpl);
  if (o.dry_run) {
    fputs(out.s, stdout);
    free(out.s);
    return 0;
  }
  char logs[PATH_MAX + 8];
  snprintf(logs, sizeof logs, "%s/logs", dir);
  FILE *f = NULL;
  char tmp[PATH_MAX + 32];
  snprintf(tmp, sizeof tmp, "%s.tmp", script);
  if (mkdir_p(logs) || !(f = fopen(tmp, "w")) || fputs(out.s, f) < 0 || fclose(f) || chmod(tmp, 0755) ||
      rename(tmp, script)) {
    fprintf(stderr, "regsweep slurm: cannot write %s: %s\n", script, strerror(errno));
    free(out.s);
    return 2;
  }
  free(out.s);
  fprintf(stderr, "regsweep slurm: wrote %s\n", script);
  if (o.array_over)
    for (int k = 0; k < o.nmodels; k++) fprintf(stderr, "  array task %d: %s/%s\n", k, dir, names[k]);
  else fprintf(stderr, "  run directory: %s/run\n", dir);
  fflush(stderr);
  return submit(script, log_pat, strpbrk(dir, "\"\n\r") != NULL);
}
