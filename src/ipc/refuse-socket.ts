// Lets go of a connection that will not be served, after one last answer: the web's connection limits and the sockets' busy reply.
import type net from 'node:net';

/**
 * Sends `answer` and ends the connection. What the peer sends meanwhile is read and dropped, since
 * closing on unread bytes could reset the connection before the peer reads the answer; a peer that
 * never closes its side is cut after `lingerMs`.
 */
export function refuseSocket(socket: net.Socket, answer: string | Buffer, lingerMs: number): void {
  socket.on('error', () => undefined);
  socket.end(answer);
  socket.resume();
  const cut = setTimeout(() => socket.destroy(), lingerMs);
  socket.once('close', () => clearTimeout(cut));
}
