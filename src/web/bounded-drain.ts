// Bounded drain: a request answered before its body was read whole has the rest read and dropped after the answer, up to a bound, so a client still sending reads its answer instead of a reset.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

/**
 * How much, for how long, and in how many reads the rest of a body is drained after an early answer.
 * Closing a connection with unread bytes makes the kernel answer the client's next write with a
 * reset, and a client still sending (node's http, many libraries) then reports a broken pipe, not
 * the 413 or 404 it was sent. So the rest is read and dropped, as nginx's lingering close does, but
 * no more than this: an endless, slow or finely cut upload (1-byte chunks cost a callback each)
 * costs at most this much before the connection is cut.
 */
export const DRAIN_BOUNDS = { ms: 5000, bytes: 64 * 1024 * 1024, reads: 4096 };
type Bounds = typeof DRAIN_BOUNDS;

/**
 * After `res` is sent, reads and drops what remains of `req`'s body, and cuts the connection if the
 * rest passes `bounds`. A client that ends its body within them keeps its connection.
 */
export function drainAfterAnswer(req: IncomingMessage, res: ServerResponse, bounds: Bounds = DRAIN_BOUNDS): void {
  res.once('finish', () => {
    if (req.complete) return;
    const socket = req.socket;
    // An answer that was its connection's last (the client asked for Connection: close, or spoke
    // HTTP/1.0) has node destroy the socket once it is written, and the kernel would answer the
    // body's unread bytes with a reset that can cost the client the answer itself. That close
    // waits for the body's end here, as a lingering close does.
    const last = socket.listeners('finish').includes(socket.destroy);
    if (last) socket.removeListener('finish', socket.destroy);
    let read = 0;
    let reads = 0;
    const cut = () => socket.destroy();
    const timer = setTimeout(cut, bounds.ms).unref();
    // A socket kept alive serves later requests: nothing of this one stays on it.
    const done = () => {
      clearTimeout(timer);
      socket.off('close', done);
      if (!last || socket.destroyed) return;
      if (socket.writableFinished) socket.destroy();
      else socket.once('finish', () => socket.destroy());
    };
    req.once('end', done);
    socket.once('close', done);
    // What read the body (a parser that gave up, say) reads no more: the rest is counted and dropped here.
    req.unpipe();
    req.removeAllListeners('data');
    req.on('data', (chunk: Buffer) => {
      read += chunk.length;
      reads += 1;
      if (read > bounds.bytes || reads > bounds.reads) cut();
    });
    req.resume();
  });
}

/**
 * Every answer sent before its request's body was read whole (a refusal by a hook, a route, the
 * error handler, or fastify's own body limit, which asks for `Connection: close`) drains the rest.
 * Installed ahead of the graceful close's hook, which asks for `Connection: close` again while the
 * web stops.
 */
export function installBoundedDrain(app: FastifyInstance): void {
  app.addHook('onSend', async (req, reply, payload) => {
    if (req.raw.complete) return payload;
    reply.removeHeader('connection');
    drainAfterAnswer(req.raw, reply.raw);
    return payload;
  });
}
