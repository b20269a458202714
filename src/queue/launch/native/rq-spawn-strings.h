// JS strings into the C vectors a spawn passes to execve: argv, and an environment whose shared part is converted once.
#ifndef RQ_SPAWN_STRINGS_H
#define RQ_SPAWN_STRINGS_H
#include <node_api.h>

/** A JS string as a malloc'd C string (NULL on failure). */
char *rq_dup_string(napi_env env, napi_value v);

/** A JS string array as a NULL-terminated malloc'd vector of malloc'd strings (NULL on failure). */
char **rq_dup_strings(napi_env env, napi_value arr);

/** Frees what rq_dup_strings made (NULL is nothing). */
void rq_free_strings(char **v);

/** envBlock(entries) -> an external holding `entries` as C strings, for spawn() to put before a run's own. */
napi_value rq_env_block(napi_env env, napi_callback_info info);

/**
 * The environment for execve: `block`'s strings (an envBlock, or null for none) followed by `own`'s,
 * as one malloc'd NULL-terminated vector that owns none of them (free() it alone); NULL when `block`
 * is neither null nor an envBlock, or on failure.
 */
char **rq_env_join(napi_env env, napi_value block, char **own);

#endif
