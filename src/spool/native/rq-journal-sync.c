// A journal file's own sync thread, as JS sees it: records copied in on the loop, reports of what settled, close() when it ends.
//
// The thread (rq-journal-thread.c) writes and fdatasyncs what the loop hands in, in batches that
// follow each other at once; the loop only hears, through a thread-safe function, which records
// are settled. That function holds the loop only while a record is unsettled or close() waits.
#define _GNU_SOURCE
#include "rq-journal-thread.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

static void destroy(Syncer *s);

static void join(Syncer *s) {
  if (!s->joined) pthread_join(s->thread, NULL);
  s->joined = true;
}

/**
 * The env ends (process exit, a worker's end) with the thread running: it is told to stop and joined here, so it
 * syncs what it holds and makes its last calls while the thread-safe function still exists (which this hook,
 * registered after it, runs before it is deleted).
 */
static void cleanup(void *arg) {
  Syncer *s = arg;
  journal_wake(s, &s->stopping);
  join(s);
}

/** On the loop: tells JS which records settled, or settles close() once the thread has ended. */
static void call_js(napi_env env, napi_value fn, void *context, void *data) {
  Syncer *s = context;
  Result *r = data;
  if (env && r->ended) {
    join(s);
    napi_remove_env_cleanup_hook(env, cleanup, s);
    napi_value undef;
    napi_get_undefined(env, &undef);
    if (s->closed) napi_resolve_deferred(env, s->closed, undef);
    if (s->orphaned) destroy(s);
  } else if (env) {
    s->settled = r->upto;
    // close() holds the loop until the thread has ended, whatever has settled.
    if (s->settled == s->appended && !s->closed) napi_unref_threadsafe_function(env, s->tsfn);
    napi_value argv[5], undef;
    napi_get_undefined(env, &undef);
    napi_create_double(env, r->upto, &argv[0]);
    if (r->err) {
      char message[4200];
      snprintf(message, sizeof message, "%s: %s, %s '%s'", uv_err_name(-r->err), uv_strerror(-r->err), r->call, s->path);
      napi_create_string_utf8(env, uv_err_name(-r->err), NAPI_AUTO_LENGTH, &argv[1]);
      napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &argv[2]);
      napi_create_string_utf8(env, r->call, NAPI_AUTO_LENGTH, &argv[3]);
      napi_create_int32(env, -r->err, &argv[4]);
    } else {
      argv[1] = argv[2] = argv[3] = argv[4] = undef;
    }
    napi_call_function(env, undef, fn, 5, argv, NULL);
  }
  free(r);
}

static void finalize(napi_env env, void *data, void *hint) {
  Syncer *s = data;
  if (s->started && !s->joined) s->orphaned = true;
  else destroy(s);
}

static void destroy(Syncer *s) {
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

/** new JournalSync(path, fd, size, onSettled(upto, code?, message?, syscall?, errno?)): the thread starts at once. */
static napi_value construct(napi_env env, napi_callback_info info) {
  size_t argc = 4, len = 0;
  napi_value argv[4], self, name;
  double fd = -1, size = -1;
  napi_valuetype fn_type = napi_undefined;
  if (napi_get_cb_info(env, info, &argc, argv, &self, NULL) != napi_ok || argc < 4 || napi_get_value_string_utf8(env, argv[0], NULL, 0, &len) != napi_ok ||
      napi_get_value_double(env, argv[1], &fd) != napi_ok || !(fd >= 0 && fd <= 0x7fffffff) || fd != (int)fd || napi_get_value_double(env, argv[2], &size) != napi_ok ||
      !(size >= 0 && size <= 9007199254740991.0) || size != (double)(int64_t)size || napi_typeof(env, argv[3], &fn_type) != napi_ok || fn_type != napi_function)
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
  if (pthread_create(&s->thread, NULL, journal_thread, s) != 0) {
    napi_release_threadsafe_function(s->tsfn, napi_tsfn_abort);
    napi_throw_error(env, "RQ_ERR_FILEOPS", "JournalSync: the sync thread could not start");
    return NULL;
  }
  s->started = true;
  napi_add_env_cleanup_hook(env, cleanup, s);
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

/** kick(): what was appended goes in the next batch, now if the thread is idle. */
static napi_value kick(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  Syncer *s = unwrap(env, info, &argc, NULL);
  if (!s) return usage(env, "kick: not a JournalSync");
  journal_wake(s, &s->kicked);
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
  journal_wake(s, &s->stopping);
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
