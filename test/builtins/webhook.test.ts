// The webhook queue (spec §12.2): post_run_webhook to an rq host's new_message, and to a plain HTTP server (JSON).
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERBS_SH, waitFor } from '../helpers/rq-root.js';
import { Host, RECORD_SH } from '../relay/hosts.js';

process.env.RQ_RELAY_BACKOFF_SCALE = '0.02';

let A: Host;
let B: Host;
let server: http.Server;
let serverPort: number;
const received: { method: string; url: string; type: string; body: string }[] = [];
let failFirst = 0;

beforeAll(async () => {
  [A, B] = await Promise.all([Host.start({ queues: { test: { script: VERBS_SH } } }), Host.start({ queues: { hook: { script: RECORD_SH } } })]);
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, type: String(req.headers['content-type']), body });
      if (failFirst > 0) {
        failFirst--;
        res.writeHead(500).end('try later');
        return;
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  serverPort = (server.address() as net.AddressInfo).port;
}, 90_000);
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await Promise.all([A?.stop(), B?.stop()]);
});

async function webhookMessage(url: string) {
  return waitFor(
    async () => (await A.messages('webhook')).find((m) => m.param1 === url && ['done', 'err'].includes(m.state)),
    `webhook message for ${url}`,
    20_000,
    100,
  );
}

describe('webhook', () => {
  it("to an rq host: creates a message with the same src, params and orig_msg_id in the URL's queue", async () => {
    const url = `${B.url('hook')}/new_message`;
    const id = await A.send('test', { dest: 'test', param1: 'done', param2: 'two', src: 'hooked', post_run_webhook: [url] });
    await A.waitState('test', id, ['done']);
    const wh = await webhookMessage(url);
    expect(wh.status).toBe('done - successfull post 200');
    const payload = JSON.parse(wh.param2);
    expect(payload).toMatchObject({ msg_id: A.fullId('test', id), state: 'done', src: 'hooked' });
    const far = await waitFor(async () => (await B.messages('hook')).find((m) => m.src === 'hooked'), 'far hook message', 20_000, 100);
    expect(far).toMatchObject({ dest: '/q/hook', param1: 'done', param2: 'two', orig_msg_id: A.fullId('test', id) });
  });

  it('to any other URL: POSTs the finished message as JSON; a failure is resent with back-off', async () => {
    failFirst = 1;
    const url = `http://127.0.0.1:${serverPort}/hooks/rq`;
    const id = await A.send('test', { dest: 'test', param1: 'err', post_run_webhook: [url] });
    await A.waitState('test', id, ['err']);
    const wh = await webhookMessage(url);
    expect(wh.status).toBe('done - successfull post 204');
    expect(wh.count).toBe(1);
    const posts = received.filter((r) => r.url === '/hooks/rq');
    expect(posts).toHaveLength(2);
    expect(posts[1].type).toBe('application/json');
    const body = JSON.parse(posts[1].body);
    expect(body).toMatchObject({ msg_id: A.fullId('test', id), state: 'err', param1: 'err', dest: 'test' });
    expect(body.status).toBeUndefined();
  });

  it('an unreachable URL ends in err at max_count', async () => {
    const url = 'http://127.0.0.1:1/nothing-listens';
    const r = await A.q('webhook', 'create_message', { dest: 'webhook', param1: url, param2: '{"msg_id":"x"}', max_count: 2 });
    const m = await A.waitState('webhook', String(r[1]).split('/').pop()!, ['err'], 20_000);
    expect(m.status).toBe('err - HIT MAX RESEND COUNT - MOVING TO ERR');
  });
});
