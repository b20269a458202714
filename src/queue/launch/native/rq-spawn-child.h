// The child's side of rq-spawn.c: what a script's process does between vfork (or clone3 into its run cgroup) and exec.
#ifndef RQ_SPAWN_CHILD_H
#define RQ_SPAWN_CHILD_H
#include <stdint.h>
#include <sys/types.h>

#define MAX_FDS 8
#define MAX_JOINS 8

#if defined(__x86_64__) && defined(__linux__)
/* Where this build can start a child inside a cgroup (rq-spawn-child.c says why only there). */
#define RQ_INTO_CGROUP 1
#endif

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
  /** Set by the child first thing: a child the kernel killed before it ran any code leaves it 0. */
  volatile int ran;
} child_t;

/** The name of the step a failed child stopped at (child_t.stage), for the parent's error. */
const char *rq_child_stage(int stage);

/**
 * Starts the child: with vfork, or with clone3 into the cgroup directory `cgroup` when given; the
 * caller is blocked until the child's exec (or its failure, recorded in c->err and c->stage).
 * Returns the pid, or -1 with errno set (ENOSYS where this build cannot start into a cgroup).
 */
pid_t rq_start_child(child_t *c, const char *cgroup);

#endif
