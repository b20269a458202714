// Exits of rq-spawn.c's children, seen through pidfds: a uv_poll in Node's own loop (no thread, no SIGCHLD handler), the reap's rusage handed to the callback.
#ifndef RQ_SPAWN_WATCH_H
#define RQ_SPAWN_WATCH_H
#include <node_api.h>
#include <sys/types.h>

/**
 * Calls onExit(code, signal, userUs, systemUs, maxRssKiB, inBlocks, outBlocks) once the child pid
 * has exited and been reaped. Returns 0, or an errno when it cannot watch (the caller must then end
 * the child itself: nothing else will reap it).
 */
int rq_watch_exit(napi_env env, pid_t pid, napi_value on_exit);

#endif
