// syncfs(2) for the create journal's checkpoint, on libuv's thread pool, as a promise.
//
// Why: Node has no binding for syncfs, and running coreutils' `sync -f` forked the whole queue
// process (and searched PATH) once per checkpoint, which on an idle queue is once per finished
// message. A checkpoint must make every message dir its journal records describe durable; one
// syncfs of the spool's filesystem does that in one call, without knowing the dirs.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "pool-job.h"

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  char *path;
  int err;
} SyncJob;

static void run(napi_env env, void *data) {
  SyncJob *job = data;
  int fd = open(job->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    job->err = errno;
    return;
  }
  job->err = syncfs(fd) == 0 ? 0 : errno;
  close(fd);
}

static void done(napi_env env, napi_status status, void *data) {
  SyncJob *job = data;
  if (job->err == 0) {
    napi_value undef;
    napi_get_undefined(env, &undef);
    napi_resolve_deferred(env, job->deferred, undef);
  } else {
    // libuv's name, not glibc's strerrorname_np (2.32+ only).
    napi_value code, text, error;
    napi_create_string_utf8(env, uv_err_name(-job->err), NAPI_AUTO_LENGTH, &code);
    napi_create_string_utf8(env, strerror(job->err), NAPI_AUTO_LENGTH, &text);
    napi_create_error(env, code, text, &error);
    napi_reject_deferred(env, job->deferred, error);
  }
  napi_delete_async_work(env, job->work);
  free(job->path);
  free(job);
}

/** syncfs(path): resolves once the filesystem holding `path` (a directory) is synced. */
static napi_value js_syncfs(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  size_t len;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_string_utf8(env, argv[0], NULL, 0, &len) != napi_ok) {
    napi_throw_type_error(env, "RQ_ERR_SYNCFS", "syncfs: expected a directory path");
    return NULL;
  }
  SyncJob *job = calloc(1, sizeof *job);
  if (job) job->path = malloc(len + 1);
  if (!job || !job->path) {
    free(job);
    napi_throw_error(env, "ENOMEM", "syncfs: out of memory");
    return NULL;
  }
  napi_get_value_string_utf8(env, argv[0], job->path, len + 1, &len);
  return queue_on_pool(env, "rq-syncfs", run, done, job, &job->work, &job->deferred);
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "syncfs", NAPI_AUTO_LENGTH, js_syncfs, NULL, &fn);
  napi_set_named_property(env, exports, "syncfs", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
