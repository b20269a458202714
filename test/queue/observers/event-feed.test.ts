// The live feed of a real queue process (queues/<q>/events.sock): two readers see every move of 1,000 messages, in order, numbered, identical; status, tags, deletes; the socket is private and leaves with the queue.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FeedClient } from '../../../src/ipc/feed-client.js';
import type { FeedEvent, FeedHello } from '../../../src/ipc/feed-event.js';
import { perTestRoot } from '../../helpers/per-test-root.js';
import { FIXTURES, QueueProc, addQueue } from '../../helpers/rq-root.js';
import { mapLimit } from '../../../src/spool/map-limit.js';

const DONE_SH = path.join(FIXTURES, 'scripts', 'done.sh');
const t = perTestRoot();

/** A feed reader that keeps every event and lets a test wait for a condition on them (checked on each event, no polling). */
interface Reader {
  hello: FeedHello;
  events: FeedEvent[];
  closed: string | null;
  until(what: string, ok: (events: FeedEvent[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): void;
}

async function reader(sock: string): Promise<Reader> {
  const events: FeedEvent[] = [];
  const waits = new Set<() => void>();
  const r = { events, closed: null as string | null } as Reader;
  const { client, hello } = await FeedClient.open(sock, {
    event: (ev) => {
      events.push(ev);
      for (const w of [...waits]) w();
    },
    closed: (why) => {
      r.closed = why;
      for (const w of [...waits]) w();
    },
  });
  r.hello = hello;
  r.close = () => client.close();
  r.until = (what, ok, timeoutMs = 30_000) =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (!ok(events)) return void (r.closed !== null && done(new Error(`feed closed (${r.closed}) before ${what}`)));
        done();
      };
      const timer = setTimeout(
        () => done(new Error(`timed out waiting for ${what}; ${events.length} events, last ${JSON.stringify(events.at(-1))}`)),
        timeoutMs,
      );
      const done = (err?: Error) => {
        clearTimeout(timer);
        waits.delete(check);
        if (err) reject(err);
        else resolve();
      };
      waits.add(check);
      check();
    });
  return r;
}

const step = (ev: FeedEvent) =>
  ev.type === 'moved' ? `moved:${ev.from}>${ev.to}` : ev.type === 'created' || ev.type === 'finished' ? `${ev.type}:${ev.to}` : ev.type;

describe('the queue event feed', () => {
  it('delivers every move of 1,000 messages, in order and numbered, to two readers alike', async () => {
    await addQueue(t.t.root, 'feed', { script: DONE_SH, num_workers: 8 });
    t.q = await QueueProc.start(t.t.root, 'feed');
    const [a, b] = [await reader(t.q.paths.eventsSock), await reader(t.q.paths.eventsSock)];
    expect(a.hello).toMatchObject({ type: 'hello', queue: 'feed', pid: t.q.pid });
    expect(b.hello.seq).toBe(a.hello.seq);

    const ids = await mapLimit(
      Array.from({ length: 1000 }, (_, i) => i),
      16,
      () => t.q!.send({ param1: 'x' }),
    );
    const finished = (evs: FeedEvent[]) => evs.filter((e) => e.type === 'finished').length === 1000;
    // ~15-20 ms of fsyncs and a spawn per message on a 2-core box: the runs, not the feed, set the pace.
    await Promise.all([a.until('1,000 finished', finished, 100_000), b.until('1,000 finished', finished, 100_000)]);

    expect(b.events).toEqual(a.events);
    expect(a.events.map((e) => e.seq)).toEqual(a.events.map((_, i) => a.hello.seq + 1 + i));
    const byId = new Map<string, string[]>();
    for (const ev of a.events) {
      expect(ev).toMatchObject({ queue: 'feed', at: expect.any(Number) });
      byId.set(ev.msg_id!, [...(byId.get(ev.msg_id!) ?? []), step(ev)]);
    }
    expect([...byId.keys()].sort()).toEqual([...ids].sort());
    for (const [id, steps] of byId) expect([id, steps]).toEqual([id, ['created:que', 'moved:que>run', 'started', 'moved:run>done', 'finished:done']]);
    expect(a.events.filter((e) => e.type === 'started').every((e) => typeof e.pid === 'number' && e.pid > 0)).toBe(true);
    a.close();
    b.close();
  }, 120_000);

  it("says each run's end with the status get_message gives, the completion line's text for a classic script", async () => {
    await addQueue(t.t.root, 'ends', {});
    t.q = await QueueProc.start(t.t.root, 'ends');
    const r = await reader(t.q.paths.eventsSock);
    const ids: Record<string, string> = {};
    for (const verb of ['done', 'err', 'nothing']) ids[verb] = await t.q.send({ param1: verb });
    const ended = (evs: FeedEvent[]) => evs.filter((e) => e.type === 'finished').length === 3;
    await r.until('3 finished', ended);
    const finished = Object.fromEntries(r.events.filter((e) => e.type === 'finished').map((e) => [e.msg_id, e]));
    expect(finished[ids.done]).toMatchObject({ to: 'done', status: 'done - done sleeping' });
    expect(finished[ids.err]).toMatchObject({ to: 'err', status: 'err - by design' });
    // No completion line, no status line: nothing to say.
    expect(finished[ids.nothing]).toMatchObject({ to: 'err' });
    expect(finished[ids.nothing]).not.toHaveProperty('status');
    for (const verb of ['done', 'err']) {
      const m = await t.q.cmd('get_message', { msg_id: ids[verb] });
      expect(m[1].status).toBe(finished[ids[verb]].status);
    }
    r.close();
  });

  it('tells status changes, a tagged message with its tags, and its deletion (tags still known)', async () => {
    await addQueue(t.t.root, 'tagged', { script: DONE_SH });
    t.q = await QueueProc.start(t.t.root, 'tagged');
    const r = await reader(t.q.paths.eventsSock);
    const pause = path.join(t.t.root, 'config', 'tagged.pause');
    await fs.writeFile(pause, '');
    await r.until('PAUSE', (evs) => evs.some((e) => e.type === 'status' && e.status === 'PAUSE'));
    const id = await t.q.send({ param1: 'x', tags: 'alpha,beta' });
    await r.until('created', (evs) => evs.some((e) => e.type === 'created'));
    expect(await t.q.cmd('delete_message', { msg_id: id })).toEqual(['ok', 'msg deleted']);
    await r.until('removed', (evs) => evs.some((e) => e.type === 'removed'));
    await fs.rm(pause);
    await r.until('UP', (evs) => evs.some((e) => e.type === 'status' && e.status === 'UP'));
    expect(r.events.map(({ seq: _s, at: _a, ...rest }) => rest)).toEqual([
      { queue: 'tagged', type: 'status', status: 'PAUSE' },
      { queue: 'tagged', type: 'created', msg_id: id, to: 'que', tags: ['alpha', 'beta'] },
      { queue: 'tagged', type: 'removed', msg_id: id, from: 'que', tags: ['alpha', 'beta'] },
      { queue: 'tagged', type: 'status', status: 'UP' },
    ]);
    r.close();
  });

  it('is a private socket that leaves with the queue, ending its readers; a stale one after a crash is replaced', async () => {
    await addQueue(t.t.root, 'life', { script: DONE_SH });
    t.q = await QueueProc.start(t.t.root, 'life');
    const sock = t.q.paths.eventsSock;
    const st = await fs.stat(sock);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
    const r = await reader(sock);
    await t.q.stop();
    await r.until('the end of the feed', () => r.closed !== null);
    expect(r.closed).toBe('the queue closed the feed');
    await expect(fs.stat(sock)).rejects.toThrow(/ENOENT/);
    await expect(FeedClient.open(sock, { event: () => undefined, closed: () => undefined })).rejects.toMatchObject({ code: 'RQ_ERR_NO_REPLY' });

    t.q = await QueueProc.start(t.t.root, 'life');
    await t.q.kill9();
    expect((await fs.stat(sock)).isSocket()).toBe(true);
    t.q = await QueueProc.start(t.t.root, 'life');
    const again = await reader(sock);
    expect(again.hello).toMatchObject({ pid: t.q.pid, seq: 0 });
    const id = await t.q.send({ param1: 'x' });
    await again.until('its finish', (evs) => evs.some((e) => e.type === 'finished' && e.msg_id === id));
    again.close();
  });
});
