// W3C Trace Context (level 1) on a message: the `traceparent` and `tracestate` a create takes, their checks, and which source the pair comes from.
import type { Refuse } from './job-fields.js';

export const TRACE_FIELDS = ['traceparent', 'tracestate'] as const;
export type TraceField = (typeof TRACE_FIELDS)[number];
export type TraceContext<V = string> = Partial<Record<TraceField, V>>;

/** The names a script reads them by: the environment carrier OpenTelemetry's SDKs agree on. */
export const TRACE_ENV: Readonly<Record<TraceField, string>> = { traceparent: 'TRACEPARENT', tracestate: 'TRACESTATE' };

export const TRACEPARENT_EXPECTED =
  'a W3C traceparent: 00-<trace id, 32 lowercase hex, not all zeros>-<parent id, 16 lowercase hex, not all zeros>-<flags, 2 lowercase hex>';
/** A later version may add fields after the four of version 00; how much of them is kept, at most. */
export const MAX_TRACEPARENT = 512;
export const MAX_TRACESTATE = 512;
export const MAX_TRACESTATE_MEMBERS = 32;
export const TRACESTATE_EXPECTED = `a W3C tracestate: up to ${MAX_TRACESTATE_MEMBERS} comma-separated key=value members, at most ${MAX_TRACESTATE} characters`;

/** version-traceid-parentid-flags, and for a version after 00 whatever it adds after a dash. */
const TRACEPARENT_RE = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(-[\x21-\x7e]*)?$/;

/** Why `v` is no traceparent, in a few words; empty when it is one. */
function traceparentProblem(v: string): string {
  if (v.length > MAX_TRACEPARENT) return `${v.length} characters, more than ${MAX_TRACEPARENT}`;
  const m = TRACEPARENT_RE.exec(v);
  if (!m) {
    if (TRACEPARENT_RE.test(v.toLowerCase())) return 'its hex is uppercase';
    return v.length === 55 ? 'not of that form' : `${v.length} characters, not 55`;
  }
  const [, version, traceId, parentId, more] = m;
  if (version === 'ff') return 'version ff is invalid';
  if (version === '00' && more !== undefined) return `${v.length} characters, not 55`;
  if (/^0+$/.test(traceId)) return 'its trace id is all zeros';
  if (/^0+$/.test(parentId)) return 'its parent id is all zeros';
  return '';
}

/** A traceparent as given (a later version's extra fields kept, for the script's tracer to read); refused with the reason. */
export function readTraceparent(v: unknown, refuse: Refuse, field = 'traceparent'): string {
  if (typeof v !== 'string') throw refuse(field, TRACEPARENT_EXPECTED, v);
  const problem = traceparentProblem(v);
  if (problem !== '') throw refuse(field, `${TRACEPARENT_EXPECTED} (this one: ${problem})`, v);
  return v;
}

const KEY_CHAR = '[a-z0-9_*/-]';
/** A simple key, or a multi-tenant `tenant@system` key. */
const TRACESTATE_KEY = new RegExp(`^(?:[a-z]${KEY_CHAR}{0,255}|[a-z0-9]${KEY_CHAR}{0,240}@[a-z]${KEY_CHAR}{0,13})$`);
/** 1-256 printable ASCII but `,` and `=`, spaces only inside. */
const TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/** Why `v` is no tracestate, naming the member at fault; empty when it is one. */
function tracestateProblem(v: string): string {
  if (v.length > MAX_TRACESTATE) return `${v.length} characters`;
  const keys = new Set<string>();
  // Spaces and tabs around a comma are optional whitespace; an empty member is allowed.
  const members = v.split(',').map((s) => s.replace(/^[ \t]+|[ \t]+$/g, ''));
  for (const [i, member] of members.entries()) {
    if (member === '') continue;
    const eq = member.indexOf('=');
    const key = eq < 0 ? member : member.slice(0, eq);
    if (eq < 0 || !TRACESTATE_KEY.test(key))
      return `member ${i + 1} ${JSON.stringify(member)}: a key of lowercase a-z 0-9 _ - * / (tenant@system for a multi-tenant one) then =`;
    if (!TRACESTATE_VALUE.test(member.slice(eq + 1)))
      return `member ${i + 1} ${JSON.stringify(member)}: a value of 1-256 printable ASCII characters, no comma or =, not ending in a space`;
    if (keys.has(key)) return `member ${i + 1}: the key ${JSON.stringify(key)} twice`;
    keys.add(key);
  }
  if (keys.size > MAX_TRACESTATE_MEMBERS) return `${keys.size} members`;
  return '';
}

/** A tracestate as given; refused naming the member at fault. */
export function readTracestate(v: unknown, refuse: Refuse, field = 'tracestate'): string {
  if (typeof v !== 'string') throw refuse(field, TRACESTATE_EXPECTED, v);
  const problem = tracestateProblem(v);
  if (problem !== '') throw refuse(field, `${TRACESTATE_EXPECTED} (this one: ${problem})`, v);
  return v;
}

const isSet = (v: unknown) => v !== undefined && v !== null && v !== '';

/**
 * The trace context of a create request: a tracestate only with a traceparent, since it holds
 * vendors' data about the trace that traceparent names.
 */
export function readTraceContext(req: Record<string, unknown>, refuse: Refuse): TraceContext {
  const out: TraceContext = {};
  if (isSet(req.traceparent)) out.traceparent = readTraceparent(req.traceparent, refuse);
  if (isSet(req.tracestate)) {
    out.tracestate = readTracestate(req.tracestate, refuse);
    if (out.traceparent === undefined)
      throw refuse('tracestate', 'a traceparent with it (a tracestate belongs to the trace a traceparent names)', req.tracestate);
  }
  return out;
}

/**
 * The pair to create with: `explicit`'s (a body's fields, a command's flags, a file's message) when
 * it has either field, else `ambient`'s (HTTP headers, the environment, the command's options),
 * read only then. Never one field from each: a tracestate belongs to its own traceparent. Only
 * the set fields.
 */
export function traceFrom(explicit: TraceContext<unknown>, ambient: () => TraceContext<unknown>): TraceContext<unknown> {
  const from = TRACE_FIELDS.some((f) => isSet(explicit[f])) ? explicit : ambient();
  const out: TraceContext<unknown> = {};
  for (const f of TRACE_FIELDS) if (isSet(from[f])) out[f] = from[f];
  return out;
}

/** A copy of `fields` without the trace context, for a source whose pair another may replace whole. */
export function withoutTrace<T extends object>(fields: T): T {
  const copy = { ...fields } as Record<string, unknown>;
  for (const f of TRACE_FIELDS) delete copy[f];
  return copy as T;
}

/** A checked traceparent's fields (readTraceparent made sure of its form), as a tracer takes its parent. */
export interface TraceParent {
  traceId: string;
  parentId: string;
  /** The trace-flags byte; bit 0 is `sampled`, the sender's decision to record the trace. */
  flags: number;
}

export function traceParentOf(traceparent: string): TraceParent {
  const [, traceId, parentId, flags] = traceparent.split('-');
  return { traceId, parentId, flags: parseInt(flags, 16) };
}

/** The traceparent of version 00 for a span of the trace, as a script's tracer reads it. */
export function traceparentFor(traceId: string, spanId: string, flags: number): string {
  return `00-${traceId}-${spanId}-${flags.toString(16).padStart(2, '0')}`;
}
