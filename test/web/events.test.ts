// GET /events against real rq-mgr, web and queue processes: every move of 1,000 messages in order to two subscribers, filters, refusals, a queue restart's gap, the stream limit, the web's shutdown.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedEvent } from '../../src/ipc/feed-event.js';
import { MgrClient } from '../../src/ipc/mgr-client.js';
import { rootPaths } from '../../src/config/paths.js';
import { FIXTURES, waitFor } from '../helpers/rq-root.js';
import { SseReader } from '../helpers/sse-reader.js';
import { type WebRoot, startWebRoot } from './web-root.js';
import { mapLimit } from '../../src/spool/map-limit.js';

const DONE_SH = path.join(FIXTURES, 'scripts', 'done.sh');
const MAX_STREAMS = 4;
let w: WebRoot;
let B: string;

beforeAll(async () => {
  w = await startWebRoot({ config: { max_event_streams: MAX_STREAMS }, queues: { alpha: { script: DONE_SH, num_workers: 8 }, beta: { script: DONE_SH } } });
  B = w.base;
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

/** Creates a message straight on the queue socket (the stream is under test, not new_message); its short id. */
async function create(queue: string, fields: Record<string, unknown> = {}, command = 'create_message'): Promise<string> {
  const r = await w.mgr.q(queue, command, { dest: queue, param1: 'x', ...fields });
  if (r[0] !== 'ok') throw new Error(`${command}: ${JSON.stringify(r)}`);
  return String(r[1]).split('/').pop()!;
}

/** A stream, once its `ready` has come: from then on it misses nothing. */
async function subscribe(query = ''): Promise<{ sse: SseReader; ready: Record<string, { up: boolean; pid?: number; seq?: number }> }> {
  const sse = await SseReader.open(`${B}/events${query}`);
  const ready = JSON.parse((await sse.until('ready')).data).queues;
  return { sse, ready };
}

/** Reads moves until `done` holds for what was read; every event read is returned. */
async function readMoves(sse: SseReader, done: (evs: FeedEvent[]) => boolean): Promise<FeedEvent[]> {
  const out: FeedEvent[] = [];
  while (!done(out)) {
    const ev = await sse.next();
    if (!ev) throw new Error(`stream ended after ${out.length} moves`);
    if (ev.event === 'message') out.push(JSON.parse(ev.data) as FeedEvent);
    else throw new Error(`unexpected ${ev.event}: ${ev.data}`);
  }
  return out;
}

const step = (ev: FeedEvent) =>
  ev.type === 'moved' ? `moved:${ev.from}>${ev.to}` : ev.type === 'created' || ev.type === 'finished' ? `${ev.type}:${ev.to}` : ev.type;
const RUN = ['created:que', 'moved:que>run', 'started', 'moved:run>done', 'finished:done'];
/** Each message's steps, in the order they came. */
function stepsById(evs: FeedEvent[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const ev of evs) (out[ev.msg_id!] ??= []).push(step(ev));
  return out;
}
const finishedOf = (ids: string[]) => (evs: FeedEvent[]) => ids.every((id) => evs.some((e) => e.type === 'finished' && e.msg_id === id));

describe('GET /events', () => {
  it('delivers every move of 1,000 messages, in order, to two subscribers', async () => {
    const a = await subscribe('?queue=alpha');
    const b = await subscribe();
    expect(a.sse.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(a.sse.res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Object.keys(a.ready)).toEqual(['alpha']);
    expect(a.ready.alpha).toMatchObject({ up: true, pid: expect.any(Number), seq: expect.any(Number) });
    expect(Object.keys(b.ready).sort()).toEqual(['alpha', 'beta']);

    const ids = await mapLimit(
      Array.from({ length: 1000 }, (_, i) => i),
      16,
      () => create('alpha'),
    );
    const all = (evs: FeedEvent[]) => evs.filter((e) => e.type === 'finished').length === 1000;
    const [ea, eb] = await Promise.all([readMoves(a.sse, all), readMoves(b.sse, all)]);
    expect(eb).toEqual(ea);
    expect(ea.map((e) => e.seq)).toEqual(ea.map((_, i) => a.ready.alpha.seq! + 1 + i));
    const steps = stepsById(ea);
    expect(Object.keys(steps).sort()).toEqual([...ids].sort());
    expect(Object.values(steps).every((s) => s.join() === RUN.join())).toBe(true);
    // The SSE id of each move is <queue>:<seq>.
    expect(a.sse.events.at(-1)?.id).toBe(`alpha:${ea.at(-1)!.seq}`);
    a.sse.cancel();
    b.sse.cancel();
  }, 120_000);

  it('filters by queue and tag, by tag across queues, and by message: exactly the matching events', async () => {
    const all = await subscribe();
    const redBeta = await subscribe('?queue=beta&tag=red');
    const blue = await subscribe('?tag=blue,green');
    const m1 = await create('beta', { tags: ['red'] });
    const m2 = await create('beta', { tags: 'blue' });
    const m3 = await create('beta');
    const m4 = await create('alpha', { tags: ['red', 'blue'] });
    await readMoves(all.sse, finishedOf([m1, m2, m3, m4]));
    // A message followed by id: it is in prep when the stream opens, so its stream starts at the commit.
    const m5 = await create('alpha', { tags: ['red'] }, 'prep_message');
    const one = await subscribe(`?msg_id=${m5}`);
    expect((await w.mgr.q('alpha', 'commit_message', { msg_id: m5 }))[0]).toBe('ok');
    const s = await create('beta', { tags: ['red', 'blue'] });

    const got = await Promise.all([readMoves(redBeta.sse, finishedOf([s])), readMoves(blue.sse, finishedOf([s])), readMoves(one.sse, finishedOf([m5]))]);
    expect(got.map(stepsById)).toEqual([
      { [m1]: RUN, [s]: RUN },
      { [m2]: RUN, [m4]: RUN, [s]: RUN },
      { [m5]: ['moved:prep>que', 'moved:que>run', 'started', 'moved:run>done', 'finished:done'] },
    ]);
    expect(got[0].every((e) => e.queue === 'beta' && e.tags?.includes('red'))).toBe(true);
    for (const r of [all, redBeta, blue, one]) r.sse.cancel();
  });

  it('refuses a bad query with a 400 naming the field, before any stream starts', async () => {
    const expected = {
      '?queue=nope': '400 - queue: expected the name of a queue of this server (several: comma-separated), received "nope"',
      '?queue=alpha,..%2Fetc': '400 - queue: expected the name of a queue of this server (several: comma-separated), received "../etc"',
      '?tag=a%20b': '400 - tag[0]: expected a tag of 1-64 characters from A-Z a-z 0-9 . _ : @ + - (starting with a letter or digit), received "a b"',
      '?msg_id=123': '400 - msg_id: expected a message id like 20261121.1643.46.613.2164022, received "123"',
      '?msg_id[]=20261121.1643.46.613.1': '400 - msg_id: expected a message id like 20261121.1643.46.613.2164022, received ["20261121.1643.46.613.1"]',
      '?queue[x]=alpha': '400 - queue: expected the name of a queue of this server (several: comma-separated), received {"x":"alpha"}',
    };
    const answers: Record<string, string> = {};
    for (const q of Object.keys(expected)) {
      const res = await fetch(`${B}/events${q}`);
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      answers[q] = `${res.status === 400 ? '' : `(status ${res.status}) `}${await res.text()}`;
    }
    expect(answers).toEqual(expected);
  });

  it('tells a queue restart as gaps and carries on with the new process', async () => {
    const r = await subscribe('?queue=beta');
    const before = r.ready.beta.pid;
    await w.mgr.cmd('restart_queue', 'beta');
    const lost = JSON.parse((await r.sse.until('gap')).data);
    expect(lost).toMatchObject({ queue: 'beta', reason: expect.stringMatching(/^the feed of beta was lost: /) });
    const back = JSON.parse((await r.sse.until('gap')).data);
    expect(back).toMatchObject({ queue: 'beta', reason: expect.stringMatching(/^the feed of beta is back \(pid \d+\)$/) });
    expect(back.reason).not.toContain(`pid ${before})`);
    const id = await create('beta');
    const evs = await readMoves(r.sse, finishedOf([id]));
    expect(stepsById(evs)).toEqual({ [id]: RUN });
    expect(evs[0].seq).toBe(1);
    r.sse.cancel();
  });

  it(`serves at most max_event_streams (${MAX_STREAMS}) streams: 503 with Retry-After beyond`, async () => {
    // Streams of earlier tests end when the web sees their connections close: wait for their slots.
    const open = () =>
      waitFor(async () => {
        const res = await fetch(`${B}/events?queue=alpha`);
        if (res.status === 200) return new SseReader(res);
        await res.text();
        return false;
      }, 'a free event stream slot');
    const streams = [];
    for (let i = 0; i < MAX_STREAMS; i++) streams.push(await open());
    const refused = await fetch(`${B}/events`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.text()).toBe(
      `503 - events: ${MAX_STREAMS} event streams are open, the most this server serves (max_event_streams in config/config.json); try again later`,
    );
    streams.pop()!.cancel();
    streams.push(await open());
    for (const s of streams) s.cancel();
  });

  it('ends every stream with an end event when the web process stops', async () => {
    // The streams the limit test cancelled free their slots when the web sees them close.
    const r = await waitFor(async () => {
      try {
        return await subscribe('?queue=alpha');
      } catch (err) {
        if (/: 503 /.test((err as Error).message)) return false;
        throw err;
      }
    }, 'a free event stream slot');
    const status = await new MgrClient(rootPaths(w.root).mgrSock).status();
    if (!status.ok) throw new Error(`rq-mgr status: ${status.text}`);
    process.kill(status.value['[web]'].pid!, 'SIGTERM');
    const end = await r.sse.until('end');
    expect(JSON.parse(end.data)).toEqual({ reason: 'the web process is stopping' });
    expect(await r.sse.next()).toBeNull();
  });
});
