// Blank message directories made in one trip to libuv's thread pool: makeBlanks(dirs, subdirs, files, keepOpen).
//
// Each whole blank comes back with its directory's inode number (the message id's unique part) and, with
// keepOpen, its first file (the msg) left open for writing: a create then writes its msg and moves the blank
// into place with no open and no stat on the queue's main thread: three system calls on the message where it
// made five.
//
// Why: a blank is a directory and one to three empty files. Made with node's fs, each mkdir, open
// and close is its own thread-pool round trip, about 30 µs of the queue's CPU each (measured on
// tmpfs, where the disk costs nothing): a blank cost the queue more than the rest of a socket
// create. Here a whole refill is one job: the queue pays one round trip for up to a pool's worth.
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

typedef struct {
  char **items;
  uint32_t n;
} Strings;

typedef struct {
  double ino;
  int fd;
} Made;

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  Strings dirs, subdirs, files;
  Made *made_ones;
  uint32_t made;
  bool keep_open;
} BlankJob;

static void free_strings(Strings *s) {
  for (uint32_t i = 0; i < s->n; i++) free(s->items[i]);
  free(s->items);
}

/**
 * One blank: the dir, its subdirs, its empty files (created, never truncated: O_EXCL), with `keep_open` the first of
 * them left open (close-on-exec) in `out->fd` (else -1), and the dir's inode in `out->ino`. 0 or an errno, with
 * nothing left open.
 */
static int make_one(const char *dir, const Strings *subdirs, const Strings *files, bool keep_open, Made *out) {
  char p[4096];
  struct stat st;
  out->fd = -1;
  if (mkdir(dir, 0777) != 0 || stat(dir, &st) != 0) return errno;
  out->ino = (double)st.st_ino;
  for (uint32_t i = 0; i < subdirs->n; i++) {
    if (snprintf(p, sizeof p, "%s/%s", dir, subdirs->items[i]) >= (int)sizeof p) return ENAMETOOLONG;
    if (mkdir(p, 0777) != 0) return errno;
  }
  for (uint32_t i = 0; i < files->n; i++) {
    int fd = -1;
    if (snprintf(p, sizeof p, "%s/%s", dir, files->items[i]) >= (int)sizeof p) errno = ENAMETOOLONG;
    else fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      int err = errno;
      if (out->fd >= 0) close(out->fd);
      out->fd = -1;
      return err;
    }
    if (i == 0 && keep_open) out->fd = fd;
    else close(fd);
  }
  return 0;
}

static void run(napi_env env, void *data) {
  BlankJob *job = data;
  // The errno is not reported: a short list is all the pool needs (it stops, and the next take retries).
  while (job->made < job->dirs.n && make_one(job->dirs.items[job->made], &job->subdirs, &job->files, job->keep_open, &job->made_ones[job->made]) == 0) job->made++;
}

/** The [inode, fd] pairs of the blanks made, in order; false if napi could not build them. */
static bool made_pairs(napi_env env, const BlankJob *job, napi_value *out) {
  if (napi_create_array_with_length(env, job->made, out) != napi_ok) return false;
  for (uint32_t i = 0; i < job->made; i++) {
    napi_value pair, ino, fd;
    if (napi_create_array_with_length(env, 2, &pair) != napi_ok || napi_create_double(env, job->made_ones[i].ino, &ino) != napi_ok ||
        napi_create_int32(env, job->made_ones[i].fd, &fd) != napi_ok || napi_set_element(env, pair, 0, ino) != napi_ok ||
        napi_set_element(env, pair, 1, fd) != napi_ok || napi_set_element(env, *out, i, pair) != napi_ok)
      return false;
  }
  return true;
}

/**
 * Resolves with the whole blanks, in order, as [inode, fd] pairs (fd -1 without keepOpen or files): fewer than asked
 * means the next one failed (and may be partly made). The caller owns the descriptors. When the answer cannot be
 * handed over (napi failed, or the work was cancelled), the descriptors are closed here, since no caller will
 * ever see them, and the promise rejects: the pool stops as on a disk error, and its blanks are recovery's leftovers.
 */
static void done(napi_env env, napi_status status, void *data) {
  BlankJob *job = data;
  napi_value made;
  if (status == napi_ok && made_pairs(env, job, &made)) napi_resolve_deferred(env, job->deferred, made);
  else {
    for (uint32_t i = 0; i < job->made; i++)
      if (job->made_ones[i].fd >= 0) close(job->made_ones[i].fd);
    // A call that failed may have left a JavaScript exception pending, which would make the rejection below fail too.
    napi_value pending, code, msg, err;
    napi_get_and_clear_last_exception(env, &pending);
    napi_create_string_utf8(env, "RQ_ERR_BLANKS", NAPI_AUTO_LENGTH, &code);
    napi_create_string_utf8(env, "makeBlanks: the blanks made could not be handed to JavaScript", NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, code, msg, &err);
    napi_reject_deferred(env, job->deferred, err);
  }
  free(job->made_ones);
  napi_delete_async_work(env, job->work);
  free_strings(&job->dirs);
  free_strings(&job->subdirs);
  free_strings(&job->files);
  free(job);
}

/** Copies a JS array of strings; false, `out` left empty (nothing to free), when it is not one or memory runs out. */
static bool read_strings(napi_env env, napi_value arr, Strings *out) {
  bool is_array = false;
  uint32_t n = 0;
  if (napi_is_array(env, arr, &is_array) != napi_ok || !is_array || napi_get_array_length(env, arr, &n) != napi_ok) return false;
  out->items = calloc(n ? n : 1, sizeof *out->items);
  if (!out->items) return false;
  for (out->n = 0; out->n < n; out->n++) {
    napi_value v;
    size_t len;
    char **slot = &out->items[out->n];
    if (napi_get_element(env, arr, out->n, &v) != napi_ok || napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok || !(*slot = malloc(len + 1))) {
      free_strings(out);
      *out = (Strings){0};
      return false;
    }
    napi_get_value_string_utf8(env, v, *slot, len + 1, &len);
  }
  return true;
}

static napi_value js_make_blanks(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  BlankJob *job = calloc(1, sizeof *job);
  if (!job || napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4) goto bad;
  if (napi_get_value_bool(env, argv[3], &job->keep_open) != napi_ok) goto bad;
  if (!read_strings(env, argv[0], &job->dirs) || !read_strings(env, argv[1], &job->subdirs) || !read_strings(env, argv[2], &job->files)) goto bad;
  if (!(job->made_ones = calloc(job->dirs.n ? job->dirs.n : 1, sizeof *job->made_ones))) goto bad;
  return queue_on_pool(env, "rq-blanks", run, done, job, &job->work, &job->deferred);
bad:
  // A list not read is left empty, so freeing all three frees exactly what was copied.
  if (job) {
    free_strings(&job->dirs);
    free_strings(&job->subdirs);
    free_strings(&job->files);
    free(job->made_ones);
  }
  free(job);
  napi_throw_type_error(env, "RQ_ERR_BLANKS", "makeBlanks: expected (dirs, subdirs, files, keepOpen): three arrays of strings and a boolean");
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "makeBlanks", NAPI_AUTO_LENGTH, js_make_blanks, NULL, &fn);
  napi_set_named_property(env, exports, "makeBlanks", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
