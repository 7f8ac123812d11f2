/* run_lock.c - the run directory's lock (storage/run_lock.h): created with O_EXCL, refreshed by
 * a thread (utime every 15 s) so another host can tell a live holder from a dead one. */
#include "storage/run_lock.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#define RS_LOCK_REFRESH_S 15
#define RS_LOCK_STALE_S 90

struct rs_runlock {
  char path[1200];
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool stop;
};

static void *refresh(void *arg) {
  rs_runlock *l = arg;
  pthread_mutex_lock(&l->mu);
  while (!l->stop) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += RS_LOCK_REFRESH_S;
    pthread_cond_timedwait(&l->cv, &l->mu, &ts);
    if (!l->stop) utime(l->path, NULL);
  }
  pthread_mutex_unlock(&l->mu);
  return NULL;
}

/* Is the holder described by `text` (host pid since) gone? */
static bool holder_dead(const char *text, const struct stat *sb) {
  char host[256] = "", me[256] = "";
  long pid = 0;
  if (sscanf(text, "host %255s pid %ld", host, &pid) != 2) return time(NULL) - sb->st_mtime > RS_LOCK_STALE_S;
  gethostname(me, sizeof me - 1);
  if (!strcmp(host, me)) return pid > 0 && kill((pid_t)pid, 0) && errno == ESRCH;
  return time(NULL) - sb->st_mtime > RS_LOCK_STALE_S;
}

static bool same_host(const char *text) {
  char host[256] = "", me[256] = "";
  gethostname(me, sizeof me - 1);
  return sscanf(text, "host %255s", host) == 1 && !strcmp(host, me);
}

const char *rs_run_lock_path(const rs_runlock *l) { return l ? l->path : NULL; }

rs_runlock *rs_run_lock(const char *dir, char *stale_who, size_t wn, rs_err *e) {
  rs_runlock *l = rs_xcalloc(1, sizeof *l);
  snprintf(l->path, sizeof l->path, "%s/lock", dir);
  if (stale_who && wn) stale_who[0] = 0;
  char me[256] = "";
  gethostname(me, sizeof me - 1);
  char text[400];
  time_t now = time(NULL);
  char since[40];
  strftime(since, sizeof since, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  snprintf(text, sizeof text, "host %s pid %ld since %s\n", me[0] ? me : "unknown", (long)getpid(), since);
  for (int attempt = 0; attempt < 2; attempt++) {
    int fd = open(l->path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
      bool bad = write(fd, text, strlen(text)) != (ssize_t)strlen(text);
      bad |= close(fd) != 0;
      if (bad) {
        unlink(l->path);
        break;
      }
      pthread_mutex_init(&l->mu, NULL);
      pthread_cond_init(&l->cv, NULL);
      if (pthread_create(&l->th, NULL, refresh, l)) {
        unlink(l->path);
        free(l);
        rs_errf(e, dir, 0, "cannot start the lock's refresh thread");
        return NULL;
      }
      return l;
    }
    if (errno != EEXIST) break;
    char *held = rs_read_file(l->path, NULL, e);
    struct stat sb;
    if (!held || stat(l->path, &sb)) { /* removed meanwhile: try again */
      free(held);
      continue;
    }
    held[strcspn(held, "\n")] = 0;
    for (int w = 0; w < 50 && !holder_dead(held, &sb) && same_host(held); w++) {
      struct timespec ts = {0, 100000000};
      nanosleep(&ts, NULL);
    }
    if (!holder_dead(held, &sb)) {
      rs_errf(e, NULL, 0, "%s is in use by a live sweep (%s; its lock refreshed %lld s ago): wait for it to end or stop "
              "it; a second sweep on the same run directory would redo and overwrite its shards",
              dir, held, (long long)(time(NULL) - sb.st_mtime));
      free(held);
      free(l);
      return NULL;
    }
    if (stale_who && wn) snprintf(stale_who, wn, "%s", held);
    free(held);
    unlink(l->path); /* a dead holder's: taken over */
  }
  rs_errf(e, l->path, 0, "cannot create the run's lock: %s", strerror(errno));
  free(l);
  return NULL;
}

void rs_run_unlock(rs_runlock *l) {
  if (!l) return;
  pthread_mutex_lock(&l->mu);
  l->stop = true;
  pthread_cond_signal(&l->cv);
  pthread_mutex_unlock(&l->mu);
  pthread_join(l->th, NULL);
  pthread_mutex_destroy(&l->mu);
  pthread_cond_destroy(&l->cv);
  unlink(l->path);
  free(l);
}
