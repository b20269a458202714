// Shared by the idempotency tests (HTTP, socket and CLI): roots that clean up after themselves, keyed creates, the journal.
import fs from 'node:fs/promises';
import http from 'node:http';
import { expect } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { queueCommand } from '../../src/ipc/rq1.js';
import { QueueProc, type TestRoot, addQueue, makeRoot } from '../helpers/rq-root.js';
import { testSeed } from '../helpers/seeded-random.mjs';
import type { SeededRandom } from '../helpers/seeded-random.d.mts';
import { type WebRoot, startWebRoot } from '../web/web-root.js';

export const SEED = testSeed();
/**
 * Keys each of the 16 clients sends in the concurrency test. 1,000 (16,000 requests, 1,000 creates)
 * takes 6 to 12 s on 2 cores; RQ_IDEM_KEYS makes it smaller on a slower machine or larger for a soak.
 */
export const KEYS = positiveEnv('RQ_IDEM_KEYS', 1000);
export const CLIENTS = 16;
/** Requests one client keeps in flight: a few, as a real client with a small connection pool. */
export const IN_FLIGHT = 4;

export function positiveEnv(name: string, fallback: number): number {
  const given = Number(process.env[name]);
  return Number.isInteger(given) && given > 0 ? given : fallback;
}

export const shortId = (fullId: string) => fullId.split('/').pop()!;

// Every test has its own root; whatever a test started is stopped by runCleanups (each file's afterEach), also when it failed.
const cleanups: (() => Promise<void>)[] = [];
export async function runCleanups(): Promise<void> {
  for (const c of cleanups.splice(0).reverse()) await c();
}

export async function webRoot(queues: Record<string, object> = { test: {} }): Promise<WebRoot> {
  const w = await startWebRoot({ queues });
  cleanups.push(() => w.stop());
  // Paused, the messages stay in que/: nothing runs, so the ids counted are exactly the creates.
  for (const q of Object.keys(queues)) expect(await w.mgr.cmd('pause_queue', q)).toEqual(['ok', q]);
  return w;
}

/** A root with queue processes of its own (no rq-mgr), started paused. */
export async function queueRoot(names: string[]): Promise<{ t: TestRoot; procs: Record<string, QueueProc> }> {
  const t = await makeRoot();
  const procs: Record<string, QueueProc> = {};
  cleanups.push(async () => {
    await Promise.all(Object.values(procs).map((p) => p.stop()));
    await t.cleanup();
  });
  for (const name of names) {
    await addQueue(t.root, name);
    await fs.writeFile(queuePaths(t.root, name).pauseFile, '');
    procs[name] = await QueueProc.start(t.root, name);
  }
  return { t, procs };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const q = (root: string, queue: string, command: string, arg: unknown): Promise<any> =>
  queueCommand(queuePaths(root, queue).sock, command, arg, { timeoutMs: 10_000 });

export function shuffled<T>(xs: readonly T[], rnd: SeededRandom): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rnd.int(i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

export interface Outcome {
  status: number;
  body: string;
}

/** POST /q/<q>/new_message with the key in mesg or in the Idempotency-Key header; rejects on a network error. */
export function postCreate(port: number, queue: string, key: string, opts: { header?: boolean; agent?: http.Agent | false } = {}): Promise<Outcome> {
  const mesg: Record<string, unknown> = { dest: queue };
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (opts.header) headers['idempotency-key'] = key;
  else mesg.idempotency_key = key;
  const body = new URLSearchParams({ mesg: JSON.stringify(mesg) }).toString();
  headers['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: `/q/${queue}/new_message`, headers, agent: opts.agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer within 30 s for key ${key}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The full id of a 200 `["ok", id]` answer, else null. */
export function okId(o: Outcome): string | null {
  if (o.status !== 200) return null;
  const body = JSON.parse(o.body) as unknown[];
  return body[0] === 'ok' && typeof body[1] === 'string' ? body[1] : null;
}

/** Runs `work` over `items` with at most `limit` at a time. */
export async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

export async function journal(root: string, queue: string): Promise<{ k: string; id: string; at: number }[]> {
  const text = await fs.readFile(queuePaths(root, queue).keysFile, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}
