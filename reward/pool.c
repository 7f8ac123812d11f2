/* pool.c - the reward service's verification threads: batches of items from any number of
 * callers (HTTP connections, the offline command) share one fixed set of threads, each item one
 * task, so one large batch uses every core and small batches are not queued behind it whole. */
#include "reward/reward.h"
#include <pthread.h>
#include <stdlib.h>

typedef struct job {
  void (*fn)(void *ctx, uint32_t i);
  void *ctx;
  uint32_t n, next, done;
  pthread_cond_t cv;
  struct job *link; /* queue of jobs with items not yet started */
} job;

struct rs_rpool {
  pthread_mutex_t mu;
  pthread_cond_t work;
  job *head, *tail;
  bool stop;
  pthread_t *th;
  unsigned nth;
};

static void *worker(void *arg) {
  rs_rpool *p = arg;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->head && !p->stop) pthread_cond_wait(&p->work, &p->mu);
    if (!p->head) break; /* stopping with nothing queued */
    job *j = p->head;
    uint32_t i = j->next++;
    if (j->next == j->n) { /* its last item started: off the queue */
      p->head = j->link;
      if (!p->head) p->tail = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    j->fn(j->ctx, i);
    pthread_mutex_lock(&p->mu);
    if (++j->done == j->n) pthread_cond_signal(&j->cv);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

rs_rpool *rs_rpool_new(unsigned nthreads) {
  rs_rpool *p = rs_xcalloc(1, sizeof *p);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->work, NULL);
  p->nth = nthreads ? nthreads : 1;
  p->th = rs_xcalloc(p->nth, sizeof *p->th);
  for (unsigned i = 0; i < p->nth; i++) pthread_create(&p->th[i], NULL, worker, p);
  return p;
}

void rs_rpool_run(rs_rpool *p, void (*fn)(void *ctx, uint32_t i), void *ctx, uint32_t n) {
  if (!n) return;
  job j = {fn, ctx, n, 0, 0, PTHREAD_COND_INITIALIZER, NULL};
  pthread_mutex_lock(&p->mu);
  if (p->tail) p->tail->link = &j;
  else p->head = &j;
  p->tail = &j;
  pthread_cond_broadcast(&p->work);
  while (j.done < j.n) pthread_cond_wait(&j.cv, &p->mu);
  pthread_mutex_unlock(&p->mu);
  pthread_cond_destroy(&j.cv);
}

void rs_rpool_free(rs_rpool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = true;
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->mu);
  for (unsigned i = 0; i < p->nth; i++) pthread_join(p->th[i], NULL);
  pthread_cond_destroy(&p->work);
  pthread_mutex_destroy(&p->mu);
  free(p->th);
  free(p);
}

typedef struct {
  const rs_reward *r;
  const rs_reward_item *items;
  cJSON **out;
  double *rewards;
} batch;

static void one(void *ctx, uint32_t i) {
  batch *b = ctx;
  double rw;
  b->out[i] = rs_reward_eval(b->r, &b->items[i], &rw);
  b->rewards[i] = rw;
}

cJSON *rs_reward_batch(const rs_reward *r, rs_rpool *p, const rs_reward_item *items, uint32_t n, double *rewards) {
  batch b = {r, items, rs_xcalloc(n ? n : 1, sizeof(cJSON *)), rewards ? rewards : rs_xcalloc(n ? n : 1, sizeof(double))};
  if (p) rs_rpool_run(p, one, &b, n);
  else
    for (uint32_t i = 0; i < n; i++) one(&b, i);
  cJSON *arr = cJSON_CreateArray();
  for (uint32_t i = 0; i < n; i++) {
    cJSON_AddNumberToObject(b.out[i], "index", i);
    cJSON_AddItemToArray(arr, b.out[i]);
  }
  free(b.out);
  if (!rewards) free(b.rewards);
  return arr;
}
