// Holds a real daemon at one point (test/helpers/hold-point.mjs) so a test can SIGKILL it exactly there: a rename of its spool, a write to one of its files, a request on a socket.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach } from 'vitest';
import { PROJECT, type QueueProc, waitFor } from './rq-root.js';

/** What the held call was: a rename's paths, a written or truncated file's path or a socket write's bytes (latin1); and who held. */
export interface Reached {
  pid: number;
  from?: string;
  to?: string;
  path?: string;
  payload?: string;
}

/** A held point; what `reached` gives is a rename's two paths unless said otherwise. */
export interface CrashPoint<R = { from: string; to: string }> {
  /** The environment to start the process with (QueueProc.start's or MgrProc.start's `env`). */
  env: NodeJS.ProcessEnv;
  /** Resolves once the process is frozen at the point (or, for a dropped send, has dropped it). */
  reached: (timeoutMs?: number) => Promise<R>;
  /** Lets the frozen process go on past the point, as if nothing had held it. */
  release: () => Promise<void>;
}

type Rule =
  | { kind: 'rename'; from: RegExp; to: RegExp; when: 'before' | 'after' }
  | { kind: 'write'; path: RegExp; when: 'before' | 'after' }
  | { kind: 'truncate'; path: RegExp; when: 'before' | 'after' }
  | { kind: 'send'; payload: RegExp; when: 'before' | 'drop' };

/**
 * The first call matching `rule` freezes the process (or, `drop`, loses the send). The process
 * reads a FIFO no one writes until release(): it cannot pass, and answers nothing, until then or
 * until it is killed. `name`: only the queue process of that name holds (one rq-mgr starts); the
 * point holds once per test, so a process started again with the same environment passes it.
 */
export async function holdAt(dir: string, rule: Rule, name?: string): Promise<CrashPoint<Reached>> {
  const fifo = path.join(dir, 'hold.fifo');
  const reached = path.join(dir, 'hold.reached');
  await fs.rm(reached, { force: true });
  await fs.rm(fifo, { force: true });
  execFileSync('mkfifo', [fifo]);
  const spec = {
    kind: rule.kind,
    when: rule.when,
    fifo,
    reached,
    name,
    ...(rule.kind === 'rename' ? { from: rule.from.source, to: rule.to.source } : {}),
    ...(rule.kind === 'write' || rule.kind === 'truncate' ? { path: rule.path.source } : {}),
    ...(rule.kind === 'send' ? { payload: rule.payload.source } : {}),
  };
  // Added to the preloads the test's own environment has: in a mutation run, the hook that reports
  // which mutants a daemon reached (test/mutation/stryker-children.ts), without which the held
  // process's code would count as covered by no test, and its mutants be run against none.
  const hold = `--import=${path.join(PROJECT, 'test', 'helpers', 'hold-point.mjs')}`;
  return {
    env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${hold}`.trim(), RQ_TEST_HOLD: JSON.stringify(spec) },
    reached: async (timeoutMs = 20_000) => {
      const text = await waitFor(() => fs.readFile(reached, 'utf8').catch(() => ''), 'the process to reach the held point', timeoutMs);
      return JSON.parse(text) as Reached;
    },
    release: () => fs.writeFile(fifo, 'go'),
  };
}

/**
 * The first rename whose source matches `from` and destination `to` freezes the process, before
 * it is done or just after (`when`).
 */
export async function holdAtRename(dir: string, rule: { from: RegExp; to: RegExp; when: 'before' | 'after' }): Promise<CrashPoint> {
  const point = await holdAt(dir, { kind: 'rename', ...rule });
  return {
    ...point,
    reached: async (timeoutMs?: number) => {
      const { from = '', to = '' } = await point.reached(timeoutMs);
      return { from, to };
    },
  };
}

/**
 * A queue frozen at a hold answers nothing, not even a stop: registers an afterEach (register it after
 * perTestRoot's, so it runs first) that kills the one a failed test left frozen. Returns what marks a
 * queue as frozen, handing it back.
 */
export function killFrozenAfterEach(ctx: { q?: QueueProc }): (q: QueueProc) => QueueProc {
  let frozen: QueueProc | undefined;
  afterEach(async () => {
    if (frozen && ctx.q === frozen) {
      await frozen.kill9();
      ctx.q = undefined;
    }
    frozen = undefined;
  });
  return (q) => (frozen = q);
}
