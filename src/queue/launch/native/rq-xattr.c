// getxattr(2) for a cgroup directory, synchronous: systemd marks a cgroup it delegates with trusted.delegate (user.delegate in a user's manager), which Node cannot read.
//
// Why: rq may divide a cgroup (move itself into a leaf, enable controllers below it) only where its
// manager gave that cgroup away; in a cgroup systemd still owns, both break systemd's own rules.
// One call at rq-mgr's start and one per queue start, on a kernel filesystem: no thread pool.
#define _GNU_SOURCE
#include <node_api.h>
#include <sys/xattr.h>

/** getxattr(path, name): the attribute's value as a string, or null when the file has none or it cannot be read. */
static napi_value js_getxattr(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], out;
  char path[4096], name[256], value[256];
  size_t len;
  napi_get_null(env, &out);
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 ||
      napi_get_value_string_utf8(env, argv[0], path, sizeof path, &len) != napi_ok ||
      napi_get_value_string_utf8(env, argv[1], name, sizeof name, &len) != napi_ok) {
    napi_throw_type_error(env, NULL, "getxattr(path, name): two strings expected");
    return NULL;
  }
  // A path or name cut short to fit would be another file's: it has no attribute rq reads.
  size_t pathLen, nameLen;
  napi_get_value_string_utf8(env, argv[0], NULL, 0, &pathLen);
  napi_get_value_string_utf8(env, argv[1], NULL, 0, &nameLen);
  if (pathLen >= sizeof path || nameLen >= sizeof name) return out;
  ssize_t n = getxattr(path, name, value, sizeof value);
  if (n >= 0) napi_create_string_utf8(env, value, (size_t)n, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "getxattr", NAPI_AUTO_LENGTH, js_getxattr, NULL, &fn);
  napi_set_named_property(env, exports, "getxattr", fn);
  return exports;
}
