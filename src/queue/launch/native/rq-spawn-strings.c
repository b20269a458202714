// JS strings into the C vectors a spawn passes to execve: argv, and an environment whose shared part is converted once.
//
// Why: a queue's scripts share a hundred or more variables (the daemon's environment and the
// queue's env_vars). Converting them from JS strings at every start cost ~35 µs of the queue's
// thread before each spawn; an envBlock holds them converted for as long as the queue keeps that
// environment, and a start converts only its own ~25.
#include "rq-spawn-strings.h"

#include <stdlib.h>
#include <string.h>

char *rq_dup_string(napi_env env, napi_value v) {
  size_t len;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) return NULL;
  char *s = malloc(len + 1);
  if (s && napi_get_value_string_utf8(env, v, s, len + 1, &len) != napi_ok) {
    free(s);
    return NULL;
  }
  return s;
}

char **rq_dup_strings(napi_env env, napi_value arr) {
  uint32_t n;
  if (napi_get_array_length(env, arr, &n) != napi_ok) return NULL;
  char **v = calloc(n + 1, sizeof *v);
  if (!v) return NULL;
  for (uint32_t i = 0; i < n; i++) {
    napi_value el;
    if (napi_get_element(env, arr, i, &el) != napi_ok || !(v[i] = rq_dup_string(env, el))) {
      for (uint32_t j = 0; j < i; j++) free(v[j]);
      free(v);
      return NULL;
    }
  }
  return v;
}

void rq_free_strings(char **v) {
  if (!v) return;
  for (char **p = v; *p; p++) free(*p);
  free(v);
}

/** An envBlock's strings: counted, NULL-terminated. */
typedef struct {
  char **strings;
  size_t n;
} env_block_t;

/** Tags envBlocks, so spawn() takes no other external for one. */
static const napi_type_tag ENV_BLOCK_TAG = {0x7271656e76626c6bULL, 0x72712d737061776eULL};

static void free_block(napi_env env, void *data, void *hint) {
  env_block_t *b = data;
  rq_free_strings(b->strings);
  free(b);
}

napi_value rq_env_block(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg, result = NULL;
  bool is_array = false;
  if (napi_get_cb_info(env, info, &argc, &arg, NULL, NULL) != napi_ok || argc != 1 || napi_is_array(env, arg, &is_array) != napi_ok || !is_array) {
    napi_throw_type_error(env, "RQ_ERR_SPAWN", "rq-spawn: envBlock takes an array of strings");
    return NULL;
  }
  env_block_t *b = malloc(sizeof *b);
  if (!b || !(b->strings = rq_dup_strings(env, arg))) {
    free(b);
    napi_throw_error(env, "RQ_ERR_SPAWN", "rq-spawn: envBlock takes an array of strings");
    return NULL;
  }
  for (b->n = 0; b->strings[b->n]; b->n++) {
  }
  if (napi_create_external(env, b, free_block, NULL, &result) != napi_ok || napi_type_tag_object(env, result, &ENV_BLOCK_TAG) != napi_ok) {
    if (!result) free_block(env, b, NULL);
    napi_throw_error(env, "RQ_ERR_SPAWN", "rq-spawn: envBlock could not be made");
    return NULL;
  }
  return result;
}

char **rq_env_join(napi_env env, napi_value block, char **own) {
  napi_valuetype type;
  if (!own || napi_typeof(env, block, &type) != napi_ok) return NULL;
  env_block_t *b = NULL;
  if (type != napi_null) {
    bool tagged = false;
    if (type != napi_external || napi_check_object_type_tag(env, block, &ENV_BLOCK_TAG, &tagged) != napi_ok || !tagged) return NULL;
    if (napi_get_value_external(env, block, (void **)&b) != napi_ok) return NULL;
  }
  size_t shared = b ? b->n : 0, n = 0;
  while (own[n]) n++;
  char **v = malloc((shared + n + 1) * sizeof *v);
  if (!v) return NULL;
  if (shared) memcpy(v, b->strings, shared * sizeof *v);
  memcpy(v + shared, own, (n + 1) * sizeof *v);
  return v;
}
