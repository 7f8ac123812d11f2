/* term.c - the SIGTERM handler of a sweep rank: removes the shard files being written and the run
 * lock, says so, and dies of the signal (term.h). The table of paths is the one piece of
 * process-global mutable state a signal handler needs (it cannot be handed a context); only
 * async-signal-safe calls run in the handler, and the main thread blocks SIGTERM while it edits
 * the table. */
#include "worker/term.h"
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char term_paths[RS_TERM_SLOTS][1300];
static volatile sig_atomic_t term_used[RS_TERM_SLOTS];
static int term_rank;
static char term_lock[1300];
static volatile sig_atomic_t term_lock_set;

static void put(const char *s) {
  ssize_t r = write(2, s, strlen(s));
  (void)r;
}

static void on_term(int sig) {
  unsigned n = 0;
  for (int i = 0; i < RS_TERM_SLOTS; i++)
    if (term_used[i] && unlink(term_paths[i]) == 0) n++;
  if (term_lock_set) unlink(term_lock);
  /* no printf here: digits by hand */
  char num[16], rk[16];
  int k = 0, r = 0;
  unsigned v = n;
  do num[k++] = (char)('0' + v % 10); while ((v /= 10) && k < 15);
  int rv = term_rank < 0 ? 0 : term_rank;
  do rk[r++] = (char)('0' + rv % 10); while ((rv /= 10) && r < 15);
  char msg[160], *p = msg;
  const char *a = "regsweep: rank ", *b = ": terminated (SIGTERM): removed ", *c =
      " unfinished shard file(s); finished shards are kept, --resume continues\n";
  memcpy(p, a, strlen(a)), p += strlen(a);
  while (r) *p++ = rk[--r];
  memcpy(p, b, strlen(b)), p += strlen(b);
  while (k) *p++ = num[--k];
  *p = 0;
  put(msg);
  put(c);
  signal(sig, SIG_DFL);
  raise(sig);
}

void rs_term_install(int rank) {
  term_rank = rank;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_term;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
}

static void block(int how) {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGTERM);
  pthread_sigmask(how, &s, NULL);
}

int rs_term_track(const char *path) {
  block(SIG_BLOCK);
  int slot = -1;
  for (int i = 0; i < RS_TERM_SLOTS && slot < 0; i++)
    if (!term_used[i]) slot = i;
  if (slot >= 0) {
    snprintf(term_paths[slot], sizeof term_paths[slot], "%s", path);
    term_used[slot] = 1;
  }
  block(SIG_UNBLOCK);
  return slot;
}

void rs_term_forget(int slot) {
  if (slot < 0 || slot >= RS_TERM_SLOTS) return;
  block(SIG_BLOCK);
  term_used[slot] = 0;
  block(SIG_UNBLOCK);
}

void rs_term_lock(const char *path) {
  block(SIG_BLOCK);
  term_lock_set = 0;
  if (path) {
    snprintf(term_lock, sizeof term_lock, "%s", path);
    term_lock_set = 1;
  }
  block(SIG_UNBLOCK);
}
