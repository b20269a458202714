// Flash messages: one notice or error carried across exactly one redirect in a signed cookie.
import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type SafeHtml, raw } from './views/html.js';

export interface Flash {
  kind: 'notice' | 'error';
  /** Markup built with `html` (values already escaped); the signature stops anyone else injecting it. */
  html: SafeHtml;
}

const COOKIE = 'rq_flash';
// Browsers drop cookies over ~4 KB; a long reply text is cut rather than losing the whole message.
const MAX_CHARS = 3000;

export class FlashStore {
  constructor(private readonly cookiePath: string) {}

  set(reply: FastifyReply, flash: Flash): void {
    let text = flash.html.value;
    if (text.length > MAX_CHARS) text = `${text.slice(0, MAX_CHARS).replace(/<[^>]*$|&[^;]*$/, '')}…`;
    const value = JSON.stringify({ k: flash.kind, h: text });
    reply.setCookie(COOKIE, value, { path: this.cookiePath, httpOnly: true, sameSite: 'lax', signed: true });
  }

  /**
   * The pending flash (if any), cleared so it shows on this page only. A browser page's own background
   * request (Sec-Fetch-Dest: empty, as a live look sends) leaves it alone: a look that went out between
   * a form's 303 and the page it leads to would otherwise eat the flash that page was to show.
   */
  take(req: FastifyRequest, reply: FastifyReply): Flash | null {
    const cookie = req.cookies[COOKIE];
    if (cookie === undefined || req.headers['sec-fetch-dest'] === 'empty') return null;
    reply.clearCookie(COOKIE, { path: this.cookiePath });
    const unsigned = req.unsignCookie(cookie);
    if (!unsigned.valid || unsigned.value === null) return null;
    try {
      const parsed = JSON.parse(unsigned.value) as { k?: unknown; h?: unknown };
      if ((parsed.k !== 'notice' && parsed.k !== 'error') || typeof parsed.h !== 'string') return null;
      return { kind: parsed.k, html: raw(parsed.h) };
    } catch {
      return null;
    }
  }
}
