// A message's history as tests read it: from its queue (get_history) or from its file on disk.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { HistoryLine } from '../../src/ipc/history-line.js';
import type { QueueProc } from './rq-root.js';

/** The history the queue answers for `id`; a refusal fails the test with the reply. */
export async function historyOf(q: QueueProc, id: string): Promise<HistoryLine[]> {
  const r = await q.cmd('get_history', { msg_id: id });
  if (r[0] !== 'ok') throw new Error(`get_history ${id}: ${JSON.stringify(r)}`);
  return r[1];
}

/** The history file of the message dir `dir`, line by line. */
export async function historyFile(dir: string): Promise<HistoryLine[]> {
  const text = await fs.readFile(path.join(dir, 'history'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as HistoryLine);
}
