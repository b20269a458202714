// Holds a real queue process at one rename of its spool (test/helpers/hold-rename.mjs) so a test can SIGKILL it exactly there: between a decision's `msg` write and its move, say.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PROJECT, waitFor } from './rq-root.js';

export interface CrashPoint {
  /** The environment to start the queue process with (QueueProc.start's `env`). */
  env: NodeJS.ProcessEnv;
  /** Resolves with the rename's source and destination once the process is frozen at it. */
  reached: (timeoutMs?: number) => Promise<{ from: string; to: string }>;
}

/**
 * The first rename whose source matches `from` and destination `to` freezes the process, before
 * it is done or just after (`when`). The process reads a FIFO no one writes: it cannot pass, and
 * answers nothing, until it is killed.
 */
export async function holdAtRename(dir: string, rule: { from: RegExp; to: RegExp; when: 'before' | 'after' }): Promise<CrashPoint> {
  const fifo = path.join(dir, 'hold.fifo');
  const reached = path.join(dir, 'hold.reached');
  await fs.rm(reached, { force: true });
  await fs.rm(fifo, { force: true });
  execFileSync('mkfifo', [fifo]);
  const spec = { from: rule.from.source, to: rule.to.source, when: rule.when, fifo, reached };
  return {
    env: { NODE_OPTIONS: `--import=${path.join(PROJECT, 'test', 'helpers', 'hold-rename.mjs')}`, RQ_TEST_HOLD_RENAME: JSON.stringify(spec) },
    reached: async (timeoutMs = 20_000) => {
      const text = await waitFor(() => fs.readFile(reached, 'utf8').catch(() => ''), 'the queue process to reach the held rename', timeoutMs);
      const [from, to] = text.trim().split('\n');
      return { from, to };
    },
  };
}
