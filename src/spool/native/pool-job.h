// The scaffolding every spool addon shares: a promise whose work runs once on libuv's thread pool.
#ifndef RQ_POOL_JOB_H
#define RQ_POOL_JOB_H
#include <node_api.h>

/**
 * Queues `run` (on a pool thread) then `done` (on the loop, which settles `*deferred` and deletes
 * `*work`) for `job`, and returns the promise `done` settles. `name` names the work for async hooks.
 */
static inline napi_value queue_on_pool(napi_env env, const char *name, napi_async_execute_callback run, napi_async_complete_callback done, void *job,
                                       napi_async_work *work, napi_deferred *deferred) {
  napi_value promise, resource;
  napi_create_promise(env, deferred, &promise);
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &resource);
  napi_create_async_work(env, NULL, resource, run, done, job, work);
  napi_queue_async_work(env, *work);
  return promise;
}

#endif
