// Turns config problems (unreadable file, bad JSON, schema issues) into one RqError naming file, field, expected, received.
import * as z from 'zod/mini';
import { RqError, fieldProblem, isErrno, withheld } from '../errors.js';

/** `basic_auth.users.bob`, `allowed_ips[2]`; empty for the top level. */
export function describePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** The value found at `path` inside `input`, or undefined when the path leads nowhere. */
export function valueAtPath(input: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = input;
  for (const key of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    // Only own properties: a missing "constructor" key must read as missing, not as Object.
    if (!Object.prototype.hasOwnProperty.call(v, key)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

export function configFieldError(fileLabel: string, field: string, expected: string, received: unknown): RqError {
  return RqError.of('RQ_ERR_CONFIG', `${fileLabel}: ${fieldProblem(field, expected, received)}`);
}

// Our schemas carry the "expected" phrase as their custom message; zod/mini's own default, for a
// check without one, is a bare "Invalid input" beside the issue's `expected` type.
function expectedOf(issue: z.core.$ZodIssue): string {
  if (issue.message === 'Invalid input' && issue.code === 'invalid_type') return issue.expected;
  return issue.message;
}

/** Whether the value at a path is a secret, told as withheld rather than shown. */
export type SecretPath = (path: readonly PropertyKey[]) => boolean;

/** All issues of one failed parse, in one error (the user fixes them in one edit). */
export function configSchemaError(fileLabel: string, issues: readonly z.core.$ZodIssue[], input: unknown, secret: SecretPath = () => false): RqError {
  const received = (path: readonly PropertyKey[]) => (secret(path) ? withheld() : valueAtPath(input, path));
  const parts = issues.map((issue) => fieldProblem(describePath(issue.path), expectedOf(issue), received(issue.path)));
  return RqError.of('RQ_ERR_CONFIG', `${fileLabel}: ${parts.join('; ')}`);
}

export function configJsonError(fileLabel: string, err: unknown): RqError {
  const reason = err instanceof Error ? err.message : String(err);
  return RqError.of('RQ_ERR_CONFIG', `${fileLabel}: not valid JSON: ${reason}`).causedBy(err);
}

export function configReadError(fileLabel: string, err: unknown): RqError {
  const reason = isErrno(err, 'ENOENT') ? 'no such file' : err instanceof Error ? err.message : String(err);
  return RqError.of('RQ_ERR_CONFIG', `${fileLabel}: cannot read: ${reason}`).causedBy(err);
}

export function parseConfigJson(text: string, fileLabel: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw configJsonError(fileLabel, err);
  }
}

/** Parses `input` with `schema` or throws the combined config error; values at `secret` paths are not shown in it. */
export function parseWithSchema<S extends z.ZodMiniType>(schema: S, input: unknown, fileLabel: string, secret?: SecretPath): z.output<S> {
  const result = z.safeParse(schema, input);
  if (!result.success) throw configSchemaError(fileLabel, result.error.issues, input, secret);
  return result.data;
}
