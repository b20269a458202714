// docs/openapi.json, the committed copy of the OpenAPI document: how it is written, and how a served document is compared with it.
import path from 'node:path';
import diff from 'microdiff';
import { PROJECT } from '../helpers/rq-root.js';

export const OPENAPI_FILE = path.join(PROJECT, 'docs', 'openapi.json');

/** How a document is written to the file: pretty-printed, keys in the order the server sent them. */
export function openapiText(doc: unknown): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** A path as jq reads it, so it can be pasted into `jq '<path>' docs/openapi.json`: `.paths["/q/{q}"].get.tags[0]`. */
function jqPath(keys: readonly (string | number)[]): string {
  return keys.map((k) => (typeof k === 'number' ? `[${k}]` : /^[A-Za-z_]\w*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`)).join('') || '.';
}

/**
 * Null when `served` would be written exactly as `committed` is, `info.version` aside: the
 * version is rq's release number, not part of the contract, so a release does not have to
 * regenerate the file. Otherwise where they first differ: a value's path, or a line when only the key order differs.
 */
export function openapiDifference(committedText: string, served: Record<string, unknown>): string | null {
  const committed = JSON.parse(committedText) as Record<string, unknown>;
  const info = (doc: Record<string, unknown>) => doc.info as Record<string, unknown> | undefined;
  const normalised = { ...served, ...(info(served) && info(committed) ? { info: { ...info(served), version: info(committed)!.version } } : {}) };
  if (openapiText(normalised) === committedText) return null;
  const first = diff(committed, normalised)[0];
  if (!first) {
    const [was, now] = [committedText, openapiText(normalised)].map((t) => t.split('\n'));
    const line = was.findIndex((l, i) => l !== now[i]);
    return `in the order of its keys only, from line ${line + 1}`;
  }
  const at = `at ${jqPath(first.path)}:`;
  if (first.type === 'CREATE') return `${at} added ${shown(first.value)}`;
  if (first.type === 'REMOVE') return `${at} removed (was ${shown(first.oldValue)})`;
  return `${at} changed from ${shown(first.oldValue, first.value)} to ${shown(first.value, first.oldValue)}`;
}

/** A value as JSON, cut short; a long text from a little before where it departs from `other`. */
function shown(v: unknown, other?: unknown): string {
  const text = JSON.stringify(v) ?? 'nothing';
  if (text.length <= 80) return text;
  const against = JSON.stringify(other) ?? '';
  let at = 0;
  while (at < text.length && text[at] === against[at]) at++;
  const from = Math.max(0, at - 20);
  return `${from > 0 ? '…' : ''}${text.slice(from, from + 80)}…`;
}
