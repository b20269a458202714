// The journal sync thread's state and its loop, shared by rq-journal-thread.c (the thread) and rq-journal-sync.c (its JS face).
#ifndef RQ_JOURNAL_THREAD_H
#define RQ_JOURNAL_THREAD_H
#include <node_api.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

/** A batch's outcome, sent to the loop: every record up to `upto` is settled, failed when `err` is not 0. */
typedef struct {
  double upto;
  int err;
  const char *call;
  /** The thread has ended: close()'s promise is settled. */
  bool ended;
} Result;

typedef struct {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  napi_threadsafe_function tsfn;
  napi_deferred closed;
  char *path;
  int fd;
  /** The file's length after the last batch that succeeded; and whether a failed batch is still to be cut away. Thread only. */
  off_t size;
  bool uncut;
  /** Records handed in and not yet taken by the thread (guarded by mu); `work` is the thread's own buffer. */
  char *buf, *work;
  size_t len, cap, work_cap;
  /** The sequence numbers of the last record handed in and of the last the thread took (guarded by mu). */
  double appended, taken;
  /** Loop only: the last record the loop has heard settled; the function is held (keeps the loop alive) while they differ. */
  double settled;
  bool kicked, stopping, started, joined;
  /** The JS object was collected while the thread ran: the thread's end frees it. */
  bool orphaned;
} Syncer;

/** The thread's body (pthread_create's start routine, `arg` the Syncer): batches until stopping and nothing is left. */
void *journal_thread(void *arg);

/** Sets `flag` (kicked or stopping) and wakes the thread to look at it. */
void journal_wake(Syncer *s, bool *flag);

#endif
