// Post/Redirect/Get for refusals: a browser's form post that is refused goes back to the page it came from, the refusal shown there as a flash.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { html } from './views/html.js';
import { type WebContext, error } from './web-context.js';

/**
 * A form submitted by a browser (a navigation), as opposed to curl, a relay, the CLI or a classic
 * client, which keep the classic `<status> - <text>` replies they parse. Browsers that predate
 * Sec-Fetch-Mode are told by their Accept header.
 */
export function isBrowserForm(req: FastifyRequest): boolean {
  if (req.method !== 'POST') return false;
  const mode = req.headers['sec-fetch-mode'];
  if (typeof mode === 'string') return mode === 'navigate';
  return String(req.headers.accept ?? '').includes('text/html');
}

/** The page of this server the form was on (Referer: sent for same-origin requests, see access-control.ts), or null. */
function formPage(req: FastifyRequest, ctx: WebContext): string | null {
  const ref = req.headers.referer;
  if (typeof ref !== 'string') return null;
  try {
    const u = new URL(ref);
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.host !== req.headers.host) return null;
    if (ctx.urls.prefix && u.pathname !== ctx.urls.prefix && !u.pathname.startsWith(`${ctx.urls.prefix}/`)) return null;
    return u.href;
  } catch {
    return null;
  }
}

/** Authentication and Host refusals are the browser's business (a password prompt, a wrong name), never a flash. */
const KEPT = new Set([401, 421]);

/**
 * Every refusal of a POST is a plain-text reply (`409 - Couldn't run message. …`): shown to a person it
 * is a dead end, and reloading it posts again. Sent to a browser form instead: 303 back to the page
 * with the same text as an error flash. Other clients get the text and its status unchanged.
 */
export function installFormRefusals(app: FastifyInstance, ctx: WebContext): void {
  app.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode < 400 || KEPT.has(reply.statusCode) || !isBrowserForm(req)) return payload;
    if (!String(reply.getHeader('content-type') ?? '').startsWith('text/plain') || typeof payload !== 'string') return payload;
    const back = formPage(req, ctx);
    if (!back) return payload;
    ctx.flash.set(reply, error(html`${payload}`));
    reply.code(303).header('Location', back);
    return '';
  });
}
