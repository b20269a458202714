// A relay resumed after a crash (docs/relay.md, "Resume or prep"): its far copy was committed, the relay queue was SIGKILLed before it heard so, and the far copy then failed there (err). The next attempt finds it by job/relay_id and ends relayed, with no second delivery.
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { VERBS_SH, waitFor } from '../helpers/rq-root.js';
import { Host } from './hosts.js';

// The relay's back-off (count² · 10 s) scaled down, inherited by A's rq-mgr (docs/relay.md).
process.env.RQ_RELAY_BACKOFF_SCALE = '0.02';

let A: Host;
let B: Host;

beforeAll(async () => {
  [A, B] = await Promise.all([Host.start(), Host.start({ queues: { fails: { script: VERBS_SH } } })]);
}, 90_000);
afterAll(async () => {
  await Promise.all([A?.stop(), B?.stop()]);
});

it('the far copy committed, the relay queue killed before it recorded relayed, the far copy then err: the restarted relay ends relayed, one far copy', async () => {
  const proxy = await holdAfterFirstCommit(B.port);
  try {
    const id = await A.send('relay', { dest: `http://127.0.0.1:${proxy.port}/q/fails`, param1: 'err' });
    // B has committed the copy and answered; the relay does not get the answer.
    await proxy.commitDone;
    const relayPid = await A.mgr!.waitQueueUp('relay');
    process.kill(relayPid, 'SIGKILL');
    const far = await waitFor(
      async () => {
        const copies = (await B.messages('fails')).filter((m) => m.param1 === 'err');
        return copies.length === 1 && copies[0].state === 'err' ? copies[0] : false;
      },
      'the far copy to fail on B',
      20_000,
    );
    proxy.release();

    const local = await A.waitState('relay', id, ['relayed', 'err'], 30_000);
    expect(local.state).toBe('relayed');
    expect(local.status).toBe(`relayed - ${B.url('fails')}/${far.msg_id}`);
    expect((await B.messages('fails')).filter((m) => m.orig_msg_id === local.orig_msg_id).map((m) => m.msg_id)).toEqual([far.msg_id]);
    expect(proxy.count('prep')).toBe(1);
    expect(proxy.count('commit')).toBe(1);
    const runs = ((await A.q('relay', 'get_history', { msg_id: id }))[1] as { from?: string; to?: string; reason?: string }[]).filter((l) => l.from === 'run');
    expect(runs.map((l) => l.to)).toEqual(['que', 'relayed']);
    expect(await A.stdio('relay', id)).toMatch(/far copy \S+ is already err: an earlier attempt committed it/);
  } finally {
    await proxy.close();
  }
}, 90_000);

/**
 * An HTTP proxy to the far web process. The first commit (`_method=commit`) is passed on and B's
 * answer is read but never given to the relay; from then on every request is held until
 * `release()`, which drops the held commit's connection and passes everything through.
 */
async function holdAfterFirstCommit(farPort: number) {
  let held: net.Socket | null = null;
  let released = false;
  const waiting: (() => void)[] = [];
  const seen = { prep: 0, commit: 0 };
  let committed!: () => void;
  const commitDone = new Promise<void>((r) => (committed = r));
  const forward = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, withhold: boolean) => {
    const up = http.request({ host: '127.0.0.1', port: farPort, path: req.url, method: req.method, headers: req.headers }, (upRes) => {
      if (withhold) {
        upRes.resume();
        upRes.on('end', committed);
        return;
      }
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
    });
    up.on('error', () => res.destroy());
    up.end(body);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const text = body.toString();
      if (req.method === 'POST' && req.url?.endsWith('/new_message')) seen.prep++;
      const commit = req.method === 'POST' && text.includes('_method=commit');
      if (commit) seen.commit++;
      if (commit && held === null && !released) {
        held = req.socket;
        return forward(req, res, body, true);
      }
      if (held !== null && !released) return void waiting.push(() => forward(req, res, body, false));
      forward(req, res, body, false);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    commitDone,
    count: (what: 'prep' | 'commit') => seen[what],
    release: () => {
      released = true;
      (held as net.Socket | null)?.destroy();
      for (const go of waiting.splice(0)) go();
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}
