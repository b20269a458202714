// Crash tests: a worker process hammering a spool is SIGKILLed at random moments; recovery must leave a clean, complete spool.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueSpool } from '../../src/spool/queue-spool.js';
import { MSG_ID_RE } from '../../src/message/names.js';
import { HOST, ls, walk } from '../helpers/temp-spool.js';
import { seededRandom } from '../helpers/seeded-random.mjs';
import { recoverSpool } from '../../src/spool/recovery.js';

const PROJECT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const WORKER = path.join(PROJECT, 'test', 'helpers', 'spool-worker.mjs');
const QUEUE = 'crash';
const ROUNDS = 20;

/**
 * The worker runs the compiled spool: build dist/ when a compiled file is missing or older than its
 * source. (tsc builds incrementally and skips files whose content did not change, so after a build
 * only the presence of the output is required.)
 */
function ensureBuilt(): void {
  const sources = ['src/spool', 'src/message', 'src/config/paths.ts', 'src/errors.ts'].flatMap((p) => {
    const abs = path.join(PROJECT, p);
    return statSync(abs).isDirectory() ? execFileSync('find', [abs, '-name', '*.ts'], { encoding: 'utf8' }).split('\n').filter(Boolean) : [abs];
  });
  const compiled = (src: string) => path.join(PROJECT, 'dist', path.relative(path.join(PROJECT, 'src'), src).replace(/\.ts$/, '.js'));
  const stale = sources.some((src) => !existsSync(compiled(src)) || statSync(compiled(src)).mtimeMs < statSync(src).mtimeMs);
  if (!stale) return;
  try {
    execFileSync(process.execPath, [path.join(PROJECT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
      cwd: PROJECT,
      stdio: 'pipe',
    });
  } catch {
    // Type errors elsewhere in src/ do not stop tsc from emitting; the check below decides.
  }
  const missing = sources.map(compiled).filter((f) => !existsSync(f));
  if (missing.length) throw new Error(`could not build ${missing.join(', ')} (run npx tsc -p tsconfig.build.json)`);
}

interface Run {
  child: ChildProcess;
  lines: string[];
  ops: number;
  stderr: string;
  exited: Promise<void>;
  /** Resolves once the worker has reported `n` finished steps. */
  opsReached(n: number): Promise<void>;
}

function startWorker(root: string, source: string, seed: number): Run {
  const child = spawn(process.execPath, [WORKER, root, QUEUE, source, String(seed)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const waiters: { n: number; resolve: () => void }[] = [];
  const run: Run = {
    child,
    lines: [],
    ops: 0,
    stderr: '',
    exited: new Promise((r) => child.once('exit', () => r())),
    opsReached(n) {
      if (run.ops >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
  };
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    for (const line of parts) {
      run.lines.push(line);
      if (line.startsWith('op ')) run.ops++;
    }
    for (const w of waiters.filter((w) => run.ops >= w.n)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (run.stderr += c));
  return run;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let base: string;
beforeAll(async () => {
  ensureBuilt();
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-crash-'));
}, 120_000);
afterAll(() => base && fs.rm(base, { recursive: true, force: true }));

describe('SIGKILL at random moments, then recover()', () => {
  it(`leaves a clean and complete spool, ${ROUNDS} times over`, async () => {
    const root = path.join(base, 'root');
    const probe = new QueueSpool(root, QUEUE, { host: HOST });
    await probe.ensureDirs();
    const source = path.join(base, 'payload.bin');
    const payload = Buffer.from('attachment payload for the crash test\n'.repeat(100));
    await fs.writeFile(source, payload);
    const payloadMd5 = createHash('md5').update(payload).digest('hex');

    const acknowledged = new Set<string>(); // creates the worker saw succeed
    const removing = new Set<string>(); // deletes it started
    // One seed drives the kill points and every worker's choice of operations.
    const rng = seededRandom();
    const plan: { ops: number; delay: number; workerSeed: number }[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const workerSeed = rng.int(0x100000000);
      // Very early kills (during start-up and recovery, before any step), then deeper into the work.
      plan.push(i < 4 ? { ops: 0, delay: i * 15, workerSeed } : { ops: 1 + rng.int(i < 10 ? 40 : 250), delay: rng.next() * 30, workerSeed });
    }

    for (const [round, { ops, delay, workerSeed }] of plan.entries()) {
      const run = startWorker(root, source, workerSeed);
      let early = false;
      run.exited.then(() => (early = run.child.signalCode !== 'SIGKILL'));
      await Promise.race([run.opsReached(ops), run.exited]);
      await sleep(delay);
      run.child.kill('SIGKILL');
      await run.exited;
      expect(early, `worker exited on its own in round ${round} (${rng.replay}): ${run.stderr}`).toBe(false);
      expect(run.stderr, rng.replay).toBe('');
      for (const line of run.lines) {
        const [word, id] = line.split(' ');
        if (word === 'created') acknowledged.add(id);
        if (word === 'removing') removing.add(id);
      }

      const spool = new QueueSpool(root, QUEUE, { host: HOST });
      const rec = await recoverSpool(spool);
      const where = `round ${round} (killed after ${run.ops} steps + ${delay.toFixed(1)} ms; ${rng.replay})`;
      const st = spool.paths.state;

      expect(
        (await ls(st.prep)).filter((n) => n.startsWith('_')),
        where,
      ).toEqual([]);
      expect(await ls(path.join(spool.paths.dir, '.blank')), where).toEqual([]);
      expect(
        (await walk(spool.paths.dir)).filter((p) => p.endsWith('.tmp')),
        where,
      ).toEqual([]);
      expect(await ls(st.run), where).toEqual([]);
      expect(rec.broken, where).toEqual([]);

      // Every message dir is in exactly one state dir, under a valid id.
      const found = new Map<string, string[]>();
      const note = (id: string, state: string) => found.set(id, [...(found.get(id) ?? []), state]);
      for (const s of ['prep', 'que', 'run', 'err'] as const) {
        for (const n of await ls(st[s])) {
          const id = n.startsWith('.') && s === 'err' ? n.slice(1) : n;
          expect(MSG_ID_RE.test(id), `${where}: stray entry ${s}/${n}`).toBe(true);
          note(id, s);
        }
      }
      for (const s of ['done', 'relayed'] as const) for (const id of await spool.listHashed(s, Infinity)) note(id, s);
      for (const [id, states] of found) expect(states, `${where}: ${id}`).toHaveLength(1);

      // Every msg parses, names its own directory, and every attachment is the whole payload.
      for (const [id, [state]] of found) {
        const dirId = state === 'err' && !(await spool.exists('err', id)) ? `.${id}` : id;
        const dir = spool.msgDir(state as 'prep', dirId);
        const msg = JSON.parse(await fs.readFile(path.join(dir, 'msg'), 'utf8'));
        expect(msg.msg_id, `${where}: ${dir}`).toBe(id);
        for (const [name, info] of Object.entries(await spool.attachments(state as 'prep', dirId))) {
          expect(info.md5, `${where}: ${dir}/attach/${name}`).toBe(payloadMd5);
        }
      }

      // Nothing acknowledged is lost.
      for (const id of acknowledged) if (!removing.has(id)) expect(found.has(id), `${where}: acknowledged ${id} is missing`).toBe(true);

      // The recovered que is exactly what is in que/.
      expect(rec.que.map((m) => m.msg_id).sort(), where).toEqual(await spool.listFlat('que').then((x) => x.sort()));
      expect(rec.prep, where).toEqual((await spool.listFlat('prep')).sort().reverse());
    }
    expect(acknowledged.size, rng.replay).toBeGreaterThan(50);
  }, 240_000);
});
