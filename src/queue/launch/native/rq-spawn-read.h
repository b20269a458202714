// rq's end of a script's fd 3 read in Node's own loop: a uv_poll on the pipe, each read handed to JavaScript as a Buffer.
#ifndef RQ_SPAWN_READ_H
#define RQ_SPAWN_READ_H
#include <node_api.h>

/** readPipe(fd, onChunk) -> handle: onChunk(Buffer) for each read, then onChunk(null) once at EOF or a read error, the fd closed before it. */
napi_value rq_read_pipe(napi_env env, napi_callback_info info);

/** closePipe(handle): stops reading and closes the fd now, without a further onChunk; nothing when it is closed already. */
napi_value rq_close_pipe(napi_env env, napi_callback_info info);

#endif
