// A config key that is no setting yet a typo of one: refused with "did you mean", where every other unknown key is ignored as the classic daemon ignored it.
import { RqError } from '../errors.js';
import { closest, typoDistance } from '../message/nearest-name.js';

/** Unknown keys looked at in one object: a file of half a million made-up keys costs no more than this many. */
const MAX_LOOKED_AT = 1000;

/**
 * A message's own fields that a queue's config could be thought to default, each with how a message is given it:
 * a priority orders messages within their queue, so one for the whole queue would order nothing.
 */
export const MESSAGE_OWN_FIELDS: Readonly<Record<string, string>> = {
  priority: 'rq sendmesg --priority N',
  tags: 'rq sendmesg --tags a,b',
  depends: 'rq sendmesg --depends <queue>/<id>',
};

/**
 * Throws RQ_ERR_CONFIG for the first key of `raw` that is none of `settings` but near one that
 * `raw` lacks (`basic_auht`, `timout`), or is a setting of an object inside (`max_retries` for `"retry":
 * {"max_retries": 3}`): such a setting would otherwise be lost without a word, a missing
 * basic_auth leaving the web open. `prefix` names the object itself inside the file (`fleet.`); `messageOwn`: the
 * message fields (MESSAGE_OWN_FIELDS) refused as such, with how a message is given them; `strict`: in an object of
 * rq's own, any other key is refused too, listing these settings.
 */
export function refuseMisspeltKeys(
  raw: object,
  settings: readonly string[],
  fileLabel: string,
  opts: { prefix?: string; inside?: Record<string, readonly string[]>; messageOwn?: Readonly<Record<string, string>>; strict?: readonly string[] } = {},
): void {
  const known = new Set(settings);
  const prefix = opts.prefix ?? '';
  let left = MAX_LOOKED_AT;
  const messageOwn = opts.messageOwn ?? {};
  const candidates = [...settings, ...Object.keys(messageOwn)];
  const giveIt = (field: string) => `give it with the message (create_message's ${JSON.stringify(field)}, ${messageOwn[field]})`;
  for (const key of Object.keys(raw)) {
    if (known.has(key)) continue;
    if (left-- <= 0) return;
    if (Object.hasOwn(messageOwn, key))
      throw RqError.of('RQ_ERR_CONFIG', `${fileLabel}: ${prefix}${key}: not a queue setting but each message's own; ${giveIt(key)}`);
    const near = closest(key, candidates, typoDistance);
    // A typo of a message's field (`priorty`) would be lost without a word as the field itself would.
    if (near !== undefined && Object.hasOwn(messageOwn, near))
      throw RqError.of(
        'RQ_ERR_CONFIG',
        `${fileLabel}: ${prefix}${key}: unknown setting; did you mean ${JSON.stringify(near)}? That is not a queue setting but each message's own; ${giveIt(near)}`,
      );
    // Beside the setting itself (`hosts` with `host`) it is a key of the operator's own, not a typo of it.
    if (near !== undefined && !Object.hasOwn(raw, near))
      throw RqError.of('RQ_ERR_CONFIG', `${fileLabel}: ${prefix}${key}: unknown setting; did you mean ${JSON.stringify(near)}?`);
    for (const [outer, inner] of Object.entries(opts.inside ?? {}))
      if (inner.includes(key))
        throw RqError.of(
          'RQ_ERR_CONFIG',
          `${fileLabel}: ${prefix}${key}: not a setting at this level; did you mean {${JSON.stringify(outer)}: {${JSON.stringify(key)}: ...}}?`,
        );
    if (opts.strict) throw RqError.of('RQ_ERR_CONFIG', `${fileLabel}: ${prefix}${key}: unknown setting; expected one of ${opts.strict.join(', ')}`);
  }
}
