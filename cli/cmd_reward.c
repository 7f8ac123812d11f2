/* cmd_reward.c - `regsweep reward`: judge (prompt or instance, completion) items into rewards,
 * offline from JSONL or as an HTTP service for RL trainers. The work is in reward/. */
#include "cli/cli.h"
#include "reward/reward.h"
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rs_usage_reward(void) {
  puts("usage: regsweep reward --corpus C.h5 IN.jsonl [-o OUT.jsonl] [options]\n"
       "       regsweep reward serve --corpus C.h5 [--host 127.0.0.1] [--port 8008] [--threads N] [options]\n"
       "\n"
       "Each item names an instance (\"instance\": id) or carries the exact prompt text regsweep generated\n"
       "for it (\"prompt\": the normalized IR of `corpus export`, or a sweep's default-template message),\n"
       "and the model's \"completion\". Each answer: reward, verdict (pass, syntax, dataflow, hardware,\n"
       "timeout), violation counts, diagnostics, registers used against the compiler's, and the shaping\n"
       "in the metadata; the verdict is `regsweep verify`'s. An item that cannot be judged (unknown\n"
       "instance or prompt, no completion, a malformed line) is an error for that item only.\n"
       "  --verifier native|z3|both  (default native)   --timeout-ms N  Z3 budget (default 10000)\n"
       "  --shaping FILE.json   shaping config (docs/reward.md), e.g. {\"version\":1,\"partial\":0.5,\"quality\":0.2}\n"
       "  --partial W, --quality W   the same two weights on the command line\n"
       "  --threads N           verification threads (default 2)\n"
       "  --filter F            load only the matching instances (as sweep: family=,target=,form=,kind=,sample=K)\n"
       "serve: POST /reward {\"items\":[...]}; POST /openrlhf (= /get_reward) OpenRLHF's remote reward\n"
       "  model shape {\"query\",\"prompts\",\"labels\"}; GET /health, /config. clients/regsweep_reward.py\n"
       "  has verl's compute_score and TRL's reward function.\n"
       "  --conns N (8) connections at once   --max-body BYTES (64 MiB)   --read-timeout-ms N (10000)\n"
       "  --max-items N (16384)   --allow-shutdown (POST /shutdown stops it)\n"
       "Exit status: 0 done (item errors are in the answers), 2 bad input.");
}

static int offline(const rs_reward *r, unsigned threads, const char *in, const char *out) {
  FILE *f = out ? fopen(out, "w") : stdout;
  if (!f) {
    perror(out);
    return 2;
  }
  rs_err e = {{0}};
  rs_reward_jsonl_stats st;
  int rc = rs_reward_jsonl(r, threads, in, f, &st, &e);
  if (out && fclose(f) && !rc) rc = rs_errf(&e, out, 0, "write error");
  if (rc) {
    fprintf(stderr, "regsweep reward: %s\n", e.msg);
    return 2;
  }
  cJSON *meta = rs_reward_meta(r);
  char *ms = cJSON_PrintUnformatted(meta);
  fprintf(stderr, "reward: %u items, %u pass, %u item errors; %s\n", st.items, st.pass, st.errors, ms);
  cJSON_free(ms);
  cJSON_Delete(meta);
  return 0;
}

static void *sig_main(void *arg) {
  sigset_t *set = ((void **)arg)[0];
  rs_reward_server *s = ((void **)arg)[1];
  int sig;
  sigwait(set, &sig);
  rs_reward_serve_stop(s);
  return NULL;
}

int rs_cmd_reward(int argc, char **argv) {
  const char *corpus = NULL, *filter = NULL, *verifier = "native", *shaping = NULL, *in = NULL, *out = NULL;
  unsigned timeout = 10000;
  double partial = -1, quality = -1;
  bool serve = argc > 1 && !strcmp(argv[1], "serve");
  rs_reward_serve_opts so;
  rs_reward_serve_defaults(&so);
  for (int i = serve ? 2 : 1; i < argc; i++) {
    const char *a = argv[i];
    bool more = i + 1 < argc;
    if (!strcmp(a, "--corpus") && more) corpus = argv[++i];
    else if (!strcmp(a, "--filter") && more) filter = argv[++i];
    else if (!strcmp(a, "--verifier") && more) verifier = argv[++i];
    else if (!strcmp(a, "--timeout-ms") && more) timeout = (unsigned)strtoul(argv[++i], NULL, 10);
    else if (!strcmp(a, "--shaping") && more) shaping = argv[++i];
    else if (!strcmp(a, "--partial") && more) partial = strtod(argv[++i], NULL);
    else if (!strcmp(a, "--quality") && more) quality = strtod(argv[++i], NULL);
    else if (!strcmp(a, "--threads") && more) so.threads = (unsigned)strtoul(argv[++i], NULL, 10);
    else if (!strcmp(a, "-o") && more && !serve) out = argv[++i];
    else if (!strcmp(a, "--host") && more && serve) so.host = argv[++i];
    else if (!strcmp(a, "--port") && more && serve) so.port = (unsigned)strtoul(argv[++i], NULL, 10);
    else if (!strcmp(a, "--conns") && more && serve) so.conns = (unsigned)strtoul(argv[++i], NULL, 10);
    else if (!strcmp(a, "--max-body") && more && serve) so.max_body = (size_t)strtoull(argv[++i], NULL, 10);
    else if (!strcmp(a, "--read-timeout-ms") && more && serve) so.read_timeout_ms = (unsigned)strtoul(argv[++i], NULL, 10);
    else if (!strcmp(a, "--max-items") && more && serve) so.max_items = (uint32_t)strtoul(argv[++i], NULL, 10);
    else if (!strcmp(a, "--allow-shutdown") && serve) so.allow_shutdown = true;
    else if (a[0] != '-' && !serve && !in) in = a;
    else {
      fprintf(stderr, "regsweep reward: unknown option or argument '%s'\n", a);
      return 2;
    }
  }
  if (!corpus || (!serve && !in) || !so.threads || so.threads > 256 || !so.conns || so.conns > 1024 || so.port > 65535 ||
      !so.max_body || !so.read_timeout_ms || !so.max_items) {
    rs_usage_reward();
    return 2;
  }
  rs_err e = {{0}};
  rs_shaping sh;
  rs_shaping_default(&sh);
  if (shaping) {
    size_t len;
    char *t = rs_read_file(shaping, &len, &e);
    if (!t || rs_shaping_parse(&sh, t, &e)) {
      fprintf(stderr, "regsweep reward: %s%s%s\n", t ? shaping : "", t ? ": " : "", e.msg);
      free(t);
      return 2;
    }
    free(t);
  }
  if (partial >= 0) sh.partial = partial;
  if (quality >= 0) sh.quality = quality;
  double t0 = rs_now();
  rs_reward *r = rs_reward_open(corpus, filter, verifier, timeout, &sh, &e);
  if (!r) {
    fprintf(stderr, "regsweep reward: %s\n", e.msg);
    return 2;
  }
  fprintf(stderr, "reward: %u instances loaded, %u prompt texts hashed (%.1f s)\n", rs_reward_ninstances(r),
          rs_reward_nprompts(r), rs_now() - t0);
  if (!serve) {
    int rc = offline(r, so.threads, in, out);
    rs_reward_close(r);
    return rc;
  }
  /* SIGINT/SIGTERM stop the server cleanly: blocked here (inherited by every thread), taken by one */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  rs_reward_server *s = rs_reward_serve_start(r, &so, &e);
  if (!s) {
    fprintf(stderr, "regsweep reward serve: %s\n", e.msg);
    rs_reward_close(r);
    return 2;
  }
  printf("reward: serving http://%s:%u (%u verification threads, %u connections, max body %zu bytes, read timeout %u ms)\n",
         so.host, rs_reward_serve_port(s), so.threads, so.conns, so.max_body, so.read_timeout_ms);
  fflush(stdout);
  void *args[2] = {&set, s};
  pthread_t sig;
  pthread_create(&sig, NULL, sig_main, args);
  rs_reward_serve_wait(s);
  pthread_kill(sig, SIGTERM); /* stopped by POST /shutdown: end the signal thread's wait */
  pthread_join(sig, NULL);
  uint64_t rq, it, er;
  rs_reward_serve_counts(s, &rq, &it, &er);
  rs_reward_serve_free(s);
  rs_reward_close(r);
  fprintf(stderr, "reward: stopped after %llu requests, %llu items, %llu request errors\n", (unsigned long long)rq,
          (unsigned long long)it, (unsigned long long)er);
  return 0;
}
