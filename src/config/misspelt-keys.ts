// A config key that is no setting yet a typo of one: refused with "did you mean", where every other unknown key is ignored as the classic daemon ignored it.
import { RqError } from '../errors.js';
import { closest, typoDistance } from '../message/nearest-name.js';

/** Unknown keys looked at in one object: a file of half a million made-up keys costs no more than this many. */
const MAX_LOOKED_AT = 1000;

/**
 * Throws RQ_ERR_CONFIG for the first key of `raw` that is none of `settings` but near one that
 * `raw` lacks (`basic_auht`, `timout`), or is a setting of an object inside (`max_retries` for `"retry":
 * {"max_retries": 3}`): such a setting would otherwise be lost without a word, a missing
 * basic_auth leaving the web open. `prefix` names the object itself inside the file (`fleet.`).
 */
export function refuseMisspeltKeys(
  raw: object,
  settings: readonly string[],
  fileLabel: string,
  opts: { prefix?: string; inside?: Record<string, readonly string[]> } = {},
): void {
  const known = new Set(settings);
  const prefix = opts.prefix ?? '';
  let left = MAX_LOOKED_AT;
  for (const key of Object.keys(raw)) {
    if (known.has(key)) continue;
    if (left-- <= 0) return;
    const near = closest(key, settings, typoDistance);
    // Beside the setting itself (`hosts` with `host`) it is a key of the operator's own, not a typo of it.
    if (near !== undefined && !Object.hasOwn(raw, near))
      throw RqError.of('RQ_ERR_CONFIG', `${fileLabel}: ${prefix}${key}: unknown setting; did you mean ${JSON.stringify(near)}?`);
    for (const [outer, inner] of Object.entries(opts.inside ?? {}))
      if (inner.includes(key))
        throw RqError.of(
          'RQ_ERR_CONFIG',
          `${fileLabel}: ${prefix}${key}: not a setting at this level; did you mean {${JSON.stringify(outer)}: {${JSON.stringify(key)}: ...}}?`,
        );
  }
}
