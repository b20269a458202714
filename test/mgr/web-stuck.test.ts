// A web whose event loop is stuck (here: stopped with SIGSTOP) would be taken as serving: rq-mgr hears no heartbeat for WEB_SILENT_MS,
// says so at warn, kills it and starts another, which serves; every queue reads DOWN to the fleet meanwhile (local-queues.ts).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEB_SILENT_MS } from '../../src/mgr/supervisor.js';
import { MgrProc } from '../helpers/mgr-proc.js';
import { type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';

let t: TestRoot;
let mgr: MgrProc;

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'a');
  mgr = await MgrProc.start(t.root);
  await mgr.waitQueueUp('a');
}, 60_000);
afterAll(async () => {
  await mgr?.stop();
  await t?.cleanup();
});

const webPid = async (): Promise<number | null> => ((await mgr.cmd('status'))[1] as Record<string, { pid: number | null }>)['[web]']?.pid ?? null;

describe('a stuck web', () => {
  it('is killed once it has said nothing for WEB_SILENT_MS, and another serves', { timeout: WEB_SILENT_MS * 3 }, async () => {
    const stuck = await waitFor(webPid, 'the web to run');
    await waitFor(async () => (await fetch(`http://127.0.0.1:${t.port}/healthz`)).ok, 'the web to serve');
    process.kill(stuck, 'SIGSTOP');
    const next = await waitFor(
      async () => {
        const pid = await webPid();
        return pid !== null && pid !== stuck ? pid : null;
      },
      'another web',
      WEB_SILENT_MS * 2,
    );
    expect(next).not.toBe(stuck);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${t.port}/healthz`).catch(() => null))?.ok, 'the new web to serve');
    const log = await fs.readFile(path.join(t.root, 'log', 'mgr-test.log'), 'utf8');
    expect(log).toContain(`"msg":"[web] said nothing for ${WEB_SILENT_MS / 1000} s: stuck; SIGKILL and restart"`);
    // The stopped process is gone, not left stopped.
    await expect(fs.access(`/proc/${stuck}`)).rejects.toThrow(/ENOENT/);
  });
});
