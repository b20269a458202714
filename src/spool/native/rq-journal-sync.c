// A journal file's own sync thread: records copied in on the loop, written and fdatasynced in batches that follow each other at once.
//
// Why: with a batch per trip to libuv's pool (rq-fileops.c appendDurable), the next batch could
// start only once the last one's end had reached the loop and the loop had run again: on a busy
// queue about 0.4 ms in which the disk sat idle between two syncs. Here the records that came in
// during a sync are written and synced the moment it ends, and the loop only hears which records
// are settled. A failed batch is cut back to the file's last good length before the next starts,
// and is reported failed; if the cut fails too, the next batch starts a fresh line (group-appender.ts).
#define _GNU_SOURCE
#include <errno.h>
#include <node_api.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

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
  /** The file's length after the last batch that succeeded; and whether a failed cut left a torn line at its end. Thread only. */
  off_t size;
  bool torn;
  /** Records handed in and not yet taken by the thread (guarded by mu); `work` is the thread's own buffer. */
  char *buf, *work;
  size_t len, cap, work_cap;
  /** The sequence numbers of the last record handed in and of the last the thread took (guarded by mu). */
  double appended, taken;
  /** Loop only: the last record the loop has heard settled; the function is held (keeps the loop alive) while they differ. */
  double settled;
  bool kicked, stopping, started, joined;
} Syncer;

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

/** One batch written and synced, or cut back to the last good length; its errno (0 when it counts). */
static int sync_batch(Syncer *s, const char *data, size_t len, const char **call) {
  int err = s->torn ? write_all(s->fd, "\n", 1, call) : 0;
  if (!err) err = write_all(s->fd, data, len, call);
  if (!err && fdatasync(s->fd) != 0) err = errno, *call = "fdatasync";
  if (!err) {
    s->size += (off_t)len + (s->torn ? 1 : 0);
    s->torn = false;
    return 0;
  }
  // No line of a refused batch may count later (a write that went through before a failed fdatasync).
  s->torn = !(ftruncate(s->fd, s->size) == 0 && fdatasync(s->fd) == 0);
  return err;
}

static void *run(void *arg) {
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
  napi_call_threadsafe_function(s->tsfn, r, napi_tsfn_blocking);
  napi_release_threadsafe_function(s->tsfn, napi_tsfn_release);
  return NULL;
}

/** On the loop: tells JS which records settled, or settles close() once the thread has ended. */
static void call_js(napi_env env, napi_value fn, void *context, void *data) {
  Syncer *s = context;
  Result *r = data;
  if (env && r->ended) {
    pthread_join(s->thread, NULL);
    s->joined = true;
    napi_value undef;
    napi_get_undefined(env, &undef);
    napi_resolve_deferred(env, s->closed, undef);
  } else if (env) {
    s->settled = r->upto;
    if (s->settled == s->appended) napi_unref_threadsafe_function(env, s->tsfn);
    napi_value argv[4], undef;
    napi_get_undefined(env, &undef);
    napi_create_double(env, r->upto, &argv[0]);
    if (r->err) {
      char message[4200];
      snprintf(message, sizeof message, "%s: %s, %s '%s'", uv_err_name(-r->err), uv_strerror(-r->err), r->call, s->path);
      napi_create_string_utf8(env, uv_err_name(-r->err), NAPI_AUTO_LENGTH, &argv[1]);
      napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &argv[2]);
      napi_create_string_utf8(env, r->call, NAPI_AUTO_LENGTH, &argv[3]);
    } else {
      argv[1] = argv[2] = argv[3] = undef;
    }
    napi_call_function(env, undef, fn, 4, argv, NULL);
  }
  free(r);
}

static void finalize(napi_env env, void *data, void *hint) {
  Syncer *s = data;
  if (s->started && !s->joined) return; // a thread still running owns it: a leak, never a use after free
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  free(s->path);
  free(s->buf);
  free(s->work);
  free(s);
}

static Syncer *unwrap(napi_env env, napi_callback_info info, size_t *argc, napi_value *argv) {
  napi_value self;
  void *s = NULL;
  if (napi_get_cb_info(env, info, argc, argv, &self, NULL) != napi_ok || napi_unwrap(env, self, &s) != napi_ok) return NULL;
  return s;
}

static napi_value usage(napi_env env, const char *text) {
  napi_throw_type_error(env, "RQ_ERR_FILEOPS", text);
  return NULL;
}

/** new JournalSync(path, fd, size, onSettled(upto, code?, message?, syscall?)): the thread starts at once. */
static napi_value construct(napi_env env, napi_callback_info info) {
  size_t argc = 4, len = 0;
  napi_value argv[4], self, name;
  double fd = -1, size = -1;
  napi_valuetype fn_type = napi_undefined;
  if (napi_get_cb_info(env, info, &argc, argv, &self, NULL) != napi_ok || argc < 4 || napi_get_value_string_utf8(env, argv[0], NULL, 0, &len) != napi_ok ||
      napi_get_value_double(env, argv[1], &fd) != napi_ok || !(fd >= 0 && fd <= 0x7fffffff) || fd != (int)fd || napi_get_value_double(env, argv[2], &size) != napi_ok ||
      !(size >= 0) || napi_typeof(env, argv[3], &fn_type) != napi_ok || fn_type != napi_function)
    return usage(env, "JournalSync: expected (path, fd, size, onSettled)");
  Syncer *s = calloc(1, sizeof *s);
  if (s) s->path = malloc(len + 1);
  if (!s || !s->path) {
    if (s) free(s);
    napi_throw_error(env, "ENOMEM", "JournalSync: out of memory");
    return NULL;
  }
  napi_get_value_string_utf8(env, argv[0], s->path, len + 1, &len);
  s->fd = (int)fd;
  s->size = (off_t)size;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  napi_wrap(env, self, s, finalize, NULL, NULL);
  napi_create_string_utf8(env, "rq-journal-sync", NAPI_AUTO_LENGTH, &name);
  if (napi_create_threadsafe_function(env, argv[3], NULL, name, 0, 1, NULL, NULL, s, call_js, &s->tsfn) != napi_ok) return usage(env, "JournalSync: no thread-safe function");
  napi_unref_threadsafe_function(env, s->tsfn);
  if (pthread_create(&s->thread, NULL, run, s) != 0) {
    napi_release_threadsafe_function(s->tsfn, napi_tsfn_abort);
    napi_throw_error(env, "RQ_ERR_FILEOPS", "JournalSync: the sync thread could not start");
    return NULL;
  }
  s->started = true;
  return self;
}

/** append(text): the record's sequence number; it is written with the next batch (at once when a sync is running, else at kick()). */
static napi_value append(napi_env env, napi_callback_info info) {
  size_t argc = 1, len = 0;
  napi_value argv[1], out;
  Syncer *s = unwrap(env, info, &argc, argv);
  if (!s || argc < 1 || napi_get_value_string_utf8(env, argv[0], NULL, 0, &len) != napi_ok) return usage(env, "append: expected a string");
  pthread_mutex_lock(&s->mu);
  if (s->stopping) {
    pthread_mutex_unlock(&s->mu);
    return usage(env, "append: the journal sync is closed");
  }
  if (s->len + len + 1 > s->cap) {
    size_t cap = s->cap ? s->cap : 4096;
    while (cap < s->len + len + 1) cap *= 2;
    char *grown = realloc(s->buf, cap);
    if (!grown) {
      pthread_mutex_unlock(&s->mu);
      napi_throw_error(env, "ENOMEM", "append: out of memory");
      return NULL;
    }
    s->buf = grown, s->cap = cap;
  }
  napi_get_value_string_utf8(env, argv[0], s->buf + s->len, len + 1, &len);
  s->len += len;
  const double seq = ++s->appended;
  pthread_mutex_unlock(&s->mu);
  if (s->settled == seq - 1) napi_ref_threadsafe_function(env, s->tsfn);
  napi_create_double(env, seq, &out);
  return out;
}

/** Sets `flag` (kicked or stopping) and wakes the thread to look at it. */
static void wake(Syncer *s, bool *flag) {
  pthread_mutex_lock(&s->mu);
  *flag = true;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

/** kick(): what was appended goes in the next batch, now if the thread is idle. */
static napi_value kick(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  Syncer *s = unwrap(env, info, &argc, NULL);
  if (!s) return usage(env, "kick: not a JournalSync");
  wake(s, &s->kicked);
  return NULL;
}

/** close(): a promise settled once every record appended is settled and the thread has ended; the descriptor stays the caller's. */
static napi_value close_sync(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  napi_value promise;
  Syncer *s = unwrap(env, info, &argc, NULL);
  if (!s) return usage(env, "close: not a JournalSync");
  if (s->closed) return usage(env, "close: already closed");
  napi_create_promise(env, &s->closed, &promise);
  napi_ref_threadsafe_function(env, s->tsfn);
  wake(s, &s->stopping);
  return promise;
}

static napi_value init(napi_env env, napi_value exports) {
  const napi_property_descriptor methods[] = {
      {"append", NULL, append, NULL, NULL, NULL, napi_default, NULL},
      {"kick", NULL, kick, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, close_sync, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_value cls;
  napi_define_class(env, "JournalSync", NAPI_AUTO_LENGTH, construct, NULL, sizeof methods / sizeof methods[0], methods, &cls);
  napi_set_named_property(env, exports, "JournalSync", cls);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
