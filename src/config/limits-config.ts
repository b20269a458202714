// config/limits.json (rq-beyond §B12.1): concurrency per limit key, exact keys first, then globs in file order; a key's scope (this host, or the fleet).
import fs from 'node:fs/promises';
import { isErrno } from '../errors.js';
import { MAX_CONCURRENCY, checkExpandedKey, readLimitConcurrency } from '../message/limit-key.js';
import { configFieldError, configReadError, parseConfigJson } from './schema-error.js';

export interface LimitsTable {
  exact: Map<string, number>;
  /** `*` matches any run of characters; the first match in file order wins. */
  globs: { pattern: string; re: RegExp; concurrency: number }[];
  /** The exact keys and globs whose slots are shared by the fleet (`"scope": "fleet"`), held in etcd. */
  fleet: ReadonlySet<string>;
}

export type LimitScope = 'host' | 'fleet';

export const EMPTY_LIMITS: LimitsTable = { exact: new Map(), globs: [], fleet: new Set() };
const ENTRY_EXPECTED = 'a concurrency, or {"concurrency": N, "scope": "fleet" or "host"}';
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
  const fleet = new Set<string>();
  const table: LimitsTable = { exact: new Map(), globs: [], fleet };
  for (const [key, value] of Object.entries(raw)) {
    // `field` is the part of the entry at fault (`.scope`), empty for the key or its plain number.
    const refuse = (field: string, expected: string, v: unknown) => configFieldError(LABEL, `${JSON.stringify(key)}${field}`, expected, v);
    checkExpandedKey(key, (_f, expected, v) => refuse('', expected, v));
    const { concurrency, scope } = readEntry(value, refuse);
    if (scope === 'fleet') fleet.add(key);
    if (key.includes('*')) table.globs.push({ pattern: key, re: globRe(key), concurrency });
    else table.exact.set(key, concurrency);
  }
  return table;
}

/** A concurrency as the file gives it: a JSON number, where a request's field may also be its decimal text. */
function fileConcurrency(value: unknown, refuse: (expected: string, v: unknown) => Error): number {
  if (typeof value === 'string') throw refuse(`a whole number 1-${MAX_CONCURRENCY} (a JSON number, not text)`, value);
  return readLimitConcurrency(value, (_f, expected, v) => refuse(expected, v));
}

/** A key's value: the plain number (this host's slots), or the object form that may share them with the fleet. */
function readEntry(value: unknown, refuse: (field: string, expected: string, v: unknown) => Error): { concurrency: number; scope: LimitScope } {
  if (typeof value !== 'object' || value === null) return { concurrency: fileConcurrency(value, (expected, v) => refuse('', expected, v)), scope: 'host' };
  if (Array.isArray(value)) throw refuse('', ENTRY_EXPECTED, value);
  const o = value as Record<string, unknown>;
  const extra = Object.keys(o).find((k) => k !== 'concurrency' && k !== 'scope');
  if (extra !== undefined) throw refuse(`.${extra}`, 'no such field (concurrency and scope only)', o[extra]);
  const concurrency = fileConcurrency(o.concurrency, (expected, v) => refuse('.concurrency', expected, v));
  if (o.scope !== undefined && o.scope !== 'host' && o.scope !== 'fleet') throw refuse('.scope', '"fleet" or "host"', o.scope);
  return { concurrency, scope: (o.scope as LimitScope | undefined) ?? 'host' };
}

/** A fleet scope needs a fleet: refused, naming the first such key, when config.json has none. */
export function checkFleetScopes(table: LimitsTable, fleetConfigured: boolean): LimitsTable {
  const first = [...table.fleet][0];
  if (!fleetConfigured && first !== undefined)
    throw configFieldError(LABEL, `${JSON.stringify(first)}.scope`, 'a fleet in config/config.json for "fleet" (or "host")', 'fleet');
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

/** The scope the file gives `key`: that of the entry its concurrency comes from (a key the file does not name is this host's). */
export function configuredScope(table: LimitsTable, key: string): LimitScope {
  const entry = table.exact.has(key) ? key : table.globs.find((g) => g.re.test(key))?.pattern;
  return entry !== undefined && table.fleet.has(entry) ? 'fleet' : 'host';
}
