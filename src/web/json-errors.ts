// Refusals in the client's format: a plain-text error reply to a client that speaks JSON becomes `["fail", "<text>"]` with the same status.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebContext } from './web-context.js';

/** The classic `<status> - ` prefix of a text reply: the status line says it to a JSON client. */
const STATUS_PREFIX = /^\d{3} - /;

/** The `["fail", text]` a JSON client gets for a classic text refusal (`409 - Couldn't run message. …`). */
export function failText(text: string): string {
  return JSON.stringify(['fail', text.replace(STATUS_PREFIX, '').trimEnd()]);
}

/**
 * Every route answers its refusals as text (`ctx.text`, the onRequest checks, the error handler's
 * classic texts); to a client that asked for JSON (`WebContext.wantsJson`) each leaves as
 * `["fail", text]` instead, the shape of the queue's own refusals, with its status and headers. Runs
 * after the form refusals (form-refusal.ts), so a browser's form post still goes back to its page.
 */
export function installJsonErrors(app: FastifyInstance, ctx: WebContext): void {
  app.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode < 400 || typeof payload !== 'string') return payload;
    if (!String(reply.getHeader('content-type') ?? '').startsWith('text/plain') || !ctx.wantsJson(req) || ctx.keepsText(req)) return payload;
    reply.type('application/json; charset=utf-8');
    return failText(payload);
  });
}
