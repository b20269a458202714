{
  "targets": [
    {
      "target_name": "rq_spawn",
      "sources": ["src/queue/launch/native/rq-spawn.c", "src/queue/launch/native/rq-spawn-child.c", "src/queue/launch/native/rq-spawn-watch.c", "src/queue/launch/native/rq-spawn-read.c", "src/queue/launch/native/rq-spawn-strings.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-clobbered"],
      "defines": ["NAPI_VERSION=8"]
    },
    {
      "target_name": "rq_xattr",
      "sources": ["src/queue/launch/native/rq-xattr.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "defines": ["NAPI_VERSION=8"]
    },
    {
      "target_name": "rq_blanks",
      "sources": ["src/spool/native/rq-blanks.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "defines": ["NAPI_VERSION=8"]
    },
    {
      "target_name": "rq_fileops",
      "sources": ["src/spool/native/rq-fileops.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "defines": ["NAPI_VERSION=8"]
    },
    {
      "target_name": "rq_journal_sync",
      "sources": ["src/spool/native/rq-journal-sync.c", "src/spool/native/rq-journal-thread.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "defines": ["NAPI_VERSION=8"]
    },
    {
      "target_name": "rq_syncfs",
      "sources": ["src/spool/native/rq-syncfs.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
