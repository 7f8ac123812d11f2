/* run_lock.h - a run directory in use by a live sweep is locked: RUN_DIR/lock names the holder
 * (host, PID, since when), and a second sweep or --resume on it is refused with that name. The
 * holder refreshes the file's time every 15 s, so a lock left by a process that died is taken
 * over: at once on the same host (its PID is gone), after 90 s without a refresh from another
 * host (a requeued Slurm job lands on another node). A holder on this host that is ending (mpirun
 * returns while its ranks still exit) is given 5 s to go. */
#ifndef RS_RUN_LOCK_H
#define RS_RUN_LOCK_H
#include "util/util.h"
#include <stdbool.h>

typedef struct rs_runlock rs_runlock;

/* Take dir's lock; NULL with e naming the holder when a live sweep holds it. When a dead
 * holder's lock was taken over, its text (host, PID, since) goes to stale_who (may be NULL),
 * else stale_who is "". */
rs_runlock *rs_run_lock(const char *dir, char *stale_who, size_t wn, rs_err *e);
/* The lock file's path (for the SIGTERM handler). */
const char *rs_run_lock_path(const rs_runlock *l);
/* Stop refreshing and remove the lock (NULL: nothing). */
void rs_run_unlock(rs_runlock *l);

#endif
