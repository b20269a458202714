// What the web answers a request node's HTTP parser refused before any route saw it: the classic plain-text refusal naming what was wrong, never fastify's JSON that names nothing.
import http from 'node:http';
import type { Socket } from 'node:net';

/** The refusal of a parse error: its status and what was expected of the request. */
function refusalOf(err: NodeJS.ErrnoException): { status: number; text: string } {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, text: `request head: expected at most ${http.maxHeaderSize} bytes of request line and headers, received more` };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, text: 'request: expected the whole request in time, received it too slowly' };
    default: {
      // llhttp's reason says what it found ("Transfer-Encoding can't be present with Content-Length").
      const reason = (err as { reason?: unknown }).reason;
      return {
        status: 400,
        text: `request: expected a well-formed HTTP/1.1 request, received one that does not parse: ${typeof reason === 'string' ? reason : err.message} (${err.code})`,
      };
    }
  }
}

/**
 * fastify's clientErrorHandler: a request that does not parse gets `<status> - <what>` in text, with
 * the headers every answer carries, and its connection is closed (node's own behaviour). A reset
 * connection gets nothing: there is no one to tell.
 */
export function clientRefusal(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, text } = refusalOf(err);
  const body = `${status} - ${text}`;
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
