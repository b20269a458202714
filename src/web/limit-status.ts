// rq-mgr's concurrency-limit table for the web (rq-beyond §B12): the `key` parameter checked first, and a clear 503 when rq-mgr does not answer.
import { RqError, invalidField, isRqError } from '../errors.js';
import type { Answer } from '../ipc/answer.js';
import type { LimitKeyStatus } from '../ipc/mgr-client.js';
import { checkExpandedKey } from '../message/limit-key.js';
import type { LimitsState } from './views/limits-view.js';
import type { WebContext } from './web-context.js';

const KEY_EXPECTED = 'a key of 1-256 characters without control characters';

/** The optional `key` of /limits.json, with rq-mgr's own wording when it is not one (a repeated key is an array: refused). */
export function limitKeyParam(query: Record<string, unknown>): string | undefined {
  const key = query.key;
  if (key === undefined) return undefined;
  if (typeof key !== 'string') throw invalidField('key', KEY_EXPECTED, key);
  return checkExpandedKey(key, invalidField, 'key');
}

/** limit_status; a 503 naming rq-mgr when it does not answer (it is down, restarting, or hung). */
export async function limitStatus(ctx: WebContext, key?: string): Promise<Answer<Record<string, LimitKeyStatus>>> {
  try {
    return await ctx.deps.mgr.limitStatus(key);
  } catch (err) {
    if (!isRqError(err, 'RQ_ERR_NO_REPLY')) throw err;
    throw RqError.of('RQ_ERR_NO_REPLY', `rq-mgr did not answer limit_status (${err.message})`);
  }
}

/** For the dashboard, which shows what went wrong instead of failing. */
export async function limitsState(ctx: WebContext): Promise<LimitsState> {
  try {
    const a = await limitStatus(ctx);
    return a.ok ? { ok: true, keys: a.value } : { ok: false, error: `rq-mgr refused limit_status: ${a.text}` };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}
