// A journal file's sync thread: takes what the loop handed in, writes and fdatasyncs it, reports it, and goes again at once.
//
// Why a thread of its own: with a batch per trip to libuv's pool, the next batch could start only
// once the last one's end had reached the loop and the loop had run again: on a busy queue about
// 0.4 ms in which the disk sat idle between two syncs. Here the records that came in during a sync
// are written and synced the moment it ends. A failed batch is cut back to the file's last good
// length before the next starts, and is reported failed; if the cut fails too, each next batch tries
// it again first and is refused while it fails, so that no whole line of a refused batch is ever
// followed by records that count.
#define _GNU_SOURCE
#include "rq-journal-thread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/** Sets `flag` (kicked or stopping) and wakes the thread to look at it. */
void journal_wake(Syncer *s, bool *flag) {
  pthread_mutex_lock(&s->mu);
  *flag = true;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

/** A report for the loop; out of memory here there is no way left to tell anyone, so the process ends, as node's own allocations do. */
static Result *result(void) {
  Result *r = calloc(1, sizeof *r);
  if (!r) {
    fputs("rq-journal-sync: out of memory\n", stderr);
    abort();
  }
  return r;
}

static int write_all(int fd, const char *data, size_t len, const char **call) {
  for (size_t off = 0; off < len;) {
    const ssize_t n = write(fd, data + off, len - off);
    if (n < 0 && errno == EINTR) continue;
    *call = "write";
    if (n < 0) return errno;
    if (n == 0) return EIO;
    off += (size_t)n;
  }
  return 0;
}

/** The file cut back to its last good length, durably; its errno. */
static int cut(Syncer *s, const char **call) {
  if (ftruncate(s->fd, s->size) != 0) return *call = "ftruncate", errno;
  if (fdatasync(s->fd) != 0) return *call = "fdatasync", errno;
  return 0;
}

/** One batch written and synced, or cut back to the last good length; its errno (0 when it counts). */
static int sync_batch(Syncer *s, const char *data, size_t len, const char **call) {
  // No line of a refused batch may count later (a write that went through before a failed fdatasync): until the cut
  // is made, nothing is written after it.
  int err = s->uncut ? cut(s, call) : 0;
  if (err) return err;
  s->uncut = false;
  err = write_all(s->fd, data, len, call);
  if (!err && fdatasync(s->fd) != 0) err = errno, *call = "fdatasync";
  if (!err) {
    // The file was exactly `size` long: nothing is written while a refused batch is not cut away.
    s->size += (off_t)len;
    return 0;
  }
  const char *ignored;
  s->uncut = cut(s, &ignored) != 0;
  return err;
}

void *journal_thread(void *arg) {
  Syncer *s = arg;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (!(s->appended > s->taken && (s->kicked || s->stopping)) && !(s->stopping && s->appended == s->taken)) pthread_cond_wait(&s->cv, &s->mu);
    if (s->appended == s->taken) break;
    char *const taken = s->buf;
    const size_t len = s->len, cap = s->cap;
    s->buf = s->work, s->cap = s->work_cap, s->len = 0;
    s->work = taken, s->work_cap = cap;
    Result *r = result();
    r->upto = s->taken = s->appended;
    s->kicked = false;
    pthread_mutex_unlock(&s->mu);
    r->err = sync_batch(s, taken, len, &r->call);
    napi_call_threadsafe_function(s->tsfn, r, napi_tsfn_blocking);
    pthread_mutex_lock(&s->mu);
    // What came in during the sync goes now, without waiting for the loop.
    if (s->appended > s->taken) s->kicked = true;
  }
  pthread_mutex_unlock(&s->mu);
  Result *r = result();
  r->ended = true;
  // The env's teardown (cleanup() in rq-journal-sync.c) may be joining this thread: the call still finds the function alive.
  napi_call_threadsafe_function(s->tsfn, r, napi_tsfn_blocking);
  napi_release_threadsafe_function(s->tsfn, napi_tsfn_release);
  return NULL;
}
