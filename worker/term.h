/* term.h - SIGTERM (mpirun or Slurm ending the job) must not leave half-written shard files
 * behind without a word: the handler removes the unfinished files it was told about, says so,
 * and then dies of the signal as before (finished shards stay; --resume continues). */
#ifndef RS_TERM_H
#define RS_TERM_H

void rs_term_install(int rank);
/* Track / forget a file the handler must remove (a shard being written). Slot 0..RS_TERM_SLOTS-1. */
#define RS_TERM_SLOTS 512
int rs_term_track(const char *path);   /* returns a slot, or -1 when all are taken */
void rs_term_forget(int slot);
/* The run directory's lock (storage/run_lock.h), removed by the handler too (NULL: none), so
 * a --resume right after mpirun ended the job does not meet it. */
void rs_term_lock(const char *path);

#endif
