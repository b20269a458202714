// MgrClient, the typed client of rq-mgr's socket: each method against a real rq-mgr, and the replies only another or an older supervisor gives.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rootPaths } from '../../src/config/paths.js';
import { MgrClient } from '../../src/ipc/mgr-client.js';
import { CODES_HELLO } from '../../src/ipc/reply-codes.js';
import { MgrProc } from '../helpers/mgr-proc.js';
import { type TestRoot, VERBS_SH, makeRoot, waitFor } from '../helpers/rq-root.js';
import { noReplyFrom, socketPlace } from './helpers.js';

describe('against a real rq-mgr', () => {
  let t: TestRoot;
  let mgr: MgrProc;
  let client: MgrClient;

  beforeAll(async () => {
    t = await makeRoot();
    mgr = await MgrProc.start(t.root);
    client = new MgrClient(rootPaths(t.root).mgrSock);
  });
  afterAll(async () => {
    await mgr?.stop();
    await t?.cleanup();
  });

  const cfg = (name: string) => JSON.stringify({ name, script: VERBS_SH, num_workers: 1 });

  it('reads ping, uptime, version and queues as values', async () => {
    expect(await client.ping()).toBe(true);
    const up = await client.uptime();
    expect(up.ok && Number.isInteger(up.value)).toBe(true);
    expect(await client.version()).toMatchObject({ ok: true, value: '3.0.0' });
    expect(await client.queues()).toEqual([]);
  });

  it('creates queues (success is the classic ok), lists them, reports and administers their workers', async () => {
    expect(await client.createQueue(cfg('made'))).toEqual({ ok: true, raw: ['success', 'queue created - awesome'] });
    expect(await client.createQueue(cfg('made'))).toEqual({
      ok: false,
      code: 'RQ_ERR_QUEUE_EXISTS',
      text: 'already created',
      raw: ['fail', 'already created'],
    });
    const linked = path.join(t.root, 'linked.json');
    await fs.writeFile(linked, cfg('linked'));
    expect((await client.createQueueLink(linked)).ok).toBe(true);
    expect((await client.queues()).sort()).toEqual(['linked', 'made']);
    await mgr.waitQueueUp('made');

    const st = await client.status();
    expect(st.ok && st.value.made).toMatchObject({ status: 'RUNNING', restarts: 0 });
    expect(await client.admin('pause', 'made')).toMatchObject({ ok: true, value: 'made' });
    expect(await mgr.q('made', 'status')).toEqual(['PAUSE']);
    expect(await client.admin('resume', 'made')).toMatchObject({ ok: true, value: 'made' });
    expect(await client.admin('down', 'nosuch')).toMatchObject({ ok: false, code: 'RQ_ERR_MGR_INVALID_QUEUE', text: 'invalid queue name' });
    expect(await client.restart('made')).toMatchObject({ ok: true, value: 'made' });
    expect(await client.restart('nosuch')).toMatchObject({ ok: false, text: 'invalid queue name' });
    expect(await client.deleteQueue('linked')).toMatchObject({ ok: true });
    expect(await client.deleteQueue('linked')).toMatchObject({ ok: false, code: 'RQ_ERR_MGR_NO_SUCH_QUEUE', text: 'no such queue' });
    expect(await client.queues()).toEqual(['made']);
  });

  it('defines, acquires, releases, resets and reports limit slots', async () => {
    expect(await client.limitDefine('solo', 1)).toMatchObject({ ok: true });
    // A key nobody uses and with no concurrency given is refused with its text.
    const none = await client.limitDefine('unknown-key');
    expect(none.ok).toBe(false);
    expect(!none.ok && none.text).toMatch(/unknown-key/);
    expect(!none.ok && none.code).toBe('RQ_ERR_LIMIT_NO_CONCURRENCY');

    const a = { key: 'solo', holder: 'qa/20261121.1643.46.613.1', since: 1, concurrency: 1 };
    const b = { key: 'solo', holder: 'qb/20261121.1643.46.613.2', since: 2, concurrency: 1 };
    // rq-mgr grants nothing while it settles after its start: asking again keeps the place.
    await waitFor(async () => {
      const r = await client.limitAcquire(a);
      return 'granted' in r && r.granted;
    }, 'rq-mgr to grant the first slot');
    expect(await client.limitAcquire(b)).toEqual({ granted: false, position: 1 });
    expect(await client.limitAcquire({ ...b, concurrency: 3 })).toEqual({ refused: expect.stringMatching(/solo/), code: 'RQ_ERR_LIMIT_CONFLICT' });
    const st = await client.limitStatus('solo');
    expect(st.ok && st.value.solo).toMatchObject({ concurrency: 1, holders: [{ ref: a.holder }], waiting: [{ ref: b.holder, position: 1 }] });

    expect(await client.limitRelease('solo', b.holder)).toMatchObject({ ok: true });
    const c = { ...b, holder: 'qc/20261121.1643.46.613.3' };
    const reset = await client.limitReset('qc', [c, { ...c, holder: 'qc/20261121.1643.46.613.4', concurrency: 5 }]);
    expect(reset).toMatchObject({
      ok: true,
      value: {
        freed: 0,
        results: {
          [c.holder]: { granted: false, position: 1 },
          'qc/20261121.1643.46.613.4': { refused: expect.stringMatching(/solo/), code: 'RQ_ERR_LIMIT_CONFLICT' },
        },
      },
    });
    expect(await client.limitReset('qc')).toMatchObject({ ok: true, value: { freed: 0, results: {} } });
    expect(await client.limitReset('../bad')).toMatchObject({ ok: false });
    const all = await client.limitStatus();
    expect(all.ok && Object.keys(all.value)).toEqual(['solo']);
  });
});

describe('against a supervisor that answers otherwise', () => {
  const place = socketPlace('mgr.sock');
  let n = 0;

  /** A stand-in rq-mgr: each command's reply as given, `["error", …]` for the rest; `got` holds the requests as sent. */
  async function stand(replies: Record<string, unknown>): Promise<{ client: MgrClient; got: string[] }> {
    const at = path.join(place.dir, `mgr-${n++}.sock`);
    const got: string[] = [];
    await place.serve(
      (p) => {
        got.push(p);
        return JSON.stringify(replies[p.slice(0, p.indexOf(' '))] ?? ['error', 'unknown command']);
      },
      { at },
    );
    return { client: new MgrClient(at), got };
  }

  it('sends each command with its argument as the classic client does (a space even when there is none), each after the hello that asks for codes', async () => {
    const { client, got } = await stand({});
    await client.ping();
    await client.uptime();
    await client.version();
    await client.queues();
    await client.status();
    await client.admin('pause', 'q1');
    await client.restart('q1');
    await client.deleteQueue('q1');
    await client.createQueue('{"name":"n"}');
    await client.createQueueLink('/c.json');
    await client.limitDefine('k', 2);
    await client.limitAcquire({ key: 'k', holder: 'q/1', since: 5 });
    await client.limitRelease('k', 'q/1');
    await client.limitReset('q');
    await client.limitStatus('k');
    await client.limitStatus();
    // One connection per command, each opened with the hello: an older supervisor refuses it and answers the command all the same.
    expect(got.filter((p, i) => i % 2 === 0)).toEqual(Array(16).fill(CODES_HELLO));
    expect(got.filter((p, i) => i % 2 === 1)).toEqual([
      'ping ',
      'uptime ',
      'version ',
      'queues ',
      'status ',
      'pause_queue q1',
      'restart_queue q1',
      'delete_queue q1',
      'create_queue {"name":"n"}',
      'create_queue_link /c.json',
      'limit_define {"key":"k","concurrency":2}',
      'limit_acquire {"key":"k","holder":"q/1","since":5}',
      'limit_release {"key":"k","holder":"q/1"}',
      'limit_reset {"queue":"q","acquire":[]}',
      'limit_status {"key":"k"}',
      'limit_status {}',
    ]);
  });

  it('keeps to the timeout it was made with, and to one given per call', async () => {
    await place.rawServer(() => {});
    const err = await noReplyFrom(new MgrClient(place.sock, 150).queues(), place.sock);
    expect(err.message).toMatch(/timed out after 150 ms/);
    const perCall = await noReplyFrom(new MgrClient(place.sock).ping(120), place.sock);
    expect(perCall.message).toMatch(/timed out after 120 ms/);
  });

  it('ping is false for anything but pong; queues is empty for a reply that is no list and keeps only names', async () => {
    const { client } = await stand({ queues: ['a', 7, 'b', null] });
    expect(await client.ping()).toBe(false);
    expect(await client.queues()).toEqual(['a', 'b']);
    const other = (await stand({ ping: 'pong', queues: { a: 1 } })).client;
    expect(await other.ping()).toBe(false);
    expect(await other.queues()).toEqual([]);
    // An object whose first key reads pong is still no ["pong"].
    expect(await (await stand({ ping: { 0: 'pong' } })).client.ping()).toBe(false);
  });

  it('a creation answered with anything but success is not ok, and carries the reply', async () => {
    const { client } = await stand({ create_queue: ['ok', 'made'], create_queue_link: 'success' });
    expect(await client.createQueue('{}')).toMatchObject({ ok: false, code: 'RQ_ERR_PROTOCOL', raw: ['ok', 'made'] });
    expect(await client.createQueueLink('/x.json')).toMatchObject({ ok: false, code: 'RQ_ERR_PROTOCOL', raw: 'success' });
  });

  it('a status that is not a table, a limit_acquire of no known shape, and results of no known shape are refusals', async () => {
    const { client } = await stand({
      status: ['ok', ['RUNNING']],
      limit_acquire: ['wait', '2'],
      limit_release: ['ok', 'released'],
      limit_define: ['ok', {}],
      limit_reset: ['ok', { freed: 1, results: [] }],
    });
    expect((await client.status()).ok).toBe(false);
    expect(await client.limitAcquire({ key: 'k', holder: 'q/1', since: 1 })).toEqual({ refused: 'unexpected reply ["wait","2"]', code: 'RQ_ERR_PROTOCOL' });
    const okShaped = (await stand({ limit_acquire: ['ok', 'granted'] })).client;
    expect(await okShaped.limitAcquire({ key: 'k', holder: 'q/1', since: 1 })).toEqual({
      refused: 'unexpected reply ["ok","granted"]',
      code: 'RQ_ERR_PROTOCOL',
    });
    expect((await client.limitRelease('k', 'q/1')).ok).toBe(false);
    expect((await client.limitDefine('k', 1)).ok).toBe(false);
    expect((await client.limitReset('q')).ok).toBe(false);
  });

  it('reads an older supervisor refusing a command, with no code, as a refusal with its text (RQ_ERR_REFUSED)', async () => {
    const { client } = await stand({ status: ['fail', 'unknown command: status'], limit_acquire: [false, 'no limits here'] });
    expect(await client.status()).toMatchObject({ ok: false, code: 'RQ_ERR_REFUSED', text: 'unknown command: status' });
    expect(await client.limitAcquire({ key: 'k', holder: 'q/1', since: 1 })).toEqual({ refused: 'no limits here', code: 'RQ_ERR_REFUSED' });
  });
});
