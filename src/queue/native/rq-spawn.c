// Native script spawner: vfork + exec with the child set up before exec, and exits seen through pidfds.
//
// Why: Node's spawn() forks the whole Node process (libuv uses fork, not vfork, on Linux), which
// blocks the queue's event loop 1-2 ms per script and grows with the heap; and Node has no
// pre-exec hook, so priority and the RQ START header needed a shell gate in front of every script.
// Here the child shares the parent's memory until exec (vfork), so the parent is blocked only for
// the child's setup syscalls, and that setup does what the gate did: new session (own process
// group), nice, fds 0-4, cwd, the header with the script's own pid, default signal handling.
// Exits are watched by a uv_poll on a pidfd in Node's own loop: no thread, no SIGCHLD handler.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#define MAX_FDS 8

#define CHECK(call)                                                                                \
  do {                                                                                             \
    if ((call) != napi_ok) {                                                                       \
      napi_throw_error(env, "RQ_ERR_SPAWN", "rq-spawn: N-API call failed: " #call);               \
      return NULL;                                                                                 \
    }                                                                                              \
  } while (0)

static napi_value throw_errno(napi_env env, const char *what, int err) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  napi_value code, text, error;
  // libuv's name, not glibc's strerrorname_np (2.32+ only: RHEL 8, Ubuntu 20.04 and musl lack it).
  napi_create_string_utf8(env, uv_err_name(-err), NAPI_AUTO_LENGTH, &code);
  napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &text);
  napi_create_error(env, code, text, &error);
  napi_value errnum;
  napi_create_int32(env, -err, &errnum);
  napi_set_named_property(env, error, "errno", errnum);
  napi_throw(env, error);
  return NULL;
}

/** A JS string as a malloc'd C string (NULL on failure). */
static char *dup_string(napi_env env, napi_value v) {
  size_t len;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) return NULL;
  char *s = malloc(len + 1);
  if (s && napi_get_value_string_utf8(env, v, s, len + 1, &len) != napi_ok) {
    free(s);
    return NULL;
  }
  return s;
}

/** A JS string array as a NULL-terminated malloc'd vector (NULL on failure). */
static char **dup_strings(napi_env env, napi_value arr) {
  uint32_t n;
  if (napi_get_array_length(env, arr, &n) != napi_ok) return NULL;
  char **v = calloc(n + 1, sizeof *v);
  if (!v) return NULL;
  for (uint32_t i = 0; i < n; i++) {
    napi_value el;
    if (napi_get_element(env, arr, i, &el) != napi_ok || !(v[i] = dup_string(env, el))) {
      for (uint32_t j = 0; j < i; j++) free(v[j]);
      free(v);
      return NULL;
    }
  }
  return v;
}

static void free_strings(char **v) {
  if (!v) return;
  for (char **p = v; *p; p++) free(*p);
  free(v);
}

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
  pid_t r;
  do r = waitpid(w->pid, &wstatus, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == 0 && status == 0) return;  // Spurious wake-up: still running.
  uv_poll_stop(poll);
  close(w->pidfd);
  napi_env env = w->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value cb, recv, argv[2];
  napi_get_reference_value(env, w->callback, &cb);
  napi_get_global(env, &recv);  // make_callback wants an object as `this`.
  // A pid nobody else could reap is gone only if waitpid failed: report it as killed by nothing.
  napi_create_int32(env, r > 0 && WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1, &argv[0]);
  napi_create_int32(env, r > 0 && WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0, &argv[1]);
  napi_value result;
  napi_make_callback(env, w->async, recv, cb, 2, argv, &result);
  napi_delete_reference(env, w->callback);
  napi_async_destroy(env, w->async);
  napi_close_handle_scope(env, scope);
  uv_close((uv_handle_t *)poll, watch_closed);
}

/** Decimal digits of n into buf (no libc formatting in the vfork child); returns the length. */
static size_t put_uint(char *buf, unsigned long n) {
  char tmp[24];
  size_t len = 0;
  do tmp[len++] = (char)('0' + n % 10);
  while ((n /= 10) != 0);
  for (size_t i = 0; i < len; i++) buf[i] = tmp[len - 1 - i];
  return len;
}

/* Where the child failed, written by the child into memory it shares with the blocked parent. */
static const char *const STAGES[] = {"", "setsid", "setpriority", "dup fds", "chdir", "write header", "limit file size", "exec"};

/**
 * spawn(file, argv, envp, cwd, fds, nice, headerBefore, headerAfter, fileSizeLimit, onExit) -> pid
 * fds[i] becomes fd i in the child. The child writes headerBefore + its pid + headerAfter to fd 1
 * (when headerAfter is a string) right before exec. A fileSizeLimit >= 0 becomes the child's soft
 * RLIMIT_FSIZE (capped by the hard one), set after the header, with SIGXFSZ ignored: a write past it
 * fails with EFBIG instead of killing the writer, and the setting is inherited across exec and fork.
 * onExit(code, signal) runs once it has exited.
 */
static napi_value do_spawn(napi_env env, napi_callback_info info) {
  size_t argc = 10;
  napi_value args[10];
  CHECK(napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc != 10) {
    napi_throw_type_error(env, "RQ_ERR_SPAWN", "rq-spawn: spawn takes 10 arguments");
    return NULL;
  }
  int fds[MAX_FDS];
  uint32_t nfds;
  CHECK(napi_get_array_length(env, args[4], &nfds));
  if (nfds > MAX_FDS) {
    napi_throw_range_error(env, "RQ_ERR_SPAWN", "rq-spawn: too many fds");
    return NULL;
  }
  for (uint32_t i = 0; i < nfds; i++) {
    napi_value el;
    CHECK(napi_get_element(env, args[4], i, &el));
    CHECK(napi_get_value_int32(env, el, &fds[i]));
  }
  int32_t nice_value;
  CHECK(napi_get_value_int32(env, args[5], &nice_value));
  napi_valuetype header_type;
  CHECK(napi_typeof(env, args[7], &header_type));
  int64_t fsize_limit;
  CHECK(napi_get_value_int64(env, args[8], &fsize_limit));

  char *file = dup_string(env, args[0]);
  char *cwd = dup_string(env, args[3]);
  char **argv = dup_strings(env, args[1]);
  char **envp = dup_strings(env, args[2]);
  char *before = header_type == napi_string ? dup_string(env, args[6]) : NULL;
  char *after = header_type == napi_string ? dup_string(env, args[7]) : NULL;
  char *header = NULL;
  size_t before_len = before ? strlen(before) : 0, after_len = after ? strlen(after) : 0;
  if (after) header = malloc(before_len + 24 + after_len);
  napi_value result = NULL;
  if (!file || !cwd || !argv || !envp || (header_type == napi_string && (!before || !after || !header))) {
    napi_throw_error(env, "RQ_ERR_SPAWN", "rq-spawn: arguments must be strings (file, cwd, argv, envp, header)");
    goto out;
  }
  if (header) memcpy(header, before, before_len);

  volatile int child_errno = 0;
  volatile int child_stage = 0;
  sigset_t all, old;
  sigfillset(&all);
  // Blocked across vfork so no handler of the parent runs on the shared stack in the child.
  pthread_sigmask(SIG_BLOCK, &all, &old);
  pid_t pid = vfork();
  if (pid == 0) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++) sigaction(s, &dfl, NULL);  // Node ignores SIGPIPE; scripts must not.
    int stage = 1;
    if (setsid() < 0) goto fail;
    stage = 2;
    if (nice_value != 0 && setpriority(PRIO_PROCESS, 0, nice_value) < 0) goto fail;
    stage = 3;
    int high[MAX_FDS];
    // Lift every source above the targets first, so a source that is also a target is not clobbered.
    for (uint32_t i = 0; i < nfds; i++)
      if ((high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, (int)nfds)) < 0) goto fail;
    for (uint32_t i = 0; i < nfds; i++)
      if (dup2(high[i], (int)i) < 0) goto fail;
    stage = 4;
    if (chdir(cwd) < 0) goto fail;
    stage = 5;
    if (header) {
      size_t len = before_len + put_uint(header + before_len, (unsigned long)getpid());
      memcpy(header + len, after, after_len);
      len += after_len;
      // The header is for people, like a history line: a full disk (or a log that cannot take it)
      // costs the header, not the run, as with the child_process gate's printf.
      for (size_t off = 0; off < len;) {
        ssize_t n = write(1, header + off, len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        off += (size_t)n;
      }
    }
    stage = 6;
    if (fsize_limit >= 0) {
      struct rlimit rl;
      if (getrlimit(RLIMIT_FSIZE, &rl) < 0) goto fail;
      if (rl.rlim_max == RLIM_INFINITY || (rlim_t)fsize_limit < rl.rlim_max) rl.rlim_cur = (rlim_t)fsize_limit;
      else rl.rlim_cur = rl.rlim_max;
      if (setrlimit(RLIMIT_FSIZE, &rl) < 0) goto fail;
      struct sigaction ign;
      memset(&ign, 0, sizeof ign);
      ign.sa_handler = SIG_IGN;
      if (sigaction(SIGXFSZ, &ign, NULL) < 0) goto fail;
    }
    stage = 7;
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(file, argv, envp);
  fail:
    child_errno = errno;
    child_stage = stage;
    _exit(127);
  }
  int vfork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (pid < 0) {
    throw_errno(env, "rq-spawn: vfork", vfork_errno);
    goto out;
  }
  if (child_errno) {
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    char what[64];
    snprintf(what, sizeof what, "rq-spawn: %s", STAGES[child_stage]);
    throw_errno(env, what, child_errno);
    goto out;
  }

  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  watch_t *w = calloc(1, sizeof *w);
  uv_loop_t *loop;
  if (pidfd < 0 || !w || napi_get_uv_event_loop(env, &loop) != napi_ok || uv_poll_init(loop, &w->poll, pidfd) != 0) {
    // Cannot watch it: do not leave an unobserved script behind.
    int err = pidfd < 0 ? errno : ENOMEM;
    kill(-pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    if (pidfd >= 0) close(pidfd);
    free(w);
    throw_errno(env, "rq-spawn: watching the child", err);
    goto out;
  }
  w->poll.data = w;
  w->env = env;
  w->pid = pid;
  w->pidfd = pidfd;
  napi_value resource_name;
  napi_create_string_utf8(env, "rq-spawn", NAPI_AUTO_LENGTH, &resource_name);
  napi_create_reference(env, args[9], 1, &w->callback);
  napi_async_init(env, NULL, resource_name, &w->async);
  uv_poll_start(&w->poll, UV_READABLE, on_pidfd);
  napi_create_int32(env, pid, &result);

out:
  free(file);
  free(cwd);
  free_strings(argv);
  free_strings(envp);
  free(before);
  free(after);
  free(header);
  return result;
}

/** pipe() -> [readFd, writeFd], both close-on-exec (the spawn dups the child's end into place). */
static napi_value do_pipe(napi_env env, napi_callback_info info) {
  (void)info;
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) return throw_errno(env, "rq-spawn: pipe", errno);
  napi_value arr, r, w;
  CHECK(napi_create_array_with_length(env, 2, &arr));
  CHECK(napi_create_int32(env, p[0], &r));
  CHECK(napi_create_int32(env, p[1], &w));
  CHECK(napi_set_element(env, arr, 0, r));
  CHECK(napi_set_element(env, arr, 1, w));
  return arr;
}

/** usable() -> null when this kernel can watch exits through pidfds (Linux 5.3+), else why not. */
static napi_value do_usable(napi_env env, napi_callback_info info) {
  (void)info;
  int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  napi_value result;
  if (fd >= 0) {
    close(fd);
    napi_get_null(env, &result);
    return result;
  }
  char msg[128];
  snprintf(msg, sizeof msg, "pidfd_open: %s", strerror(errno));
  napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &result);
  return result;
}

/* Bumped when spawn()'s arguments change, so rq can tell a stale build (native-launcher.ts ADDON_ABI). */
#define RQ_SPAWN_ABI 2

static napi_value init(napi_env env, napi_value exports) {
  napi_value abi;
  if (napi_create_int32(env, RQ_SPAWN_ABI, &abi) != napi_ok) return NULL;
  napi_property_descriptor props[] = {
      {"spawn", NULL, do_spawn, NULL, NULL, NULL, napi_default, NULL},
      {"pipe", NULL, do_pipe, NULL, NULL, NULL, napi_default, NULL},
      {"usable", NULL, do_usable, NULL, NULL, NULL, napi_default, NULL},
      {"abi", NULL, NULL, NULL, NULL, abi, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, 4, props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
