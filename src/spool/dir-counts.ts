// Counting a queue's messages from its state directories alone, for when its process cannot be asked (a web page of a queue that is not running).
import fsp from 'node:fs/promises';
import type { StateCounts } from '../message/states.js';
import { STATES, type State } from '../message/states.js';
import { MSG_ID_RE } from '../message/names.js';
import { hashCount } from './hash-dir.js';

export type DirCounts = StateCounts & { err_acked: number };

/** Read-only (nothing is moved): each flat state dir listed once, done/ and relayed/ walked through their hash dirs. */
export async function countStateDirs(stateDirs: Record<State, string>): Promise<DirCounts> {
  const flat = async (dir: string) => (await fsp.readdir(dir).catch(() => [] as string[])).filter((n) => MSG_ID_RE.test(n.replace(/^\./, '')));
  const out = { err_acked: 0 } as DirCounts;
  await Promise.all(
    STATES.map(async (s) => {
      if (s === 'done' || s === 'relayed') return void (out[s] = await hashCount(stateDirs[s]).catch(() => 0));
      const names = await flat(stateDirs[s]);
      out[s] = names.filter((n) => !n.startsWith('.')).length;
      if (s === 'err') out.err_acked = names.length - out.err;
    }),
  );
  return out;
}
