// listPage and listCounts against a scripted queue client: what the search is asked, each row's fields from a detail row, attempts without a history, the building reply, and who counts.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { idTime } from '../../src/message/message-id.js';
import { listCounts, listPage } from '../../src/web/message-list.js';
import type { ListFilter } from '../../src/web/list-params.js';
import type { QueueSnapshot } from '../../src/web/queue-snapshot.js';
import type { WebContext } from '../../src/web/web-context.js';

const ID = '20261121.1643.46.613.1';
const F: ListFilter = { sort: 'created', order: 'desc', offset: 0, limit: 50 };
let root: string;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-list-units-'));
  const state = queuePaths(root, 'q').state;
  for (const dir of Object.values(state)) await fs.mkdir(dir, { recursive: true });
  for (const name of [ID, '20261121.1643.46.613.2', '.20261121.1643.46.613.3', 'not-a-message']) await fs.mkdir(path.join(state.err, name));
  await fs.mkdir(path.join(state.que, '20261121.1643.46.613.4'));
});
afterAll(() => fs.rm(root, { recursive: true, force: true }));

/** A context whose queue `q` answers search and metrics as given, and records what search was asked. */
function ctx(answers: { search?: unknown; metrics?: unknown | Error }, asked: unknown[] = []): WebContext {
  return {
    deps: { root },
    queue: () => ({
      search: async (args: unknown) => {
        asked.push(args);
        return answers.search;
      },
      metrics: async () => {
        if (answers.metrics instanceof Error) throw answers.metrics;
        return answers.metrics;
      },
    }),
  } as unknown as WebContext;
}

const row = (over: Record<string, unknown> = {}) => ({ msg_id: ID, state: 'done', fields: {}, ...over });

describe('listPage', () => {
  it('asks search for detail rows with the filter, and wait_ms only when given', async () => {
    const asked: unknown[] = [];
    const c = ctx({ search: { ok: true, value: { total: 0, messages: [] } } }, asked);
    await listPage(c, 'q', { ...F, state: 'acked', text: 'x' });
    await listPage(c, 'q', F, 7000);
    expect(asked).toEqual([
      { sort: 'created', order: 'desc', offset: 0, limit: 50, state: 'err', acked: true, text: 'x', detail: true },
      { sort: 'created', order: 'desc', offset: 0, limit: 50, detail: true, wait_ms: 7000 },
    ]);
    expect('wait_ms' in (asked[0] as object)).toBe(false);
  });

  it('passes a refusal on', async () => {
    const refusal = { ok: false, text: 'queue q is not running' };
    expect(await listPage(ctx({ search: refusal }), 'q', F)).toEqual({ ok: false, refusal });
  });

  it('makes each row from its fields, numbers read from numeric text, nulls for what is missing', async () => {
    const full = row({
      acked: true,
      state: 'err',
      status: 'ERR - exit 3',
      ms: 1500,
      total_ms: 4000,
      finished: 1_700_000_000,
      runs: 2,
      fields: { due: '1700000000', count: 3, param1: 42 },
    });
    const bare = row({ msg_id: 'nodate', state: 'que', acked: 'yes', fields: { due: '', count: 'many', param1: undefined } });
    const r = await listPage(ctx({ search: { ok: true, value: { total: 9, messages: [full, bare] } } }), 'q', F);
    expect(r).toEqual({
      ok: true,
      page: {
        total: 9,
        rows: [
          {
            msg_id: ID,
            state: 'err',
            acked: true,
            created: idTime(ID),
            due: 1_700_000_000,
            count: 3,
            param1: '42',
            status: 'ERR - exit 3',
            duration_ms: 1500,
            attempts: 2,
            total_ms: 4000,
            finished: 1_700_000_000,
          },
          {
            msg_id: 'nodate',
            state: 'que',
            acked: false,
            created: null,
            due: null,
            count: null,
            param1: null,
            status: 'que',
            duration_ms: null,
            attempts: 0,
            total_ms: null,
            finished: null,
          },
        ],
      },
    });
  });

  it('a number that is not finite, or a value neither number nor text, is no number', async () => {
    const r = await listPage(
      ctx({ search: { ok: true, value: { total: 1, messages: [row({ fields: { due: Infinity, count: 'Infinity', failures: true } })] } } }),
      'q',
      F,
    );
    expect(r.ok && [r.page.rows[0].due, r.page.rows[0].count, r.page.rows[0].attempts]).toEqual([null, null, 1]);
  });

  it("total_ms falls back on the last run's time", async () => {
    const r = await listPage(ctx({ search: { ok: true, value: { total: 1, messages: [row({ state: 'run', ms: 250 })] } } }), 'q', F);
    expect(r.ok && [r.page.rows[0].duration_ms, r.page.rows[0].total_ms]).toEqual([250, 250]);
  });

  it('attempts without a history: the failures, plus the run that ended in done or relayed or the one running', async () => {
    const states = ['done', 'relayed', 'run', 'err', 'que'];
    const messages = states.map((state) => row({ state, fields: { failures: '2' } }));
    const r = await listPage(ctx({ search: { ok: true, value: { total: 5, messages } } }), 'q', F);
    expect(r.ok && r.page.rows.map((x) => x.attempts)).toEqual([3, 3, 3, 2, 2]);
    const none = await listPage(ctx({ search: { ok: true, value: { total: 1, messages: [row({ state: 'err', runs: 0 })] } } }), 'q', F);
    expect(none.ok && none.page.rows[0].attempts).toBe(0);
  });

  it('says building, with how many were read, while the queue still reads its messages', async () => {
    const r = await listPage(ctx({ search: { ok: true, value: { total: 0, messages: [], building: { read: 1234 } } } }), 'q', F, 10);
    expect(r).toEqual({ ok: true, page: { total: 0, rows: [], building: 1234 } });
    const done = await listPage(ctx({ search: { ok: true, value: { total: 0, messages: [] } } }), 'q', F);
    expect(done.ok && 'building' in done.page).toBe(false);
  });
});

describe('listCounts', () => {
  const snap = (s: Partial<QueueSnapshot>) => ({ name: 'q', alive: true, ...s }) as QueueSnapshot;
  const counts = { que: 1, run: 2, done: 3, relayed: 0, err: 4, prep: 0 };

  it("a running queue's own counts, acknowledged errors too", async () => {
    const live = { ...counts, err_acked: 5 };
    expect(await listCounts(ctx({ metrics: { ok: true, value: { live: { counts: live } } } }), 'q', snap({ counts }))).toEqual({
      counts: live,
      source: 'queue',
    });
  });

  it("a queue whose metrics fail or are refused: the snapshot's counts with no acknowledged errors, or none", async () => {
    expect(await listCounts(ctx({ metrics: new Error('timeout') }), 'q', snap({ counts }))).toEqual({ counts: { ...counts, err_acked: 0 }, source: 'queue' });
    expect(await listCounts(ctx({ metrics: { ok: false, text: 'no' } }), 'q', snap({}))).toEqual({ counts: null, source: null });
  });

  it('a queue whose process does not answer is counted from its directories', async () => {
    const r = await listCounts(ctx({}), 'q', snap({ alive: false }));
    expect(r.source).toBe('directories');
    expect(r.counts).toMatchObject({ err: 2, err_acked: 1, que: 1, run: 0 });
  });
});
