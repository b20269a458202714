// Runs the real bin/rq the way a user does, and the shape every CLI refusal must have.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { expect } from 'vitest';
import { PROJECT } from './rq-root.js';

export const RQ_BIN = path.join(PROJECT, 'bin', 'rq');

export interface Run {
  code: number;
  out: string[];
  err: string[];
}

/** bin/rq with `args`; `root` goes last so it never swallows a flag's value; RQ_ROOT is never inherited. */
export function runRq(args: string[], opts: { root?: string; cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<Run> {
  const argv = opts.root === undefined ? args : [...args, '--root', opts.root];
  return new Promise((resolve) => {
    const env = { ...process.env, ...opts.env };
    delete env.RQ_ROOT;
    const child = execFile(RQ_BIN, argv, { cwd: opts.cwd ?? PROJECT, env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const lines = (s: string) => s.split('\n').filter((l) => l !== '');
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, out: lines(stdout), err: lines(stderr) });
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** A failure the user can read: non-zero, nothing on stdout, one stderr line, no stack trace. */
export function expectOneLineError(r: Run, text: string | RegExp, code = 1): void {
  expect(r.code).toBe(code);
  expect(r.out).toEqual([]);
  expect(r.err).toHaveLength(1);
  expect(r.err[0]).toMatch(text);
  expect(r.err[0]).not.toMatch(/\bat .*:\d+:\d+/);
}

/** `rq sendmesg --dest <dest> ...args` through `rq`, which must succeed; the full id it printed (`http://host:port/q/<dest>/<id>`). */
export async function sendmesg(rq: (args: string[]) => Promise<Run>, dest: string, ...args: string[]): Promise<string> {
  const r = await rq(['sendmesg', '--dest', dest, ...args]);
  expect(r.code, [...r.out, ...r.err].join('\n')).toBe(0);
  const full = new RegExp(`^ok (http://127\\.0\\.0\\.1:\\d+/q/${dest}/\\d{8}\\.\\d{4}\\.\\d{2}\\.\\d{3}\\.\\d+)$`).exec(r.out[0] ?? '');
  expect(full, `rq sendmesg printed ${r.out[0]}`).not.toBeNull();
  return full![1];
}
