// Bounded drain: a request refused before its body was read whole has the rest read and dropped after the answer, up to a bound, so a client still sending reads its answer instead of a reset.
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * How much, and for how long, the rest of a refused body is read after the answer. Closing a
 * connection with unread bytes makes the kernel answer the client's next write with a reset, and a
 * client still sending (node's http, many libraries) then reports a broken pipe, not the 413 or 404
 * it was sent. So the rest is read and dropped, as nginx's lingering close does, but no more than
 * this: an endless or slow upload costs at most this much before the connection is cut.
 */
export const DRAIN_BOUNDS = { ms: 5000, bytes: 64 * 1024 * 1024 };

/**
 * After `res` is sent, lets node read and drop what remains of `req`'s body (it does so for a
 * connection kept alive) and cuts the connection if the rest passes `bounds` in bytes or in time.
 * A client that ends its body within them keeps its connection.
 */
export function drainAfterAnswer(req: IncomingMessage, res: ServerResponse, bounds: { ms: number; bytes: number } = DRAIN_BOUNDS): void {
  res.once('finish', () => {
    if (req.complete) return;
    const socket = req.socket;
    let read = 0;
    const cut = () => socket.destroy();
    const timer = setTimeout(cut, bounds.ms).unref();
    // A socket kept alive serves later requests: nothing of this one stays on it.
    const done = () => {
      clearTimeout(timer);
      socket.off('close', done);
    };
    req.once('end', done);
    socket.once('close', done);
    // What read the body (a parser that gave up, say) reads no more: the rest is counted and dropped here.
    req.unpipe();
    req.removeAllListeners('data');
    req.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > bounds.bytes) cut();
    });
    req.resume();
  });
}
