// A message's small file jobs, each in one trip to libuv's thread pool: stageRun, overwrite, fsyncPath.
//
// Why: with node's fs every open, fstat, truncate, write, fsync and close is its own round trip to
// the pool, about 30 µs of the queue's CPU each besides the system call (measured on tmpfs, where
// the disk costs nothing). A run's staging was ten of them, a status write six, a directory sync
// three: together about a fifth of the queue's CPU per drained message. Each job here is one.
// Every open refuses to follow a link or block on a FIFO (O_NOFOLLOW | O_NONBLOCK) and writes only
// a regular file, as src/spool/own-files.ts does; what is not one comes back as ENOTREG for the
// caller's careful path to replace.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "pool-job.h"

/** Not an errno: the name holds a directory, a device or the like, not a regular file. */
#define ENOTREG_RQ (-1)
#define GUARD (O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

typedef enum { STAGE, OVERWRITE, FSYNC } Kind;

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  Kind kind;
  char *path;
  char *data;
  size_t len;
  bool durable;
  bool created;
  int err;
  /** The system call that failed, for the error's text (node's form: `ENOENT: no such file or directory, open '<path>'`). */
  const char *call;
} Job;

/** errno, noting the call that set it. */
static int failed(Job *job, const char *call) {
  job->call = call;
  return errno;
}

/** 0 when `fd` is a regular file (its size in `size`, when given), else ENOTREG_RQ or an errno. */
static int regular(Job *job, int fd, off_t *size) {
  struct stat st;
  if (fstat(fd, &st) != 0) return failed(job, "fstat");
  if (size) *size = st.st_size;
  return S_ISREG(st.st_mode) ? 0 : ENOTREG_RQ;
}

/** An empty file `name` in `dirfd`, left as it is when it exists (O_APPEND, never truncated). */
static int blank(Job *job, int dirfd, const char *name) {
  const int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_APPEND | GUARD, 0644);
  if (fd < 0) return failed(job, "open");
  const int err = regular(job, fd, NULL);
  close(fd);
  return err;
}

/** job/, job/stdio.log, history and an empty pid in the message dir; stops at the first failure. */
static int stage(Job *job) {
  const int dirfd = open(job->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) return failed(job, "open");
  int err = 0;
  if (mkdirat(dirfd, "job", 0777) != 0 && errno != EEXIST) err = failed(job, "mkdir");
  // A link a script left as job/ is not followed: the start replaces it (own-files.ts ownDirSync).
  const int jobfd = err ? -1 : openat(dirfd, "job", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (!err && jobfd < 0) err = failed(job, "open");
  if (!err) err = blank(job, jobfd, "stdio.log");
  if (!err) err = blank(job, dirfd, "history");
  if (!err) err = blank(job, dirfd, "pid");
  if (jobfd >= 0) close(jobfd);
  close(dirfd);
  return err;
}

/**
 * The whole of `data` to `fd` from byte `at` of the file. A write that takes nothing would be tried
 * for ever: EIO, as writeAll says it.
 */
static int write_all(Job *job, int fd, const char *data, size_t len, off_t at) {
  for (size_t off = 0; off < len;) {
    const ssize_t n = pwrite(fd, data + off, len - off, at + (off_t)off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? failed(job, "write") : (errno = EIO, failed(job, "write"));
    off += (size_t)n;
  }
  return 0;
}

/**
 * The text in place of the `size` bytes of `fd`, so that a write refused for space (ENOSPC, EDQUOT)
 * leaves the old text as it was, not an empty or half-written file: the part past the old end goes
 * first (the new blocks), then the part over the old text (blocks the file already has), then the
 * file is cut to the new length. A refusal of either write cuts the file back to its old size (on a
 * copy-on-write filesystem the second can be refused too: the old text torn, never longer). As
 * durable.ts rewrite does it call by call.
 */
static int rewrite(Job *job, int fd, off_t size) {
  const size_t old = (size_t)size;
  int err = job->len > old ? write_all(job, fd, job->data + old, job->len - old, size) : 0;
  if (!err) err = write_all(job, fd, job->data, job->len < old ? job->len : old, 0);
  if (err) {
    // What went in past the old end is cut off again; the write's errno is the one reported, whatever this one does.
    if (job->len > old) {
      const int cut = ftruncate(fd, size);
      (void)cut;
    }
    return err;
  }
  if (job->len < old && ftruncate(fd, (off_t)job->len) != 0) return failed(job, "ftruncate");
  return 0;
}

/** Rewrites `path` in place (the inode kept), fsynced when durable; `created` when it had to be made. */
static int overwrite(Job *job) {
  int fd = open(job->path, O_RDWR | GUARD);
  if (fd < 0 && errno == ENOENT) {
    fd = open(job->path, O_WRONLY | O_CREAT | O_TRUNC | GUARD, 0644);
    job->created = fd >= 0;
  }
  if (fd < 0) return failed(job, "open");
  off_t size = 0;
  int err = regular(job, fd, &size);
  if (!err) err = rewrite(job, fd, job->created ? 0 : size);
  if (!err && job->durable && fsync(fd) != 0) err = failed(job, "fsync");
  close(fd);
  return err;
}

static int fsync_path(Job *job) {
  const int fd = open(job->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return failed(job, "open");
  const int err = fsync(fd) == 0 ? 0 : failed(job, "fsync");
  close(fd);
  return err;
}

static void run(napi_env env, void *data) {
  Job *job = data;
  switch (job->kind) {
    case STAGE: job->err = stage(job); break;
    case OVERWRITE: job->err = overwrite(job); break;
    case FSYNC: job->err = fsync_path(job); break;
  }
}

static void done(napi_env env, napi_status status, void *data) {
  Job *job = data;
  if (job->err == 0) {
    napi_value result;
    if (job->kind == OVERWRITE) napi_get_boolean(env, job->created, &result);
    else napi_get_undefined(env, &result);
    napi_resolve_deferred(env, job->deferred, result);
  } else {
    // libuv's errno names and texts, in the form of node's own fs errors.
    napi_value code, text, error, value;
    const bool notreg = job->err == ENOTREG_RQ;
    const char *name = notreg ? "RQ_ERR_NOT_REGULAR_FILE" : uv_err_name(-job->err);
    // What is not a regular file was found by the open that preceded the check.
    const char *call = job->call ? job->call : "open";
    char message[4200];
    snprintf(message, sizeof message, "%s: %s, %s '%s'", name, notreg ? "not a regular file" : uv_strerror(-job->err), call, job->path);
    napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &code);
    napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &text);
    napi_create_error(env, code, text, &error);
    napi_create_string_utf8(env, call, NAPI_AUTO_LENGTH, &value);
    napi_set_named_property(env, error, "syscall", value);
    napi_create_string_utf8(env, job->path, NAPI_AUTO_LENGTH, &value);
    napi_set_named_property(env, error, "path", value);
    if (!notreg) {
      napi_create_int32(env, -job->err, &value);
      napi_set_named_property(env, error, "errno", value);
    }
    napi_reject_deferred(env, job->deferred, error);
  }
  napi_delete_async_work(env, job->work);
  free(job->path);
  free(job->data);
  free(job);
}

/** A copy of JS string `v`, NUL-terminated, its byte length in `len`; NULL when it is not a string or memory runs out. */
static char *copy_string(napi_env env, napi_value v, size_t *len) {
  if (napi_get_value_string_utf8(env, v, NULL, 0, len) != napi_ok) return NULL;
  char *s = malloc(*len + 1);
  if (s) napi_get_value_string_utf8(env, v, s, *len + 1, len);
  return s;
}

/** copy_string for a path: NULL also when it holds a NUL byte, which would end it early (node's fs refuses those too). */
static char *copy_path(napi_env env, napi_value v) {
  size_t len = 0;
  char *s = copy_string(env, v, &len);
  if (s && strlen(s) != len) {
    free(s);
    return NULL;
  }
  return s;
}

/** Queues `kind` on `path` (and for OVERWRITE argv[1] the text, argv[2] durable); returns its promise. */
static napi_value queue_job(napi_env env, napi_callback_info info, Kind kind, const char *usage) {
  size_t argc = 3;
  napi_value argv[3];
  Job *job = calloc(1, sizeof *job);
  const size_t need = kind == OVERWRITE ? 3 : 1;
  if (!job || napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < need) goto bad;
  job->kind = kind;
  if (!(job->path = copy_path(env, argv[0]))) goto bad;
  if (kind == OVERWRITE) {
    if (!(job->data = copy_string(env, argv[1], &job->len)) || napi_get_value_bool(env, argv[2], &job->durable) != napi_ok) goto bad;
  }
  return queue_on_pool(env, "rq-fileops", run, done, job, &job->work, &job->deferred);
bad:
  if (job) {
    free(job->path);
    free(job->data);
  }
  free(job);
  napi_throw_type_error(env, "RQ_ERR_FILEOPS", usage);
  return NULL;
}

static napi_value js_stage_run(napi_env env, napi_callback_info info) {
  return queue_job(env, info, STAGE, "stageRun: expected a message directory path");
}

static napi_value js_overwrite(napi_env env, napi_callback_info info) {
  return queue_job(env, info, OVERWRITE, "overwrite: expected (path, text, durable)");
}

static napi_value js_fsync_path(napi_env env, napi_callback_info info) {
  return queue_job(env, info, FSYNC, "fsyncPath: expected a path");
}

static napi_value init(napi_env env, napi_value exports) {
  const napi_property_descriptor fns[] = {
      {"stageRun", NULL, js_stage_run, NULL, NULL, NULL, napi_default, NULL},
      {"overwrite", NULL, js_overwrite, NULL, NULL, NULL, napi_default, NULL},
      {"fsyncPath", NULL, js_fsync_path, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof fns / sizeof fns[0], fns);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
