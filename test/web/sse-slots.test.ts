// A log tail whose client hangs up while the web is still looking its message up takes no stream slot: max_tails_per_message is not used up by clients gone.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebRoot, send, startWebRoot } from './web-root.js';

let w: WebRoot;
let queuePid = 0;

beforeAll(async () => {
  w = await startWebRoot({
    config: { max_tails_per_message: 1 },
    queues: { slots: {} },
    setup: async (root) => void (await fs.writeFile(path.join(root, 'config', 'slots.pause'), '')),
  });
  queuePid = await w.mgr.waitQueueUp('slots');
}, 60_000);
afterAll(async () => {
  if (queuePid > 1) process.kill(queuePid, 'SIGCONT');
  await w?.stop();
});

/** A request the web answers without any queue: once it is answered, what reached the web before it has been read. */
const barrier = async () => expect((await fetch(`${w.base}/favicon.ico`)).status).toBe(200);

describe('stream slots', () => {
  it('are not taken for a tail whose client left during the lookup', async () => {
    const id = await send(w.base, 'slots', { param1: 'waits' });
    const url = `${w.base}/q/slots/${id}/log/stdio.log/events`;
    // The queue process stopped: the web's lookup of the message waits for its answer.
    process.kill(queuePid, 'SIGSTOP');
    const gone = new AbortController();
    const pending = fetch(url, { signal: gone.signal }).catch((err: Error) => err);
    await barrier();
    gone.abort();
    expect(await pending).toBeInstanceOf(Error);
    await barrier();
    process.kill(queuePid, 'SIGCONT');
    // The one tail this message may have is still free.
    const tail = new AbortController();
    const res = await fetch(url, { signal: tail.signal });
    expect(res.status).toBe(200);
    tail.abort();
  });
});
