// Reading the arguments of queue socket commands: a message id, short texts, flags, counts, enumerations; refusals from the error catalogue.
import { counted, invalidField, RqError } from '../../errors.js';
import { flagValue } from '../../message/flag.js';
import { isMsgId } from '../../message/names.js';

export type Args = Record<string, unknown>;

export const MAX_REASON = 1000;
export const MAX_ACTOR = 64;

export function msgId(args: Args): string {
  const id = args.msg_id;
  if (id === undefined || id === null || id === '') throw RqError.of('RQ_ERR_LACKING_FIELD', 'msg_id');
  if (!isMsgId(id) || (id as string).startsWith('.')) throw invalidField('msg_id', 'a message id like 20261121.1643.46.613.2164022', id);
  return id as string;
}

export function optionalText(args: Args, field: string, max: number): string | undefined {
  const v = args[field];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string' || v.length > max || /\u0000/.test(v)) {
    throw invalidField(field, `text of at most ${max} characters without NUL`, typeof v === 'string' && v.length > max ? counted(v.length, 'characters') : v);
  }
  return v;
}

export function flag(args: Args, field: string): boolean {
  const v = flagValue(args[field]);
  if (v === undefined) throw invalidField(field, 'true or false', args[field]);
  return v;
}

/** A whole number in [1, max], or `fallback` when absent. */
export function countArg(args: Args, field: string, max: number, fallback?: number): number | undefined {
  const v = args[field];
  if (v === undefined || v === null || v === '') return fallback;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > max) throw invalidField(field, `a whole number from 1 to ${max}`, v);
  return n;
}

export function oneOf<T extends string>(args: Args, field: string, values: readonly T[]): T | undefined {
  const v = args[field];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string' || !values.includes(v as T)) throw invalidField(field, `one of ${values.join(', ')}`, v);
  return v as T;
}

/** The largest page a listing command answers, and the furthest offset it seeks. */
export const MAX_PAGE = 1000;
const MAX_OFFSET = 10_000_000;

export function offsetArg(args: Args): number {
  const v = args.offset;
  if (v === undefined || v === null || v === '') return 0;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_OFFSET) throw invalidField('offset', `a whole number from 0 to ${MAX_OFFSET}`, v);
  return n;
}
