// URLs the router refuses before any hook runs (a broken %-escape, a path part too long): the Host, IP and credential checks first, then a refusal in the client's format.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type RqError, shown } from '../errors.js';
import { admissionProblem } from './access-control.js';
import { type BasicAuthConfig, unauthorized } from './basic-auth.js';
import { checkCredentials } from './credentials.js';
import { failText } from './json-errors.js';
import { parseFormBody } from './params.js';
import { asksForJson } from './request-params.js';

export interface RouterRefusalDeps {
  hosts: ReadonlySet<string>;
  allowedIps: string[] | undefined;
  auth: BasicAuthConfig | undefined;
  maxParamLength: number;
}

/** Null when an Authorization header names one of `users` with its password (basic_auth's own users; the fleet's peer user is never routed here), else the 401 saying what came. */
function refusedCredentials(header: string | undefined, users: Record<string, string>): RqError | null {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  const pair = m ? Buffer.from(m[1], 'base64').toString('utf8') : '';
  const colon = pair.indexOf(':');
  if (colon < 0) return unauthorized(header);
  return checkCredentials(users, pair.slice(0, colon), pair.slice(colon + 1)) ? null : unauthorized(header, pair.slice(0, colon));
}

/** asksForJson for a request the router gave no query: its `x_format` read from the URL here. */
function wantsJson(req: FastifyRequest): boolean {
  try {
    const at = req.url.indexOf('?');
    const format = at < 0 ? undefined : parseFormBody(req.url.slice(at + 1)).x_format;
    return typeof format === 'string' ? format === 'json' : asksForJson(req);
  } catch {
    // A query string the parser refuses: the fault is told as text.
    return false;
  }
}

/**
 * fastify's `frameworkErrors`: the router answers these itself, in JSON of its own, before the
 * onRequest hooks (app.ts) run. Here two Host lines are still 400, a foreign Host 421, an address not allowed 403, and a
 * request without credentials 401, in that order, as any other request; then the URL's fault, as
 * text or as `["fail", text]` to a JSON client.
 */
export function routerRefusals(d: RouterRefusalDeps) {
  const text = (reply: FastifyReply, status: number, body: string, json: boolean) =>
    json ? reply.code(status).type('application/json; charset=utf-8').send(failText(body)) : reply.code(status).type('text/plain; charset=utf-8').send(body);
  return (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const json = wantsJson(req);
    const refused = admissionProblem(req, reply, d.hosts, d.allowedIps);
    if (refused) return text(reply, refused.status, refused.text, json);
    const denied = d.auth ? refusedCredentials(req.headers.authorization, d.auth.users) : null;
    if (d.auth && denied) {
      reply.header('WWW-Authenticate', `Basic realm="${d.auth.realm ?? 'RQ'}", charset="UTF-8"`);
      return text(reply, 401, denied.message, json);
    }
    const path = req.url.split('?')[0];
    if (err.code === 'FST_ERR_MAX_PARAM_LENGTH')
      return text(reply, 414, `414 - URL: expected each part of its path at most ${d.maxParamLength} characters, received ${shown(path)}`, json);
    return text(reply, 400, `400 - URL: expected a path whose %-escapes are UTF-8, received ${shown(path)}`, json);
  };
}
