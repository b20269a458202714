// rq's end of a script's fd 3 read in Node's own loop: a uv_poll on the pipe, each read handed to JavaScript as a Buffer.
//
// Why not a net.Socket on the fd: most scripts write one line and exit, and the socket's
// construction, stream state and teardown cost the queue's main thread ~90 µs a run
// (bench/drain-cpu.ts), more than the reads themselves. One read per wake-up of at most
// READ_BYTES: the poll is level-triggered, so a script writing flat out is read a chunk per turn
// of the loop and cannot hold the queue's other work.
#include "rq-spawn-read.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include <uv.h>

#define READ_BYTES 65536

typedef struct {
  uv_poll_t poll;
  napi_env env;
  napi_ref callback;
  napi_async_context async;
  int fd;
  /** Held by the JavaScript handle and by the open poll: freed when both are gone. */
  int refs;
  bool open;
  /** Inside onChunk: a closePipe() then stops reading at once, and lets go once onChunk returns. */
  bool calling;
} reader_t;

static void release(reader_t *r) {
  if (--r->refs == 0) free(r);
}

static void on_closed(uv_handle_t *h) { release(h->data); }

static void finalize(napi_env env, void *data, void *hint) { release(data); }

/** Stops the poll before the fd is closed (libuv's rule); allowed inside onChunk. */
static void stop_reading(reader_t *r) {
  r->open = false;
  uv_poll_stop(&r->poll);
  close(r->fd);
}

/** Lets go of the callback and the handle: not inside onChunk, whose call still holds them. */
static void let_go(reader_t *r) {
  napi_delete_reference(r->env, r->callback);
  napi_async_destroy(r->env, r->async);
  uv_close((uv_handle_t *)&r->poll, on_closed);
}

static void on_readable(uv_poll_t *poll, int status, int events) {
  reader_t *r = poll->data;
  char buf[READ_BYTES];
  ssize_t n = -1;
  if (status == 0) {
    do n = read(r->fd, buf, sizeof buf);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // Woken with nothing to read.
  }
  // Closed before onChunk(null): what it resolves runs before this returns, and may count the fds.
  if (n <= 0) stop_reading(r);
  napi_env env = r->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value cb, recv, arg, result;
  napi_get_reference_value(env, r->callback, &cb);
  napi_get_global(env, &recv);
  if (n > 0) napi_create_buffer_copy(env, (size_t)n, buf, NULL, &arg);
  else napi_get_null(env, &arg);
  r->calling = true;
  if (napi_make_callback(env, r->async, recv, cb, 1, &arg, &result) == napi_pending_exception) {
    // Thrown by onChunk: the process's uncaughtException, as a throw in a stream's listener would be.
    napi_value err;
    napi_get_and_clear_last_exception(env, &err);
    napi_fatal_exception(env, err);
  }
  r->calling = false;
  if (!r->open) let_go(r);
  napi_close_handle_scope(env, scope);
}

napi_value rq_read_pipe(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value args[2];
  int fd;
  napi_valuetype cb_type;
  if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) != napi_ok || argc != 2 || napi_get_value_int32(env, args[0], &fd) != napi_ok ||
      napi_typeof(env, args[1], &cb_type) != napi_ok || cb_type != napi_function) {
    napi_throw_type_error(env, "RQ_ERR_SPAWN", "rq-spawn: readPipe takes an fd and a function");
    return NULL;
  }
  uv_loop_t *loop;
  reader_t *r = calloc(1, sizeof *r);
  int err = !r || napi_get_uv_event_loop(env, &loop) != napi_ok ? UV_ENOMEM : uv_poll_init(loop, &r->poll, fd);
  if (err) {
    // The fd stays the caller's to close.
    free(r);
    napi_throw_error(env, uv_err_name(err), "rq-spawn: cannot poll the pipe");
    return NULL;
  }
  r->poll.data = r;
  r->env = env;
  r->fd = fd;
  r->refs = 2;
  r->open = true;
  napi_value name, handle;
  napi_create_string_utf8(env, "rq-fd3", NAPI_AUTO_LENGTH, &name);
  napi_create_reference(env, args[1], 1, &r->callback);
  napi_async_init(env, NULL, name, &r->async);
  napi_create_external(env, r, finalize, NULL, &handle);
  uv_poll_start(&r->poll, UV_READABLE, on_readable);
  return handle;
}

napi_value rq_close_pipe(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg;
  reader_t *r;
  napi_valuetype type;
  if (napi_get_cb_info(env, info, &argc, &arg, NULL, NULL) != napi_ok || argc != 1 || napi_typeof(env, arg, &type) != napi_ok || type != napi_external ||
      napi_get_value_external(env, arg, (void **)&r) != napi_ok) {
    napi_throw_type_error(env, "RQ_ERR_SPAWN", "rq-spawn: closePipe takes what readPipe returned");
    return NULL;
  }
  if (!r->open) return NULL;
  stop_reading(r);
  if (!r->calling) let_go(r);
  return NULL;
}
