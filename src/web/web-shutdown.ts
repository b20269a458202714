// Graceful stop of the web: stop accepting, end live streams and idle connections at once, let requests in flight finish up to a deadline, then cut.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

declare module 'fastify' {
  interface FastifyInstance {
    /** Stops the web the graceful way (web-main's TERM); resolves once every connection is gone. */
    rqCloseGracefully(): Promise<void>;
  }
}

/**
 * A reply made while the web is stopping says `Connection: close`, so its keep-alive connection goes
 * with it instead of idling until the grace runs out. Streams are ended by the preClose hooks, idle
 * connections by node's server.close (forceCloseConnections 'idle'); only requests still running
 * after `graceMs` lose their connection.
 */
export function installGracefulClose(app: FastifyInstance, graceMs: number, log: Logger): void {
  let closing: Promise<void> | null = null;
  app.addHook('onSend', async (_req, reply) => {
    if (closing) reply.header('Connection', 'close');
  });
  app.decorate('rqCloseGracefully', () => {
    closing ??= (async () => {
      const deadline = setTimeout(() => {
        log.warn({ grace_ms: graceMs }, 'requests still running at the end of the shutdown grace; cutting their connections');
        app.server.closeAllConnections();
      }, graceMs);
      try {
        await app.close();
      } finally {
        clearTimeout(deadline);
      }
    })();
    return closing;
  });
}
