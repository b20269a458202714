// config/limits.json (rq-beyond §B12.1): concurrency per limit key, exact keys first, then globs in file order.
import fs from 'node:fs/promises';
import { isErrno } from '../errors.js';
import { checkExpandedKey, readLimitConcurrency } from '../message/limit-key.js';
import { configFieldError, configReadError, parseConfigJson } from './schema-error.js';

export interface LimitsTable {
  exact: Map<string, number>;
  /** `*` matches any run of characters; the first match in file order wins. */
  globs: { pattern: string; re: RegExp; concurrency: number }[];
}

export const EMPTY_LIMITS: LimitsTable = { exact: new Map(), globs: [] };
const LABEL = 'config/limits.json';

function globRe(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    's',
  );
}

/** The table from the file's JSON; throws RQ_ERR_CONFIG naming the key at fault. */
export function parseLimits(raw: unknown): LimitsTable {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw configFieldError(LABEL, '', 'a JSON object of key: concurrency', raw);
  const table: LimitsTable = { exact: new Map(), globs: [] };
  for (const [key, value] of Object.entries(raw)) {
    const refuse = (field: string, expected: string, v: unknown) => configFieldError(LABEL, JSON.stringify(key), expected, v);
    checkExpandedKey(key, refuse);
    const concurrency = readLimitConcurrency(value, refuse);
    if (key.includes('*')) table.globs.push({ pattern: key, re: globRe(key), concurrency });
    else table.exact.set(key, concurrency);
  }
  return table;
}

/** Reads the file; an absent file is an empty table. */
export async function loadLimits(file: string): Promise<LimitsTable> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return EMPTY_LIMITS;
    throw configReadError(LABEL, err);
  }
  return parseLimits(parseConfigJson(text, LABEL));
}

/** The concurrency the file gives `key`, or undefined. */
export function configuredConcurrency(table: LimitsTable, key: string): number | undefined {
  return table.exact.get(key) ?? table.globs.find((g) => g.re.test(key))?.concurrency;
}
