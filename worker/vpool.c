/* vpool.c - see vpool.h. One mutex guards both queues; jobs are small (one candidate). */
#include "worker/vpool.h"
#include "util/util.h"
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

typedef struct job {
  void *key;
  uint32_t arg;
  struct job *next;
} job;

struct rs_vpool {
  rs_vpool_fn fn;
  void (*wake)(void *);
  void *wake_ctx;
  pthread_mutex_t mu;
  pthread_cond_t work, done_cv;
  job *q, *qtail;       /* waiting, FIFO */
  job *d, *dtail;       /* finished, FIFO */
  void **running;       /* key per thread, NULL when idle */
  pthread_t *th;
  uint32_t nth, busy;
  bool stop;
};

typedef struct {
  rs_vpool *p;
  uint32_t i;
} targ;

static void append(job **h, job **t, job *j) {
  j->next = NULL;
  if (*t) (*t)->next = j;
  else *h = j;
  *t = j;
}

static void *thread_main(void *arg) {
  targ a = *(targ *)arg;
  free(arg);
  rs_vpool *p = a.p;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    job *j = NULL, *prev = NULL;
    while (!p->stop) {
      /* the first job whose key no other thread holds: per key in push order */
      prev = NULL;
      for (j = p->q; j; prev = j, j = j->next) {
        bool held = false;
        for (uint32_t t = 0; t < p->nth && !held; t++) held = p->running[t] == j->key;
        if (!held) break;
      }
      if (j) break;
      pthread_cond_wait(&p->work, &p->mu);
    }
    if (p->stop) break;
    if (prev) prev->next = j->next;
    else p->q = j->next;
    if (p->qtail == j) p->qtail = prev;
    p->running[a.i] = j->key;
    pthread_mutex_unlock(&p->mu);
    p->fn(j->key, j->arg);
    pthread_mutex_lock(&p->mu);
    p->running[a.i] = NULL;
    append(&p->d, &p->dtail, j);
    pthread_cond_broadcast(&p->done_cv);
    pthread_cond_broadcast(&p->work); /* a job of this key may now run */
    pthread_mutex_unlock(&p->mu);
    if (p->wake) p->wake(p->wake_ctx);
    pthread_mutex_lock(&p->mu);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

rs_vpool *rs_vpool_new(uint32_t nthreads, rs_vpool_fn fn, void (*wake)(void *), void *wake_ctx) {
  rs_vpool *p = rs_xcalloc(1, sizeof *p);
  p->fn = fn;
  p->wake = wake;
  p->wake_ctx = wake_ctx;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->work, NULL);
  pthread_cond_init(&p->done_cv, NULL);
  p->running = rs_xcalloc(nthreads + 1, sizeof *p->running);
  p->th = rs_xcalloc(nthreads + 1, sizeof *p->th);
  /* the threads inherit a full signal mask: SIGTERM's handler (worker/term.c) runs on the main thread */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  for (uint32_t i = 0; i < nthreads; i++) {
    targ *a = rs_xmalloc(sizeof *a);
    *a = (targ){p, i};
    if (pthread_create(&p->th[p->nth], NULL, thread_main, a)) {
      free(a); /* fewer threads (or none: inline) rather than failing the sweep */
      break;
    }
    p->nth++;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return p;
}

void rs_vpool_push(rs_vpool *p, void *key, uint32_t arg) {
  job *j = rs_xmalloc(sizeof *j);
  j->key = key;
  j->arg = arg;
  if (!p->nth) { /* inline */
    p->fn(key, arg);
    pthread_mutex_lock(&p->mu);
    append(&p->d, &p->dtail, j);
    p->busy++;
    pthread_mutex_unlock(&p->mu);
    return;
  }
  pthread_mutex_lock(&p->mu);
  append(&p->q, &p->qtail, j);
  p->busy++;
  pthread_cond_signal(&p->work);
  pthread_mutex_unlock(&p->mu);
}

uint32_t rs_vpool_take(rs_vpool *p, void **keys, uint32_t *args, uint32_t max) {
  uint32_t n = 0;
  pthread_mutex_lock(&p->mu);
  while (n < max && p->d) {
    job *j = p->d;
    p->d = j->next;
    if (!p->d) p->dtail = NULL;
    keys[n] = j->key;
    args[n++] = j->arg;
    free(j);
    p->busy--;
  }
  pthread_mutex_unlock(&p->mu);
  return n;
}

void rs_vpool_wait(rs_vpool *p, double timeout_s) {
  pthread_mutex_lock(&p->mu);
  if (!p->d && p->nth) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double t = (double)ts.tv_sec + ts.tv_nsec * 1e-9 + timeout_s;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    pthread_cond_timedwait(&p->done_cv, &p->mu, &ts);
  }
  pthread_mutex_unlock(&p->mu);
}

uint32_t rs_vpool_busy(rs_vpool *p) {
  pthread_mutex_lock(&p->mu);
  uint32_t b = p->busy;
  pthread_mutex_unlock(&p->mu);
  return b;
}

void rs_vpool_free(rs_vpool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = true;
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->mu);
  for (uint32_t i = 0; i < p->nth; i++) pthread_join(p->th[i], NULL);
  for (job *j = p->q, *n; j; j = n) n = j->next, free(j);
  for (job *j = p->d, *n; j; j = n) n = j->next, free(j);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->work);
  pthread_cond_destroy(&p->done_cv);
  free(p->running);
  free(p->th);
  free(p);
}
