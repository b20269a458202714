// What the rq dependency and limit tests share: bin/rq on a test root (send, the message dirs of a queue), refs and ids of full ids, the texts of refusals.
import fs from 'node:fs/promises';
import path from 'node:path';
import { queuePaths } from '../../src/config/paths.js';
import { type Run, runRq, sendmesg } from '../helpers/rq-cli.js';
import type { TestRoot } from '../helpers/rq-root.js';

export const shortId = (fullId: string) => fullId.split('/').pop()!;
/** `<queue>/<id>` of a full id. */
export const refOf = (fullId: string) => fullId.split('/').slice(-2).join('/');
export const later = () => String(Math.floor(Date.now() / 1000) + 3600);
export const NO_MSG = '20200101.0000.00.000.1';
export const REF_TEXT = 'a message ref such as test/20261121\\.1643\\.46\\.613\\.2164022';

/** bin/rq on `root`; `send` returns the full id it printed. */
export function cli(root: () => TestRoot) {
  const rq = (args: string[]): Promise<Run> => runRq(args, { root: root().root });
  const send = (dest: string, ...args: string[]): Promise<string> => sendmesg(rq, dest, ...args);
  /** Every message dir of a queue, in any state (done/ and relayed/ are hashed by date): a refusal adds none. */
  const messages = async (queue: string): Promise<string[]> => {
    const p = queuePaths(root().root, queue);
    const ids: string[] = [];
    for (const s of Object.values(p.state))
      for (const f of await fs.readdir(s, { recursive: true })) if (/^\d{8}\.\d{4}\.\d{2}\.\d{3}\.\d+$/.test(path.basename(f))) ids.push(f);
    return ids.sort();
  };
  return { rq, send, messages };
}
