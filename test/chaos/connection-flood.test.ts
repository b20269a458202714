// Connection floods: idle keep-alive connections, SSE log tails, a slow drip and a silent socket against the web, then held
// connections against a queue socket; meanwhile a normal client keeps creating messages. The web's memory and sockets stay bounded,
// the excess takes the place of idle connections (503/429 with Retry-After only where none is idle; a busy reply on the queue
// socket), the normal client keeps being served, and every message it was told about exists. CI sizes by default; RQ_CHAOS_BIG=1
// for 5,000 idle connections and 2,000 tails.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { queueCommand } from '../../src/ipc/rq1.js';
import { DEFAULT_MAX_SOCKET_CONNECTIONS } from '../../src/ipc/socket-server.js';
import { DEFAULT_WEB_LIMITS } from '../../src/config/web-limits.js';
import { waitFor } from '../helpers/rq-root.js';
import { type WebRoot, send, startWebRoot, waitState } from '../web/web-root.js';
import { Flooder, NormalClient, SOCKETS_BOUND, n, outcomes, rssKiB, slowClient, webSockets } from './flood-clients.js';

const BIG = process.env.RQ_CHAOS_BIG === '1';
const SIZE = BIG ? { idle: 5000, tails: 2000, tailMessages: 20, queueConns: 5000 } : { idle: 1000, tails: 300, tailMessages: 2, queueConns: 600 };
const L = DEFAULT_WEB_LIMITS;
/** Short, so the slow drip is cut within the test; idle keep-alive connections are held for the whole test instead. */
const HEADERS_TIMEOUT_S = 3;
/**
 * However big the flood, the web holds at most max_connections (1024) connections, of which at most
 * max_sse_streams are streams. Measured: a log tail ~50 KiB (its watches, file handle, hub listener
 * and stream buffers), an idle keep-alive connection ~25 KiB; so 64 KiB for each of 1024, plus 32 MiB
 * of garbage-collector headroom. Measured growth: +31 MiB at CI sizes, +52 MiB at RQ_CHAOS_BIG
 * (2,000 tails had grown the web by 248 MB before the limits).
 */
const RSS_GROWTH_BOUND_MIB = (L.maxConnections * 64) / 1024 + 32;
let w: WebRoot;
let dir: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-flood-'));
  const slow = path.join(dir, 'slow.sh');
  // Writes a line to its log, then runs until rq-mgr stops it: a message whose log tails stay open.
  await fs.writeFile(slow, '#!/bin/bash\necho "running $RQ_MSG_ID"\nexec sleep 600\n', { mode: 0o755 });
  w = await startWebRoot({
    config: { headers_timeout_s: HEADERS_TIMEOUT_S, keep_alive_timeout_s: 600 },
    queues: { test: {}, slow: { script: slow, num_workers: SIZE.tailMessages } },
  });
}, 60_000);
afterAll(async () => {
  await w?.stop();
  await fs.rm(dir, { recursive: true, force: true });
});

describe(`connection flood (${BIG ? 'RQ_CHAOS_BIG' : 'CI'} sizes: ${JSON.stringify(SIZE)})`, () => {
  it(
    'keeps the web bounded and serving, makes room from idle connections or refuses with Retry-After, and orphans no message',
    { timeout: BIG ? 600_000 : 180_000 },
    async () => {
      const webPid = (await w.mgr.cmd('status'))[1]['[web]'].pid as number;
      expect(Number.isInteger(webPid) && webPid > 1).toBe(true);
      const tailIds: string[] = [];
      for (let i = 0; i < SIZE.tailMessages; i++) tailIds.push(await send(w.base, 'slow', {}));
      for (const id of tailIds) await waitState(w.base, 'slow', id, ['run']);
      const normal = new NormalClient(w.port);
      normal.start();
      await normal.served(5, 'before the flood');
      const baseline = await rssKiB(webPid);
      let peak = baseline;
      const sample = async () => (peak = Math.max(peak, await rssKiB(webPid)));
      const flood = new Flooder();
      try {
        const drip = slowClient(w.port, '127.0.0.3', `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Drip: ${'d'.repeat(200)}\r\n\r\n`);
        const silent = slowClient(w.port, '127.0.0.4', '');

        // 1. SSE log tails, 50 per client address, spread over the running messages.
        const tails = flood.http(
          w.port,
          Array.from({ length: SIZE.tails }, (_, i) => ({
            from: `127.0.2.${1 + Math.floor(i / 50)}`,
            path: `/q/slow/${tailIds[i % tailIds.length]}/log/stdio.log/events`,
            sse: true,
          })),
        );
        const t = await tails;
        const tailsServed = Math.min(L.maxSseStreams, SIZE.tailMessages * Math.min(L.maxTailsPerMessage, Math.ceil(SIZE.tails / SIZE.tailMessages)));
        expect(n(t, '200')).toBeLessThanOrEqual(tailsServed);
        // A refused tail's connection may still be counted for a moment when the next arrives: at most a few are refused at the door instead.
        expect(n(t, '200')).toBeGreaterThanOrEqual(tailsServed * 0.9);
        expect(n(t, '503')).toBe(SIZE.tails - n(t, '200'));
        expect(t.retryAfterMissing).toBe(0);
        await sample();
        await normal.served(3, 'with the tails open');

        // 2. One address opens far more idle keep-alive connections than it may hold: each past its cap takes the place of
        // its oldest idle one (or is refused 429 while all of them are busy or just accepted); the connections it holds never
        // pass its cap, and the web's sockets stay bounded.
        const one = await flood.http(
          w.port,
          Array.from({ length: SIZE.idle }, () => ({ from: '127.0.0.2', path: '/favicon.ico' })),
        );
        expect(outcomes(one), JSON.stringify(one.counts)).toBe(SIZE.idle);
        expect(n(one, '200')).toBeGreaterThanOrEqual(L.maxPerAddress);
        expect(n(one, '503')).toBe(0);
        expect(one.retryAfterMissing).toBe(0);
        expect(await webSockets(webPid)).toBeLessThanOrEqual(SOCKETS_BOUND);
        await sample();
        await normal.served(3, 'with one address flooding');

        // 3. Many addresses, each under its own limit, together past max_connections: idle connections of the address holding
        // the most make room (127.0.0.2's first), so most are served; the tails are busy and stay.
        const many = await flood.http(
          w.port,
          Array.from({ length: SIZE.idle }, (_, i) => ({ from: `127.0.1.${1 + Math.floor(i / 100)}`, path: '/favicon.ico' })),
        );
        expect(outcomes(many), JSON.stringify(many.counts)).toBe(SIZE.idle);
        expect(n(many, '200')).toBeGreaterThanOrEqual(SIZE.idle / 2);
        expect(many.retryAfterMissing).toBe(0);
        expect(await webSockets(webPid)).toBeLessThanOrEqual(SOCKETS_BOUND);
        await sample();
        // Its one connection is the smallest holding of any address: the flood's own idle connections make room, never it.
        await normal.served(3, 'with the server full');
        await sample();

        // The slow drip and the silent socket were cut by the headers timeout (checked every second), answered 408.
        for (const c of [await drip, await silent]) {
          expect(c.answer).toMatch(/^HTTP\/1\.1 408 /);
          expect(c.ms).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_S * 1000 - 100);
          expect(c.ms).toBeLessThan(HEADERS_TIMEOUT_S * 1000 + 5000);
        }
        for (const b of [tails, one, many] as unknown as { id: string }[]) await flood.release(b.id);
        await normal.served(3, 'after the web flood');

        // 4. The queue socket: held connections past max_socket_connections get the busy reply; a create is still answered.
        const sock = queuePaths(w.root, 'test').sock;
        const qflood = flood.unix(sock, SIZE.queueConns);
        const q = await qflood;
        expect(n(q, 'pong')).toBeLessThanOrEqual(DEFAULT_MAX_SOCKET_CONNECTIONS);
        expect(n(q, 'refused')).toBe(SIZE.queueConns - n(q, 'pong'));
        expect(q.texts[0]).toMatch(/connections are open on .*queue\.sock, the most it serves \(max_socket_connections/);
        const during = (await queueCommand(sock, 'create_message', { dest: 'test', param1: 'during the socket flood' }, { timeoutMs: 10_000 })) as [
          string,
          string,
        ];
        expect(during[0]).toBe('fail');
        expect(during[1]).toMatch(/max_socket_connections/);
        // The web's connection to the queue was open before: its creates keep going through.
        await normal.served(3, 'with the queue socket full');
        await flood.release((qflood as unknown as { id: string }).id);
        const after = (await waitFor(async () => {
          const r = (await queueCommand(sock, 'create_message', { dest: 'test', param1: 'after the socket flood' }, { timeoutMs: 10_000 })) as [string, string];
          return r[0] === 'ok' ? r : false;
        }, 'a create once the held connections are gone')) as [string, string];
        expect(after[1]).toMatch(/\/test\//);
      } finally {
        await normal.stop();
        await flood.stop();
      }

      expect(normal.dropped).toEqual([]);
      for (const r of normal.refusals) expect(r).toMatch(/^(429|503) retry-after=\d+ /);
      for (const id of normal.acknowledged)
        expect(((await queueCommand(queuePaths(w.root, 'test').sock, 'get_message_status', { msg_id: id }, { timeoutMs: 10_000 })) as unknown[])[0], id).toBe(
          'ok',
        );
      const grownMiB = (peak - baseline) / 1024;
      console.log(
        `web RSS: baseline ${(baseline / 1024).toFixed(1)} MiB, peak ${(peak / 1024).toFixed(1)} MiB (+${grownMiB.toFixed(1)} MiB); normal client: ${normal.acknowledged.length} created, ${normal.refusals.length} refused`,
      );
      expect(grownMiB).toBeLessThan(RSS_GROWTH_BOUND_MIB);
    },
  );
});
