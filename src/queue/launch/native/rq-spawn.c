// Native script spawner: vfork + exec with the child set up before exec, and exits seen through pidfds.
//
// Why: Node's spawn() forks the whole Node process (libuv uses fork, not vfork, on Linux), which
// blocks the queue's event loop 1-2 ms per script and grows with the heap; and Node has no
// pre-exec hook, so priority and the RQ START header needed a shell gate in front of every script.
// Here the child shares the parent's memory until exec (vfork, or clone3 into a run cgroup, below), so the parent is blocked only for
// the child's setup syscalls, and that setup does what the gate did: new session (own process
// group), nice, fds 0-4, cwd, the header with the script's own pid, default signal handling.
// Exits are watched by a uv_poll on a pidfd in Node's own loop: no thread, no SIGCHLD handler.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
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
static const char *const STAGES[] = {"", "setsid", "setpriority", "dup fds", "chdir", "write header", "limit file size", "exec", "join cgroup"};
#define MAX_JOINS 8

/** What the child does between vfork (or clone3) and exec; it shares this memory with the blocked parent. */
typedef struct {
  const char *file;
  char **argv;
  char **envp;
  const char *cwd;
  int fds[MAX_FDS];
  uint32_t nfds;
  int nice_value;
  /** headerBefore, room for the pid, then headerAfter (NULL: no header). */
  char *header;
  size_t before_len;
  const char *after;
  size_t after_len;
  int64_t fsize_limit;
  /** cgroup.procs files of cgroup v1 hierarchies (the run's limits) the child writes itself into first. */
  int joins[MAX_JOINS];
  uint32_t njoins;
  /** Set by the child when a step failed: errno and which step (STAGES). */
  volatile int err;
  volatile int stage;
} child_t;

/** The child: set up, then exec; on failure it records why and exits 127. Never returns. */
static int child_main(void *arg) {
  child_t *c = arg;
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; s++) sigaction(s, &dfl, NULL);  // Node ignores SIGPIPE; scripts must not.
  // First, so the limits hold from the script's first instruction ("0": the writing process itself).
  int stage = 8;
  for (uint32_t i = 0; i < c->njoins; i++)
    if (write(c->joins[i], "0", 1) != 1) goto fail;
  stage = 1;
  if (setsid() < 0) goto fail;
  stage = 3;
  int high[MAX_FDS];
  // Lift every source above the targets first, so a source that is also a target is not clobbered.
  for (uint32_t i = 0; i < c->nfds; i++)
    if ((high[i] = fcntl(c->fds[i], F_DUPFD_CLOEXEC, (int)c->nfds)) < 0) goto fail;
  for (uint32_t i = 0; i < c->nfds; i++)
    if (dup2(high[i], (int)i) < 0) goto fail;
  stage = 4;
  if (chdir(c->cwd) < 0) goto fail;
  stage = 5;
  if (c->header) {
    char *header = c->header;
    size_t len = c->before_len + put_uint(header + c->before_len, (unsigned long)getpid());
    memcpy(header + len, c->after, c->after_len);
    len += c->after_len;
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
  if (c->fsize_limit >= 0) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) < 0) goto fail;
    if (rl.rlim_max == RLIM_INFINITY || (rlim_t)c->fsize_limit < rl.rlim_max) rl.rlim_cur = (rlim_t)c->fsize_limit;
    else rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_FSIZE, &rl) < 0) goto fail;
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    if (sigaction(SIGXFSZ, &ign, NULL) < 0) goto fail;
  }
  // Niced last: the parent is blocked until the exec, and a child at nice 19 among busy scripts and
  // other work gets the CPU last, so every step before this one would hold the queue that long.
  stage = 2;
  if (c->nice_value != 0 && setpriority(PRIO_PROCESS, 0, c->nice_value) < 0) goto fail;
  stage = 7;
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  execve(c->file, c->argv, c->envp);
fail:
  c->err = errno;
  c->stage = stage;
  _exit(127);
}

/*
 * Starting the child inside a cgroup (the script's run cgroup, so nothing it forks can leave it):
 * clone3 with CLONE_INTO_CGROUP puts it there as it is created. Moving it afterwards by writing to
 * cgroup.procs from the child would block the parent, which waits for the exec, for an RCU grace
 * period (~12 ms measured on Linux 6.18, every time once starts are a second apart); clone3 costs
 * about what vfork does (0.1-0.7 ms more, the kernel's cgroup lock). glibc has no clone3 wrapper that runs a function on a new stack, so this is the
 * few instructions its own clone3.S has, for x86-64 only: elsewhere spawn() refuses a cgroup and the
 * queue ends leftovers through the process group (run-cgroups.ts probes this at start).
 */
#if defined(__x86_64__) && defined(__linux__)
#define RQ_INTO_CGROUP 1
/** struct clone_args up to `cgroup` (CLONE_ARGS_SIZE_VER2), spelled out so older kernel headers build it. */
struct rq_clone_args {
  uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};
#define RQ_CLONE_INTO_CGROUP 0x200000000ULL
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
/** clone3(args); the child runs fn(arg) on args->stack and exits with its result. Returns what clone3 does (-errno on failure). */
static long clone3_run(struct rq_clone_args *args, int (*fn)(void *), void *arg) {
  register long ret __asm__("rax") = SYS_clone3;
  register struct rq_clone_args *a1 __asm__("rdi") = args;
  register long a2 __asm__("rsi") = sizeof *args;
  register int (*f)(void *) __asm__("r12") = fn;
  register void *x __asm__("r13") = arg;
  __asm__ volatile(
      "syscall\n\t"
      "test %%rax, %%rax\n\t"
      "jnz 1f\n\t"
      // The child, on its own stack: no frame above it, fn(arg), then exit(2) with its result.
      "xor %%ebp, %%ebp\n\t"
      "mov %%r13, %%rdi\n\t"
      "call *%%r12\n\t"
      "mov %%eax, %%edi\n\t"
      "mov $60, %%eax\n\t"
      "syscall\n\t"
      "hlt\n"
      "1:\n"
      : "+r"(ret)
      : "r"(a1), "r"(a2), "r"(f), "r"(x)
      : "rcx", "r11", "memory", "cc");
  return ret;
}
/** The child's stack for clone3: it runs until exec while the parent waits (CLONE_VFORK). */
#define CHILD_STACK (64 * 1024)
#endif

/**
 * Starts child_main(c): with vfork, or with clone3 into the cgroup directory `cgroup` when given.
 * Returns the pid, or -1 with errno set (ENOSYS where this build cannot start into a cgroup).
 */
static pid_t start_child(child_t *c, const char *cgroup) {
  if (!cgroup) {
    pid_t pid = vfork();
    if (pid == 0) child_main(c);
    return pid;
  }
#ifdef RQ_INTO_CGROUP
  int dir = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  // A guard page below the stack: an overflow faults instead of writing over the parent's memory.
  char *stack = mmap(NULL, CHILD_STACK + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    int err = errno;
    close(dir);
    errno = err;
    return -1;
  }
  mprotect(stack, 4096, PROT_NONE);
  struct rq_clone_args args;
  memset(&args, 0, sizeof args);
  args.flags = CLONE_VM | CLONE_VFORK | RQ_CLONE_INTO_CGROUP;
  args.exit_signal = SIGCHLD;
  args.stack = (uint64_t)(uintptr_t)(stack + 4096);
  args.stack_size = CHILD_STACK;
  args.cgroup = (uint64_t)dir;
  long r = clone3_run(&args, child_main, c);
  munmap(stack, CHILD_STACK + 4096);
  close(dir);
  if (r < 0) {
    errno = (int)-r;
    return -1;
  }
  return (pid_t)r;
#else
  errno = ENOSYS;  // Refused by do_spawn before it gets here.
  return -1;
#endif
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
 * spawn(file, argv, envp, cwd, fds, nice, headerBefore, headerAfter, fileSizeLimit, cgroup, joins, onExit) -> pid
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
  size_t argc = 12;
  napi_value args[12];
  CHECK(napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc != 12) {
    napi_throw_type_error(env, "RQ_ERR_SPAWN", "rq-spawn: spawn takes 12 arguments");
    return NULL;
  }
  child_t c;
  memset(&c, 0, sizeof c);
  if (!get_ints(env, args[4], c.fds, MAX_FDS, &c.nfds, "rq-spawn: too many fds")) return NULL;
  if (!get_ints(env, args[10], c.joins, MAX_JOINS, &c.njoins, "rq-spawn: too many cgroups to join")) return NULL;
  CHECK(napi_get_value_int32(env, args[5], &c.nice_value));
  napi_valuetype header_type, cgroup_type;
  CHECK(napi_typeof(env, args[7], &header_type));
  CHECK(napi_get_value_int64(env, args[8], &c.fsize_limit));
  CHECK(napi_typeof(env, args[9], &cgroup_type));

  char *file = dup_string(env, args[0]);
  char *cwd = dup_string(env, args[3]);
  char **argv = dup_strings(env, args[1]);
  char **envp = dup_strings(env, args[2]);
  char *before = header_type == napi_string ? dup_string(env, args[6]) : NULL;
  char *after = header_type == napi_string ? dup_string(env, args[7]) : NULL;
  char *cgroup = cgroup_type == napi_string ? dup_string(env, args[9]) : NULL;
  char *header = NULL;
  size_t before_len = before ? strlen(before) : 0, after_len = after ? strlen(after) : 0;
  if (after) header = malloc(before_len + 24 + after_len);
  napi_value result = NULL;
  if (!file || !cwd || !argv || !envp || (header_type == napi_string && (!before || !after || !header)) || (cgroup_type == napi_string && !cgroup)) {
    napi_throw_error(env, "RQ_ERR_SPAWN", "rq-spawn: arguments must be strings (file, cwd, argv, envp, header, cgroup)");
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
  pid_t pid = start_child(&c, cgroup);
  int start_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (pid < 0) {
    throw_errno(env, cgroup ? "rq-spawn: clone3 into the run cgroup" : "rq-spawn: vfork", start_errno);
    goto out;
  }
  if (c.err) {
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    char what[64];
    snprintf(what, sizeof what, "rq-spawn: %s", STAGES[c.stage]);
    throw_errno(env, what, c.err);
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
  napi_create_reference(env, args[11], 1, &w->callback);
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

/* Bumped when spawn()'s arguments change, so rq can tell a stale build (native-launcher.ts ADDON_ABI). */
#define RQ_SPAWN_ABI 5

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
