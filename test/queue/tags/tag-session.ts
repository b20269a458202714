// The tag tests' shared words: the tags journal of an in-process queue, and messages made waiting or finished.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { InProcess } from '../in-process.js';
import { endRun } from '../in-process-session.js';

export const journal = (q: InProcess) => path.join(q.root, 'queues', 'q', '.index', 'tags.jsonl');
export const journalLines = async (q: InProcess) =>
  (await fs.readFile(journal(q), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
export const ids = (page: { messages: { msg_id: string }[] }) => page.messages.map((m) => m.msg_id);

/** A message waiting in que an hour ahead (whole, in memory), one second after the last. */
export async function waiting(q: InProcess, fields: Record<string, unknown> = {}): Promise<string> {
  q.clock.ms += 1000;
  return (await q.send({ due: Math.floor(q.clock.ms / 1000) + 3600, ...fields })).msg_id;
}

/** A message finished to done (through the fake launcher's script `n`). */
export async function finished(q: InProcess, n: number, fields: Record<string, unknown> = {}): Promise<string> {
  q.clock.ms += 1000;
  const m = await q.send(fields);
  await endRun(q, n, m.msg_id, 'done fine');
  return m.msg_id;
}
