// The search command's listing filters: acknowledged or not, created range, sort by created/due/finished both ways, detail rows, not waiting for the index, refusals naming the argument; the matcher (fields, cut values, free text) and the sort alone.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { handleRequest } from '../../../src/queue/commands/commands.js';
import { type Entry, type SearchQuery, matches, sortHits } from '../../../src/queue/observers/search-filter.js';
import { type InProcess, inProcessQueue } from '../in-process.js';

const open: InProcess[] = [];
afterEach(async () => {
  for (const q of open.splice(0)) await q.close();
});

const ask = async (q: InProcess, arg: unknown) => JSON.parse(await handleRequest(q.queue, `search ${JSON.stringify(arg)}`, pino({ level: 'silent' })));
const ids = (reply: [string, { messages: { msg_id: string }[] }]) => reply[1].messages.map((m) => m.msg_id);

/** Three messages a second apart: a ends in err (acknowledged), b in done, c waits in que due an hour later. */
async function threeMessages() {
  const q = await inProcessQueue();
  open.push(q);
  const a = await q.send({ param1: 'a' });
  const ra = await q.launcher.nth(0);
  q.clock.ms += 1000;
  const b = await q.send({ param1: 'b' });
  q.clock.ms += 1000;
  const c = await q.send({ param1: 'c', due: Math.floor(q.clock.ms / 1000) + 3600 });
  // The index is read now, so the finish times below come from the moves' events.
  expect((await ask(q, {}))[1].total).toBe(3);
  q.clock.ms += 5000;
  let finished = q.next('finished', ({ msg }) => msg.msg_id === a.msg_id);
  ra.say('err broken');
  ra.exit(0);
  await finished;
  await q.queue.ops.ackErrs();
  const rb = await q.launcher.nth(1);
  q.clock.ms += 1000;
  finished = q.next('finished', ({ msg }) => msg.msg_id === b.msg_id);
  rb.say('done fine');
  rb.exit(0);
  await finished;
  return { q, a: a.msg_id, b: b.msg_id, c: c.msg_id, t0: Date.UTC(2026, 10, 25, 12, 0, 0) };
}

describe('search filters', () => {
  it('acked picks acknowledged errors only (or none of them); state err without it keeps both', async () => {
    const { q, a } = await threeMessages();
    expect(ids(await ask(q, { acked: true }))).toEqual([a]);
    expect((await ask(q, { acked: false }))[1].total).toBe(2);
    expect((await ask(q, { state: 'err', acked: false }))[1].total).toBe(0);
    expect(ids(await ask(q, { state: 'err' }))).toEqual([a]);
    // Null or an empty field (a form's) is no filter: the acknowledged one too.
    expect((await ask(q, { acked: null }))[1].total).toBe(3);
    expect((await ask(q, { acked: '' }))[1].total).toBe(3);
  });

  it('created_from and created_to bound the id time (from inclusive, to exclusive)', async () => {
    const { q, a, b, c, t0 } = await threeMessages();
    expect(ids(await ask(q, { created_from: t0 + 1000 }))).toEqual([c, b]);
    expect(ids(await ask(q, { created_to: t0 + 1000 }))).toEqual([a]);
    expect(ids(await ask(q, { created_from: t0 + 1000, created_to: t0 + 2000 }))).toEqual([b]);
  });

  it('sorts by created, due and finished, either way; unfinished messages after finished ones', async () => {
    const { q, a, b, c } = await threeMessages();
    expect(ids(await ask(q, {}))).toEqual([c, b, a]);
    expect(ids(await ask(q, { sort: 'created', order: 'asc' }))).toEqual([a, b, c]);
    expect(ids(await ask(q, { sort: 'due', order: 'desc' }))).toEqual([c, b, a]);
    expect(ids(await ask(q, { sort: 'finished', order: 'desc' }))).toEqual([b, a, c]);
    expect(ids(await ask(q, { sort: 'finished', order: 'asc' }))).toEqual([a, b, c]);
    // Paged after sorting.
    expect(ids(await ask(q, { sort: 'finished', order: 'asc', offset: 1, limit: 1 }))).toEqual([b]);
  });

  it('detail gives each row its status, last run time and finish time', async () => {
    const { q, a, b, c } = await threeMessages();
    const rows = (await ask(q, { detail: true }))[1].messages as { msg_id: string; status: string; ms: number | null; finished: number | null; acked?: true }[];
    const row = (id: string) => rows.find((r) => r.msg_id === id)!;
    expect(row(b)).toMatchObject({ status: 'done - fine', ms: 1000 });
    expect(row(b).finished).toBeGreaterThan(0);
    expect(row(a)).toMatchObject({ status: 'err - broken', acked: true });
    expect(row(c)).toMatchObject({ ms: null, finished: null, status: expect.stringMatching(/^que/) });
    // A later history line that is no move (tags changed) leaves the finish as it was.
    expect(await handleRequest(q.queue, `tag_message ${JSON.stringify({ msg_id: b, add: 'late' })}`, pino({ level: 'silent' }))).toBe('["ok",["late"]]');
    const again = (await ask(q, { detail: true }))[1].messages as { msg_id: string; finished: number | null }[];
    expect(again.find((r) => r.msg_id === b)!.finished).toBe(row(b).finished);
  });

  it('wait_ms bounds the wait for the first read of the messages: building, then the answer once read', async () => {
    const q = await inProcessQueue();
    open.push(q);
    await q.queue.ops.create({ dest: 'q', param1: 'x' } as never, false);
    const first = await ask(q, { wait_ms: 1 });
    // One message is read within a millisecond or not: either answer is right, and the read goes on.
    if (first[1].building) expect(first[1]).toMatchObject({ total: 0, messages: [], building: { read: expect.any(Number) } });
    await q.queue.stats.search.whenBuilt();
    expect((await ask(q, { wait_ms: 1 }))[1].total).toBe(1);
    expect(await ask(q, { wait_ms: 0 })).toEqual(['fail', expect.stringMatching(/^wait_ms: expected a whole number from 1 to 60000/)]);
  });

  it('refuses bad arguments by name', async () => {
    const q = await inProcessQueue();
    open.push(q);
    expect(await ask(q, { sort: 'size' })).toEqual(['fail', expect.stringMatching(/^sort: expected one of created, due, finished, received "size"/)]);
    expect(await ask(q, { order: 'up' })).toEqual(['fail', expect.stringMatching(/^order: expected one of asc, desc/)]);
    expect(await ask(q, { created_from: 'yesterday' })).toEqual(['fail', expect.stringMatching(/^created_from: expected epoch milliseconds/)]);
    expect(await ask(q, { created_from: 2000, created_to: 1000 })).toEqual(['fail', expect.stringMatching(/^created_to: expected a time after created_from/)]);
    expect(await ask(q, { acked: 'maybe' })).toEqual(['fail', expect.stringMatching(/^acked: expected true or false/)]);
  });
});

describe('matches: one entry against a query', () => {
  const ID = '20261121.1643.46.613.2164022';
  const query = (over: Partial<SearchQuery> = {}): SearchQuery => ({ fields: {}, exact: false, offset: 0, limit: 10, ...over });
  const judge = (e: Entry, exact: boolean, ...wanted: [string, string][]) => matches(ID, e, query({ exact }), wanted);
  const whole: Entry = { state: 'que', fields: { param1: 'hello', param2: 'world' } };
  // Cut at MAX_VALUE: the real value is longer and starts with this.
  const cut: Entry = { state: 'que', fields: { param1: 'abc', param2: 'world' }, cut: new Set(['param1']) };

  it('a whole value contains the text, or equals it with exact; a field it lacks never matches', () => {
    expect(judge(whole, false, ['param1', 'ell'])).toBe('yes');
    expect(judge(whole, false, ['param1', 'xyz'])).toBe('no');
    expect(judge(whole, true, ['param1', 'ell'])).toBe('no');
    expect(judge(whole, true, ['param1', 'hello'])).toBe('yes');
    expect(judge(whole, false, ['param3', ''])).toBe('no');
    // Object.prototype's names are fields no message has, not its functions (whose text holds "x").
    for (const name of ['constructor', 'toString', 'hasOwnProperty']) expect(judge(whole, false, [name, 'function']), name).toBe('no');
  });

  it('a cut value: a text it holds is a yes; one it does not hold, or an exact value longer and starting with it, only the message can tell', () => {
    expect(judge(cut, false, ['param1', 'bc'])).toBe('yes');
    expect(judge(cut, false, ['param1', 'zz'])).toBe('maybe');
    expect(judge(cut, true, ['param1', 'abcdef'])).toBe('maybe');
    // The real value is longer than the cut: it cannot equal the cut itself, a prefix of it, or a text ending with it.
    for (const no of ['abc', 'ab', 'zzabc', 'zzzzzz']) expect(judge(cut, true, ['param1', no]), no).toBe('no');
  });

  it('every field must match: one no is a no, else one maybe is a maybe', () => {
    expect(judge(cut, false, ['param2', 'or'], ['param1', 'bc'])).toBe('yes');
    expect(judge(cut, false, ['param2', 'or'], ['param1', 'zz'])).toBe('maybe');
    expect(judge(cut, false, ['param1', 'zz'], ['param2', 'xx'])).toBe('no');
  });

  it('free text: any one field that is not an id or a time contains it', () => {
    const e: Entry = { state: 'que', fields: { msg_id: ID, due: '1763743426', param1: 'hello', param2: 'world' } };
    const text = (t: string) => matches(ID, e, query({ text: t }), []);
    expect(text('wor')).toBe('yes');
    expect(text('zz')).toBe('no');
    expect(text('1763')).toBe('no');
    expect(text('1643')).toBe('no');
  });
});

describe('sortHits', () => {
  const entries = (keys: Record<string, number | undefined>) =>
    new Map<string, Entry>(
      Object.entries(keys).map(([id, k]) => [id, { state: 'done', fields: { due: String(k) }, ...(k === undefined ? {} : { finished: k }) }]),
    );

  it('by due or finished compares the numbers, either way, not the ids', () => {
    const e = entries({ a: 30, b: 10, c: 20 });
    expect(sortHits(['a', 'b', 'c'], e, 'due', 'asc')).toEqual(['b', 'c', 'a']);
    expect(sortHits(['a', 'b', 'c'], e, 'finished', 'desc')).toEqual(['a', 'c', 'b']);
  });

  it('a tie goes by id in the same direction; unfinished ones come last, by id', () => {
    const e = entries({ a: 5, b: 5, c: 1, u1: undefined, u2: undefined, u3: undefined });
    expect(sortHits(['a', 'b', 'c'], e, 'finished', 'desc')).toEqual(['b', 'a', 'c']);
    expect(sortHits(['b', 'a', 'c'], e, 'finished', 'asc')).toEqual(['c', 'a', 'b']);
    expect(sortHits(['u2', 'a', 'u1', 'u3', 'c'], e, 'finished', 'asc')).toEqual(['c', 'a', 'u1', 'u2', 'u3']);
    expect(sortHits(['u2', 'a', 'u1', 'u3', 'c'], e, 'finished', 'desc')).toEqual(['a', 'c', 'u3', 'u2', 'u1']);
  });
});
