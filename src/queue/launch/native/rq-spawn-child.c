// A script's process from vfork (or clone3 into its run cgroup) to exec: signals reset, cgroup v1 joins, session, fds 0-4, cwd, the RQ START header, RLIMIT_FSIZE, nice.
//
// It runs in the parent's memory while the parent waits, so it calls only async-signal-safe
// functions and writes what failed into the child_t the parent reads.
#define _GNU_SOURCE
#include "rq-spawn-child.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

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

const char *rq_child_stage(int stage) { return STAGES[stage]; }

/** The child: set up, then exec; on failure it records why and exits 127. Never returns. */
static int child_main(void *arg) {
  child_t *c = arg;
  c->ran = 1;
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
#ifdef RQ_INTO_CGROUP
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

/**
 * Made once and kept: a start maps nothing and unmaps nothing (an munmap in a process with threads
 * on other cores costs a TLB shootdown; mapping and unmapping took 20-30 µs a start here). Each thread
 * keeps one for its starts: a thread starts one child at a time, and each child is off the stack
 * (exec'd or exited) when clone3 returns.
 */
static __thread char *child_stack;

/** The stack's lowest usable address, above a guard page (an overflow faults instead of writing over the parent's memory); NULL with errno set. */
static char *stack_base(void) {
  if (!child_stack) {
    char *s = mmap(NULL, CHILD_STACK + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (s == MAP_FAILED) return NULL;
    mprotect(s, 4096, PROT_NONE);
    child_stack = s;
  }
  return child_stack + 4096;
}
#endif

pid_t rq_start_child(child_t *c, const char *cgroup) {
  if (!cgroup) {
    pid_t pid = vfork();
    if (pid == 0) child_main(c);
    return pid;
  }
#ifdef RQ_INTO_CGROUP
  int dir = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  char *stack = stack_base();
  if (!stack) {
    int err = errno;
    close(dir);
    errno = err;
    return -1;
  }
  struct rq_clone_args args;
  memset(&args, 0, sizeof args);
  args.flags = CLONE_VM | CLONE_VFORK | RQ_CLONE_INTO_CGROUP;
  args.exit_signal = SIGCHLD;
  args.stack = (uint64_t)(uintptr_t)stack;
  args.stack_size = CHILD_STACK;
  args.cgroup = (uint64_t)dir;
  long r = clone3_run(&args, child_main, c);
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
