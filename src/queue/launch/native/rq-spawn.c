// Native script spawner: vfork + exec with the child set up before exec, and exits seen through pidfds.
//
// Why: Node's spawn() forks the whole Node process (libuv uses fork, not vfork, on Linux), which
// blocks the queue's event loop 1-2 ms per script and grows with the heap; and Node has no
// pre-exec hook, so priority and the RQ START header needed a shell gate in front of every script.
// Here the child shares the parent's memory until exec (vfork, or clone3 into a run cgroup, below), so the parent is blocked only for
// the child's setup syscalls, and that setup does what the gate did: new session (own process
// group), nice, fds 0-4, cwd, the header with the script's own pid, default signal handling.
// Exits are watched by a uv_poll on a pidfd in Node's own loop: no thread, no SIGCHLD handler.
// This file is the JavaScript side; the child's side is rq-spawn-child.c, the exit watch rq-spawn-watch.c,
// the reader of fd 3 rq-spawn-read.c, the argv and environment rq-spawn-strings.c.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "rq-spawn-child.h"
#include "rq-spawn-read.h"
#include "rq-spawn-strings.h"
#include "rq-spawn-watch.h"

#define CHECK(call)                                                                                \
  do {                                                                                             \
    if ((call) != napi_ok) {                                                                       \
      napi_throw_error(env, "RQ_ERR_SPAWN", "rq-spawn: N-API call failed: " #call);               \
      return NULL;                                                                                 \
    }                                                                                              \
  } while (0)

/** Throws an Error saying `msg`, with code the errno name of `err` and errno -err, as Node's own errors have. */
static napi_value throw_coded(napi_env env, const char *msg, int err) {
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

static napi_value throw_errno(napi_env env, const char *what, int err) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  return throw_coded(env, msg, err);
}

/** A JS array of at most `max` int32s into out[] and *n; false (with an exception thrown) when it is not one. */
static bool get_ints(napi_env env, napi_value arr, int *out, uint32_t max, uint32_t *n, const char *too_many) {
  if (napi_get_array_length(env, arr, n) != napi_ok) {
    napi_throw_type_error(env, "RQ_ERR_SPAWN", "rq-spawn: expected an array of fds");
    return false;
  }
  if (*n > max) {
    napi_throw_range_error(env, "RQ_ERR_SPAWN", too_many);
    return false;
  }
  for (uint32_t i = 0; i < *n; i++) {
    napi_value el;
    if (napi_get_element(env, arr, i, &el) != napi_ok || napi_get_value_int32(env, el, &out[i]) != napi_ok) {
      napi_throw_type_error(env, "RQ_ERR_SPAWN", "rq-spawn: expected an array of fds");
      return false;
    }
  }
  return true;
}

/**
 * spawn(file, argv, envBlock, envp, cwd, fds, nice, headerBefore, headerAfter, fileSizeLimit, cgroup, joins, onExit) -> pid
 * The child's environment is envBlock's strings (an envBlock(), or null) followed by envp's.
 * fds[i] becomes fd i in the child. The child writes headerBefore + its pid + headerAfter to fd 1
 * (when headerAfter is a string) right before exec. A fileSizeLimit >= 0 becomes the child's soft
 * RLIMIT_FSIZE (capped by the hard one), set after the header, with SIGXFSZ ignored: a write past it
 * fails with EFBIG instead of killing the writer, and the setting is inherited across exec and fork.
 * cgroup (a cgroup v2 directory, or null) is where the child is created: it and all it forks are in
 * it from the start. joins are fds of cgroup v1 cgroup.procs files the child writes itself into before
 * anything else (the parent waits meanwhile: 0.2 ms for five hierarchies here). onExit(code,
 * signal, userUs, systemUs, maxRssKiB, inBlocks, outBlocks) runs once it has exited.
 */
static napi_value do_spawn(napi_env env, napi_callback_info info) {
  size_t argc = 13;
  napi_value args[13];
  CHECK(napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc != 13) {
    napi_throw_type_error(env, "RQ_ERR_SPAWN", "rq-spawn: spawn takes 13 arguments");
    return NULL;
  }
  child_t c;
  memset(&c, 0, sizeof c);
  if (!get_ints(env, args[5], c.fds, MAX_FDS, &c.nfds, "rq-spawn: too many fds")) return NULL;
  if (!get_ints(env, args[11], c.joins, MAX_JOINS, &c.njoins, "rq-spawn: too many cgroups to join")) return NULL;
  CHECK(napi_get_value_int32(env, args[6], &c.nice_value));
  napi_valuetype header_type, cgroup_type;
  CHECK(napi_typeof(env, args[8], &header_type));
  CHECK(napi_get_value_int64(env, args[9], &c.fsize_limit));
  CHECK(napi_typeof(env, args[10], &cgroup_type));

  char *file = rq_dup_string(env, args[0]);
  char *cwd = rq_dup_string(env, args[4]);
  char **argv = rq_dup_strings(env, args[1]);
  char **own = rq_dup_strings(env, args[3]);
  char **envp = rq_env_join(env, args[2], own);
  char *before = header_type == napi_string ? rq_dup_string(env, args[7]) : NULL;
  char *after = header_type == napi_string ? rq_dup_string(env, args[8]) : NULL;
  char *cgroup = cgroup_type == napi_string ? rq_dup_string(env, args[10]) : NULL;
  char *header = NULL;
  size_t before_len = before ? strlen(before) : 0, after_len = after ? strlen(after) : 0;
  if (after) header = malloc(before_len + 24 + after_len);
  napi_value result = NULL;
  if (!file || !cwd || !argv || !envp || (header_type == napi_string && (!before || !after || !header)) || (cgroup_type == napi_string && !cgroup)) {
    napi_throw_error(env, "RQ_ERR_SPAWN", "rq-spawn: arguments must be strings (file, cwd, argv, envp, header, cgroup) and an envBlock or null");
    goto out;
  }
#ifndef RQ_INTO_CGROUP
  if (cgroup) {
    napi_throw_error(env, "ENOSYS", "rq-spawn: starting a script in a cgroup is built for x86-64 only");
    goto out;
  }
#endif
  if (header) memcpy(header, before, before_len);
  c.file = file;
  c.argv = argv;
  c.envp = envp;
  c.cwd = cwd;
  c.header = header;
  c.before_len = before_len;
  c.after = after;
  c.after_len = after_len;

  sigset_t all, old;
  sigfillset(&all);
  // Blocked across vfork so no handler of the parent runs on the shared stack in the child.
  pthread_sigmask(SIG_BLOCK, &all, &old);
  pid_t pid = rq_start_child(&c, cgroup);
  int start_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (pid < 0) {
    throw_errno(env, cgroup ? "rq-spawn: clone3 into the run cgroup" : "rq-spawn: vfork", start_errno);
    goto out;
  }
  if (!c.ran) {
    // Killed before its first instruction: a cgroup.kill of the cgroup it was started into, on kernels that
    // kill a process started into a cgroup once killed that way (CLONE_INTO_CGROUP), or a SIGKILL at its birth.
    // Nothing of the script ran: a refusal the message waits out in the que (EAGAIN), and its cgroup is removed.
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    throw_coded(env, "rq-spawn: the script's process was killed before it ran (its run cgroup was killed through cgroup.kill, or it got a SIGKILL at its birth)", EAGAIN);
    goto out;
  }
  if (c.err) {
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    char what[64];
    snprintf(what, sizeof what, "rq-spawn: %s", rq_child_stage(c.stage));
    throw_errno(env, what, c.err);
    goto out;
  }

  int watch_err = rq_watch_exit(env, pid, args[12]);
  if (watch_err) {
    // Cannot watch it: do not leave an unobserved script behind.
    kill(-pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    throw_errno(env, "rq-spawn: watching the child", watch_err);
    goto out;
  }
  napi_create_int32(env, pid, &result);

out:
  free(file);
  free(cwd);
  rq_free_strings(argv);
  rq_free_strings(own);
  free(envp);
  free(before);
  free(after);
  free(cgroup);
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

/* Bumped when the functions below or spawn()'s arguments change, so rq can tell a stale build (native-launcher.ts ADDON_ABI). */
#define RQ_SPAWN_ABI 7

static napi_value init(napi_env env, napi_value exports) {
  napi_value abi;
  if (napi_create_int32(env, RQ_SPAWN_ABI, &abi) != napi_ok) return NULL;
  napi_property_descriptor props[] = {
      {"spawn", NULL, do_spawn, NULL, NULL, NULL, napi_default, NULL},
      {"pipe", NULL, do_pipe, NULL, NULL, NULL, napi_default, NULL},
      {"envBlock", NULL, rq_env_block, NULL, NULL, NULL, napi_default, NULL},
      {"usable", NULL, do_usable, NULL, NULL, NULL, napi_default, NULL},
      {"readPipe", NULL, rq_read_pipe, NULL, NULL, NULL, napi_default, NULL},
      {"closePipe", NULL, rq_close_pipe, NULL, NULL, NULL, napi_default, NULL},
      {"abi", NULL, NULL, NULL, NULL, abi, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
