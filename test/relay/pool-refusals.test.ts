// A pool dest on a host without a fleet is refused by the CLI, the queue socket and HTTP alike, naming dest; nothing enters the relay queue.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, run } from '../helpers/mgr-proc.js';
import { Host } from './hosts.js';

let A: Host;
beforeAll(async () => {
  A = await Host.start({ queues: { work: {} } });
}, 60_000);
afterAll(async () => {
  await A?.stop();
});

const NO_FLEET = 'dest: expected a queue name or an http(s) URL (fleet:<queue> needs this host in a fleet; config.json names none), received "fleet:work"';

describe('fleet:<queue> without a fleet', () => {
  it('is refused over the socket, by the CLI and over HTTP, naming dest', async () => {
    expect(await A.q('relay', 'create_message', { dest: 'fleet:work' })).toEqual(['fail', NO_FLEET]);
    const cli = await run(BIN('rq'), ['sendmesg', '--root', A.root, '--dest', 'fleet:work']).then(
      () => null,
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    expect(cli?.code).toBe(1);
    expect(`${cli?.stdout}${cli?.stderr}`).toContain(NO_FLEET);
    const res = await fetch(`${A.base}/q/relay/new_message`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ x_format: 'json', mesg: JSON.stringify({ dest: 'fleet:work' }) }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(['fail', NO_FLEET]);
    expect(await A.q('relay', 'messages', { state: 'que' })).toEqual([]);
  });
});
