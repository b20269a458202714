// A message's tags (rq-beyond §B9.1): what every entry point accepts, and the checks it makes.
import { type Refuse, listItems } from './job-fields.js';

export const MAX_TAGS = 32;
/** The reserved tag of tracked messages (§B9.4). */
export const TRACK_TAG = 'track';
/** No `/`, so a tag is one URL path segment; no space or comma, so a list of them is one CLI word. */
const TAG_RE = /^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,63}$/;
export const TAG_EXPECTED = 'a tag of 1-64 characters from A-Z a-z 0-9 . _ : @ + - (starting with a letter or digit)';

export function isTag(v: unknown): v is string {
  return typeof v === 'string' && TAG_RE.test(v);
}

/** Tags from a JSON array or a comma-separated string (`listItems`): each checked, duplicates dropped, order kept. */
export function readTags(raw: unknown, refuse: Refuse, field = 'tags'): string[] {
  const given = listItems(field, raw, 'an array of tags or a comma-separated string', refuse);
  const out: string[] = [];
  given.forEach((v, i) => {
    if (!isTag(v)) throw refuse(`${field}[${i}]`, TAG_EXPECTED, v);
    if (!out.includes(v)) out.push(v);
  });
  if (out.length > MAX_TAGS) throw refuse(field, `at most ${MAX_TAGS} tags`, out.length);
  return out;
}
