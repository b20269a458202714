// In-process queues for a test file: each closed after its test, and socket commands sent as lines with their replies read as JSON.
import pino from 'pino';
import { afterEach } from 'vitest';
import { handleRequest } from '../../src/queue/commands/commands.js';
import { type InProcess, inProcessQueue } from './in-process.js';

export const cmd = async (q: InProcess, command: string, arg: unknown = {}) =>
  JSON.parse(await handleRequest(q.queue, `${command} ${JSON.stringify(arg)}`, pino({ level: 'silent' })));

/** Registers, in the calling test file, the close of every queue it made; returns the maker of fresh queues (with `config` unless given one). */
export function inProcessQueues(config: Record<string, unknown> = {}): (...args: Parameters<typeof inProcessQueue>) => Promise<InProcess> {
  const open: InProcess[] = [];
  afterEach(async () => {
    for (const q of open.splice(0)) await q.close();
  });
  return async (...args) => {
    const q = await inProcessQueue(args[0] ?? config, args[1]);
    open.push(q);
    return q;
  };
}

/** The fake launcher's script `n` says `line` after `ms` on the queue's clock and exits 0; resolves once message `id`'s run has finished. */
export async function endRun(q: InProcess, n: number, id: string, line: string, ms = 0): Promise<void> {
  const s = await q.launcher.nth(n);
  q.clock.ms += ms;
  const finished = q.next('finished', ({ msg }) => msg.msg_id === id);
  s.say(line);
  s.exit(0);
  await finished;
}
