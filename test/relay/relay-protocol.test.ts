// relayMessage against a scripted far host: resume by job/relay_id, the state check after "cannot find message", reply checks.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/script-kit/http-client.js';
import { type RelayOutcome, relayMessage } from '../../src/relay/relay.js';
import { readRelayId, writeRelayId } from '../../src/relay/relay-id.js';

type Handler = (req: { method: string; url: string; body: string }) => { status?: number; body: string } | 'hangup';

let server: http.Server;
let port: number;
let routes: [RegExp, Handler][];
let calls: string[];
let msgDir: string;
let jobDir: string;

const FAR = (id: string) => `http://far.example:1/q/test/${id}`;
const ID1 = '20261121.1643.46.613.1';
const ID2 = '20261121.1643.46.613.2';

beforeEach(async () => {
  routes = [];
  calls = [];
  msgDir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-relay-proto-'));
  jobDir = path.join(msgDir, 'job');
  await fs.mkdir(jobDir);
  await fs.writeFile(
    path.join(msgDir, 'msg'),
    JSON.stringify({ msg_id: 'x', dest: 'http://h/q/test', count: 0, max_count: 15, orig_msg_id: 'http://a/q/relay/x', src: 'unit' }),
  );
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('latin1')));
    req.on('end', () => {
      const call = { method: req.method!, url: req.url!, body };
      calls.push(`${call.method} ${call.url}`);
      const route = routes.find(([re]) => re.test(`${call.method} ${call.url}`));
      const out = route ? route[1](call) : { status: 404, body: '<h2>Not Found</h2>' };
      if (out === 'hangup') return req.socket.destroy();
      res.writeHead(out.status ?? 200, { 'content-type': 'application/json' });
      res.end(out.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as net.AddressInfo).port;
});
afterEach(async () => {
  await new Promise((r) => server.close(r));
  await fs.rm(msgDir, { recursive: true, force: true });
});

async function relay(): Promise<{ outcome: RelayOutcome; logs: string[]; progress: string[] }> {
  const logs: string[] = [];
  const progress: string[] = [];
  const client = new HttpClient();
  try {
    const outcome = await relayMessage(
      { jobDir, target: { base: `http://127.0.0.1:${port}`, queue: 'test' } },
      { http: client, log: (t) => logs.push(t), progress: (t) => progress.push(t) },
    );
    return { outcome, logs, progress };
  } finally {
    client.close();
  }
}

const prepOk = (id: string): [RegExp, Handler] => [/^POST \/q\/test\/new_message$/, () => ({ body: JSON.stringify(['ok', FAR(id)]) })];
const commit = (reply: unknown): [RegExp, Handler] => [/^POST \/q\/test\/[\d.]+$/, () => ({ body: JSON.stringify(reply) })];
const queueStatus = (status: string): [RegExp, Handler] => [/^GET \/q\/test\.json$/, () => ({ body: `{"status":"${status}"\n,"uptime":1}\n` })];
const state = (id: string, reply: { status?: number; body: string }): [RegExp, Handler] => [
  new RegExp(`^GET /q/test/${id.replace(/\./g, '\\.')}/state\\.json$`),
  () => reply,
];

describe('relayMessage', () => {
  it('prep (count+1, _method prep), relay_id stored, commit, relayed', async () => {
    let prepBody = '';
    routes.push([/^POST \/q\/test\/new_message$/, (c) => ((prepBody = c.body), { body: JSON.stringify(['ok', FAR(ID1)]) })], commit(['ok', 'msg commited']));
    const r = await relay();
    expect(r.outcome).toEqual({ kind: 'relayed', fullId: FAR(ID1) });
    const form = new URLSearchParams(prepBody);
    expect(form.get('x_format')).toBe('json');
    expect(JSON.parse(form.get('mesg')!)).toEqual({
      dest: 'http://h/q/test',
      src: 'unit',
      count: 1,
      max_count: 15,
      orig_msg_id: 'http://a/q/relay/x',
      _method: 'prep',
    });
    expect(await readRelayId(jobDir)).toBe(FAR(ID1));
    expect(calls).toEqual(['POST /q/test/new_message', `POST /q/test/${ID1}`]);
    expect(r.progress).toEqual([`prep http://127.0.0.1:${port}/q/test/new_message`, `commit ${FAR(ID1)}`]);
  });

  it('commit answered "cannot find message" while the far copy is committed: relayed, no second copy', async () => {
    routes.push(prepOk(ID1), commit(['fail', 'cannot find message']), state(ID1, { body: '["que"]' }));
    const r = await relay();
    expect(r.outcome).toEqual({ kind: 'relayed', fullId: FAR(ID1) });
    expect(calls.filter((c) => c.includes('new_message'))).toHaveLength(1);
    expect(r.logs.join('\n')).toMatch(/commit answered cannot find message, but .* is already que/);
  });

  it('commit answered "cannot find message" and the far copy is gone: relay_id dropped, retry', async () => {
    routes.push(prepOk(ID1), commit(['fail', 'cannot find message']), queueStatus('UP'));
    const r = await relay();
    expect(r.outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/is gone; a new one will be made/) });
    expect(await readRelayId(jobDir)).toBeNull();
  });

  it('a 404 for the far copy while its queue is DOWN proves nothing: retry, relay_id kept', async () => {
    await writeRelayId(jobDir, FAR(ID2));
    routes.push(queueStatus('DOWN'));
    expect((await relay()).outcome).toEqual({ kind: 'retry', reason: 'state check: far queue test is DOWN' });
    expect(await readRelayId(jobDir)).toBe(FAR(ID2));
    expect(calls).toEqual([`GET /q/test/${ID2}/state.json`, 'GET /q/test.json']);
  });

  it('a stored relay_id still in prep is resumed: no new prep, attach and commit go to it', async () => {
    await writeRelayId(jobDir, FAR(ID2));
    await fs.mkdir(path.join(msgDir, 'attach'));
    await fs.writeFile(path.join(msgDir, 'attach', 'a.txt'), 'abc');
    await fs.writeFile(path.join(msgDir, 'attach', '.hidden'), 'no');
    const md5 = crypto.createHash('md5').update('abc').digest('hex');
    routes.push(
      state(ID2, { body: '["prep"]' }),
      [/^POST \/q\/test\/[\d.]+\/attach\/new$/, () => ({ body: JSON.stringify(['ok', `${md5}-Attached successfully`]) })],
      commit(['ok', 'msg commited']),
    );
    const r = await relay();
    expect(r.outcome).toEqual({ kind: 'relayed', fullId: FAR(ID2) });
    expect(calls).toEqual([`GET /q/test/${ID2}/state.json`, `POST /q/test/${ID2}/attach/new`, `POST /q/test/${ID2}`]);
  });

  it('a stored relay_id already committed is relayed without sending anything', async () => {
    await writeRelayId(jobDir, FAR(ID2));
    routes.push(state(ID2, { body: '["done"]' }));
    expect((await relay()).outcome).toEqual({ kind: 'relayed', fullId: FAR(ID2) });
    expect(calls).toHaveLength(1);
  });

  it('a stored relay_id the far host no longer knows gets a fresh copy in the same attempt', async () => {
    await writeRelayId(jobDir, FAR(ID2));
    routes.push(prepOk(ID1), commit(['ok', 'msg commited']), queueStatus('PAUSE'));
    expect((await relay()).outcome).toEqual({ kind: 'relayed', fullId: FAR(ID1) });
    expect(await readRelayId(jobDir)).toBe(FAR(ID1));
  });

  it('the state check failing (far host erroring) is a retry, the relay_id kept', async () => {
    await writeRelayId(jobDir, FAR(ID2));
    routes.push(state(ID2, { status: 503, body: '["fail","queue test did not answer"]' }));
    expect((await relay()).outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/^state check: HTTP 503/) });
    expect(await readRelayId(jobDir)).toBe(FAR(ID2));
  });

  it('attach: md5 mismatch retries, unparsable reply fails (BAD JSON), 413 fails', async () => {
    await fs.mkdir(path.join(msgDir, 'attach'));
    await fs.writeFile(path.join(msgDir, 'attach', 'a.txt'), 'abc');
    routes.push(prepOk(ID1), [/attach\/new$/, () => ({ body: JSON.stringify(['ok', '00000000000000000000000000000000-Attached successfully']) })]);
    expect((await relay()).outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/md5 mismatch/) });
    routes = [state(ID1, { body: '["prep"]' }), [/attach\/new$/, () => ({ body: '<html>oops</html>' })]];
    expect((await relay()).outcome).toMatchObject({ kind: 'fail', reason: expect.stringMatching(/^BAD JSON from attach a\.txt/) });
    routes = [state(ID1, { body: '["prep"]' }), [/attach\/new$/, () => ({ status: 413, body: '413 - Upload too large' })]];
    expect((await relay()).outcome).toMatchObject({ kind: 'fail', reason: expect.stringMatching(/^attach a\.txt: HTTP 413/) });
  });

  it('prep refused or unreachable, commit reply lost: retries', async () => {
    routes.push([/new_message/, () => ({ status: 503, body: '503 - Service Unavailable - Operationally Down' })]);
    expect((await relay()).outcome).toEqual({ kind: 'retry', reason: 'prep: HTTP 503 503 - Service Unavailable - Operationally Down' });
    routes = [[/new_message/, () => ({ body: '["fail","status: DOWN"]' })]];
    expect((await relay()).outcome).toEqual({ kind: 'retry', reason: 'prep: ["fail","status: DOWN"]' });
    routes = [prepOk(ID1), [/^POST \/q\/test\/[\d.]+$/, () => 'hangup']];
    expect((await relay()).outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/^commit: .*socket hang up/) });
    await new Promise((r) => server.close(r));
    expect((await relay()).outcome).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/ECONNREFUSED/) });
    server.listen(port, '127.0.0.1');
  });
});
