// A message's `depends` and `depends_fail` (rq-beyond §B8.1): refs of messages of this host (or of another host of its fleet), and what a failed one does.
import { RqError, invalidField } from '../errors.js';
import { type Refuse, listItems } from './job-fields.js';
import { parseFullId } from './message-id.js';
import { isMsgId, isValidQueueName } from './names.js';

export const MAX_DEPENDS = 1000;
export const DEPENDS_FAIL = ['fail', 'run', 'wait'] as const;
export type DependsFail = (typeof DEPENDS_FAIL)[number];

const REF_EXPECTED = 'a message ref such as test/20261121.1643.46.613.2164022';

/** Where refs are read: this host's full-id prefix and the queue a bare `<id>` belongs to. Absent in a client checking before it sends. */
export interface RefContext {
  hostUrl: string;
  queue: string;
  /** This host is in a fleet: a full id of another host is kept as given, to be checked against the fleet (queue/dependencies/fleet-refs.ts). */
  fleet?: boolean;
}

/**
 * `<queue>/<id>` of a ref given as such, as a bare `<id>` (this queue, as the spec's terms say), or
 * as a full id (`http://host:port/q/<queue>/<id>`); null when it is none of them. Without a context
 * a full id or a bare id is kept as given.
 */
function refOf(v: string, ctx?: RefContext): { ref: string } | { foreign: true } | null {
  if (/^https?:\/\//.test(v)) {
    const p = parseFullId(v);
    if (!p || !isValidQueueName(p.queue) || !isMsgId(p.id)) return null;
    if (ctx === undefined) return { ref: v };
    if (v.startsWith(ctx.hostUrl)) return { ref: `${p.queue}/${p.id}` };
    return ctx.fleet ? { ref: v } : { foreign: true };
  }
  // An acknowledged error (a dotted id) will never finish: no ref.
  if (isMsgId(v, false)) return { ref: ctx ? `${ctx.queue}/${v}` : v };
  const m = /^([^/]+)\/([^/]+)$/.exec(v);
  return m && isValidQueueName(m[1]) && isMsgId(m[2], false) ? { ref: v } : null;
}

/**
 * Refs from a JSON array or a comma-separated string, each checked and made `<queue>/<id>`;
 * duplicates dropped, order kept.
 */
export function readDepends(raw: unknown, ctx?: RefContext, refuse: Refuse = invalidField): string[] {
  const given = listItems('depends', raw, 'an array of message refs (<queue>/<id>) or a comma-separated string', refuse);
  if (given.length > MAX_DEPENDS) throw refuse('depends', `at most ${MAX_DEPENDS} refs`, given.length);
  // An empty list is a mistake (a script's list of parts that came out empty), not "no dependencies".
  if (given.length === 0) throw refuse('depends', `1 to ${MAX_DEPENDS} message refs`, raw);
  const out: string[] = [];
  given.forEach((v, i) => {
    const r = typeof v === 'string' ? refOf(v, ctx) : null;
    if (r === null) throw refuse(`depends[${i}]`, REF_EXPECTED, v);
    if ('foreign' in r)
      throw RqError.of(
        'RQ_ERR_BAD_DEPENDENCY',
        `depends[${i}]: only messages of this host can be depended on (or of another host of its fleet; config.json names none), received ${v}`,
      );
    if (!out.includes(r.ref)) out.push(r.ref);
  });
  return out;
}

export function readDependsFail(raw: unknown, refuse: Refuse = invalidField): DependsFail {
  if (typeof raw !== 'string' || !(DEPENDS_FAIL as readonly string[]).includes(raw)) throw refuse('depends_fail', `one of ${DEPENDS_FAIL.join(', ')}`, raw);
  return raw as DependsFail;
}
