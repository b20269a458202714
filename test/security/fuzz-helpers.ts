// Shared by the fuzz tests: raw HTTP requests, the set of message ids a queue holds, the seed fast-check runs with.
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { STATES } from '../../src/message/states.js';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { MgrClient } from '../../src/ipc/mgr-client.js';
import { testSeed } from '../helpers/seeded-random.mjs';

export interface RawResponse {
  status: number;
  body: string;
}

/**
 * One request exactly as given (no normalisation of path, headers or body); rejects after `timeoutMs`.
 * A server may answer and close before reading a large body (a 404 needs none of it): the write then
 * fails with EPIPE or ECONNRESET, which is reported as status 0, a refusal without a reply to read.
 */
export function rawRequest(
  port: number,
  method: string,
  rawPath: string,
  headers: Record<string, string>,
  body: Buffer | string | undefined,
  timeoutMs = 15_000,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: rawPath, headers, setHost: !('host' in headers), agent: false }, (res) => {
      // An event stream (GET /events) never ends by itself: its status is the answer.
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        resolve({ status: res.statusCode!, body: '' });
        return void req.destroy();
      }
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms to ${method} ${rawPath.slice(0, 200)}`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE' || err.code === 'ECONNRESET') resolve({ status: 0, body: `connection closed by the server (${err.code})` });
      else reject(err);
    });
    req.end(body);
  });
}

/** Every message id in the queue, whatever its state. */
export async function messageIds(root: string, queue: string): Promise<string[]> {
  const qp = queuePaths(root, queue);
  const ids: string[] = [];
  for (const state of STATES) {
    for (const name of await fs.readdir(path.join(qp.dir, state)).catch(() => [] as string[])) if (/^\d{8}\./.test(name)) ids.push(name);
  }
  return ids.sort();
}

/** How many runs: bounded in CI, more with RQ_FUZZ_RUNS. */
export function fuzzRuns(ciDefault: number): number {
  const given = Number(process.env.RQ_FUZZ_RUNS);
  return Number.isInteger(given) && given > 0 ? given : ciDefault;
}

/** The seed fast-check runs with: RQ_TEST_SEED replays a failure, whose report prints it. */
export const FUZZ_SEED = testSeed();

/** fast-check's report, with the counterexample cut short (nested keys run to megabytes) and the replay command. */
export function shortReport(out: {
  failed: boolean;
  seed: number;
  counterexamplePath?: string | null;
  counterexample?: unknown;
  errorInstance?: unknown;
  numRuns: number;
}): void {
  if (!out.failed) return;
  const example = JSON.stringify(out.counterexample, (_k, v: unknown) =>
    typeof v === 'string' && v.length > 200 ? `${v.slice(0, 200)}…(${v.length} chars)` : v,
  );
  const cause = out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
  throw new Error(
    `property failed after ${out.numRuns} runs; replay with RQ_TEST_SEED=${out.seed >>> 0} (path ${out.counterexamplePath})\n${cause.slice(0, 2000)}\ncounterexample: ${example?.slice(0, 3000)}`,
  );
}

/** The pid of every process rq-mgr supervises (web, timers, queues): a fuzz run ends with the same ones. */
export async function supervisedPids(root: string): Promise<Record<string, number | null>> {
  const r = await new MgrClient(rootPaths(root).mgrSock).status();
  if (!r.ok) throw new Error(`rq-mgr status: ${r.text}`);
  return Object.fromEntries(Object.entries(r.value).map(([name, w]) => [name, w.pid]));
}
