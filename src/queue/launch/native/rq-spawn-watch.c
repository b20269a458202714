// Exits of rq-spawn.c's children, seen through pidfds: a uv_poll in Node's own loop, reaped with wait4 for their rusage.
#define _GNU_SOURCE
#include "rq-spawn-watch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

typedef struct {
  uv_poll_t poll;
  napi_env env;
  napi_ref callback;
  napi_async_context async;
  pid_t pid;
  int pidfd;
} watch_t;

static void watch_closed(uv_handle_t *h) { free(h->data); }

static void on_pidfd(uv_poll_t *poll, int status, int events) {
  watch_t *w = poll->data;
  int wstatus = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  pid_t r;
  // wait4, not waitpid: the run's CPU time and peak memory come with the reap, for free (rusage.ts).
  do r = wait4(w->pid, &wstatus, WNOHANG, &ru);
  while (r < 0 && errno == EINTR);
  if (r == 0 && status == 0) return;  // Spurious wake-up: still running.
  uv_poll_stop(poll);
  close(w->pidfd);
  napi_env env = w->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value cb, recv, argv[7];
  napi_get_reference_value(env, w->callback, &cb);
  napi_get_global(env, &recv);  // make_callback wants an object as `this`.
  // A pid nobody else could reap is gone only if waitpid failed: report it as killed by nothing.
  napi_create_int32(env, r > 0 && WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1, &argv[0]);
  napi_create_int32(env, r > 0 && WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0, &argv[1]);
  // The script's and its reaped descendants' user and system time (µs) and the largest one's peak RSS (KiB).
  napi_create_double(env, (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec, &argv[2]);
  napi_create_double(env, (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec, &argv[3]);
  napi_create_double(env, (double)ru.ru_maxrss, &argv[4]);
  // Blocks of 512 bytes read from and written to storage (written: counted as pages are dirtied).
  napi_create_double(env, (double)ru.ru_inblock, &argv[5]);
  napi_create_double(env, (double)ru.ru_oublock, &argv[6]);
  napi_value result;
  napi_make_callback(env, w->async, recv, cb, 7, argv, &result);
  napi_delete_reference(env, w->callback);
  napi_async_destroy(env, w->async);
  napi_close_handle_scope(env, scope);
  uv_close((uv_handle_t *)poll, watch_closed);
}

int rq_watch_exit(napi_env env, pid_t pid, napi_value on_exit) {
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0) return errno;
  watch_t *w = calloc(1, sizeof *w);
  uv_loop_t *loop;
  if (!w || napi_get_uv_event_loop(env, &loop) != napi_ok || uv_poll_init(loop, &w->poll, pidfd) != 0) {
    close(pidfd);
    free(w);
    return ENOMEM;
  }
  w->poll.data = w;
  w->env = env;
  w->pid = pid;
  w->pidfd = pidfd;
  napi_value resource_name;
  napi_create_string_utf8(env, "rq-spawn", NAPI_AUTO_LENGTH, &resource_name);
  napi_create_reference(env, on_exit, 1, &w->callback);
  napi_async_init(env, NULL, resource_name, &w->async);
  uv_poll_start(&w->poll, UV_READABLE, on_pidfd);
  return 0;
}
