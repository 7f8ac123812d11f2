/* vpool.h - a small pool of verification threads, so a multi-second Z3 check never holds back
 * request issue or response reading on the worker's main thread. A job is (key, arg); jobs of one
 * key never run at the same time and finish in the order they were pushed (a key is one instance:
 * its verifier, a Z3 context, is used by one thread at a time). Finished jobs are taken back by
 * the main thread in completion order. */
#ifndef RS_VPOOL_H
#define RS_VPOOL_H
#include <stdint.h>

typedef struct rs_vpool rs_vpool;
typedef void (*rs_vpool_fn)(void *key, uint32_t arg);

/* nthreads 0: jobs run inside rs_vpool_push on the caller's thread. wake (may be NULL) is called
 * from a pool thread after each job, so a main thread blocked elsewhere (curl) can return. */
rs_vpool *rs_vpool_new(uint32_t nthreads, rs_vpool_fn fn, void (*wake)(void *), void *wake_ctx);
void rs_vpool_push(rs_vpool *p, void *key, uint32_t arg);
/* Up to max finished jobs; returns how many. */
uint32_t rs_vpool_take(rs_vpool *p, void **keys, uint32_t *args, uint32_t max);
/* Wait until some job has finished (or timeout_s passed). */
void rs_vpool_wait(rs_vpool *p, double timeout_s);
uint32_t rs_vpool_busy(rs_vpool *p); /* pushed, not yet taken */
/* Lets running jobs finish, drops queued and untaken ones. */
void rs_vpool_free(rs_vpool *p);

#endif
