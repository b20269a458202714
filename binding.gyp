{
  "targets": [
    {
      "target_name": "rq_spawn",
      "sources": ["src/queue/native/rq-spawn.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-clobbered"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
