// HTTP API against a real rq-mgr + web process: queue administration, new_queue(_link), rq_router indirection, server behaviour, health.
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { VERBS_SH, waitFor } from '../helpers/rq-root.js';
import { messageIds } from '../security/fuzz-helpers.js';
import { type WebRoot, cookiesOf, postForm, rawExchange, send, startWebRoot, stateOf, waitState } from './web-root.js';

let w: WebRoot;
let B: string;

beforeAll(async () => {
  w = await startWebRoot({
    config: { allow_new_queue: true, script_dirs: [path.dirname(VERBS_SH), 'defs'] },
    setup: (root) => fs.mkdir(path.join(root, 'defs')).then(() => ({})),
    queues: { test: {}, other: {} },
  });
  B = w.base;
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

describe('queue administration (spec §5.3)', () => {
  it('adminoper pause/resume/down/up with flash and back; bad params', async () => {
    const pause = await postForm(`${B}/q/other/adminoper`, { pause: '1', back: '/q/other' });
    expect(pause.status).toBe(303);
    expect(pause.headers.get('location')).toBe(`${w.origin}/q/other`);
    expect(await (await fetch(`${B}/q/other`, { headers: { cookie: cookiesOf(pause) } })).text()).toContain('Queue other paused');
    expect((await (await fetch(`${B}/q/other.json`)).json()).status).toBe('PAUSE');
    await postForm(`${B}/q/other/adminoper`, { resume: '1', back: '/' });
    expect((await (await fetch(`${B}/q/other.json`)).json()).status).toBe('UP');
    const down = await postForm(`${B}/q/other/adminoper`, { down: '1', back: '/' });
    expect(down.headers.get('location')).toBe(`${w.origin}/`);
    expect(await (await fetch(`${B}/`, { headers: { cookie: cookiesOf(down) } })).text()).toContain('Queue other stopped');
    expect((await (await fetch(`${B}/q/other.json`)).json()).status).toBe('DOWN');
    await postForm(`${B}/q/other/adminoper`, { up: '1' });
    expect((await (await fetch(`${B}/q/other.json`)).json()).status).toBe('UP');
    const all = await postForm(`${B}/q/other/adminoper`, { pause: '1', resume: '1', down: '1', up: '1' });
    expect([all.status, await all.text()]).toEqual([
      400,
      '400 - Invalid adminoper param: expected one of pause, resume, down, up, received all four, which is no action',
    ]);
    expect((await postForm(`${B}/q/other/adminoper`, {})).status).toBe(400);
    expect((await postForm(`${B}/q/nope/adminoper`, { pause: '1' })).status).toBe(404);
  });

  it('ack_errs acknowledges errors; restart restarts the queue process', async () => {
    const id = await send(B, 'other', { param1: 'err' });
    await waitState(B, 'other', id, ['err']);
    const ack = await postForm(`${B}/q/other/ack_errs`, { back: '/q/other' });
    expect(ack.status).toBe(303);
    expect(await (await fetch(`${B}/q/other`, { headers: { cookie: cookiesOf(ack) } })).text()).toContain('Successfully acknowledged errors');
    expect(await stateOf(B, 'other', `.${id}`)).toBe('err');
    const page = await (await fetch(`${B}/q/other`)).text();
    expect(page).toContain(`href="/q/other/.${id}"`);

    const pidBefore = (await fs.readFile(queuePaths(w.root, 'other').pidFile, 'utf8')).trim();
    const restart = await postForm(`${B}/q/other/restart`, { back: '/q/other' });
    expect(restart.status).toBe(303);
    expect(await (await fetch(`${B}/q/other`, { headers: { cookie: cookiesOf(restart) } })).text()).toContain('Queue other restarted');
    await waitFor(
      async () => (await fs.readFile(queuePaths(w.root, 'other').pidFile, 'utf8')).trim() !== pidBefore && (await fetch(`${B}/q/other.json`)).status === 200,
      'new queue pid',
    );
  });

  it('config and config.json', async () => {
    const live = await fetch(`${B}/q/test/config`);
    expect(live.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await live.json()).toMatchObject({ name: 'test', num_workers: 1 });
    const file = await fetch(`${B}/q/test/config.json`);
    expect(file.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(await file.text()).name).toBe('test');

    // A config.json that is no regular file of a config's size is not read: a link to /dev/zero would hold the web's memory.
    const odd = { zero: '/dev/zero', huge: path.join(w.root, 'huge.json') };
    await fs.writeFile(odd.huge, JSON.stringify({ name: 'huge', pad: 'x'.repeat(2 * 1024 * 1024) }));
    try {
      for (const [name, target] of Object.entries(odd)) {
        await fs.mkdir(queuePaths(w.root, name).dir);
        await fs.symlink(target, queuePaths(w.root, name).configFile);
        const res = await fetch(`${B}/q/${name}/config.json`);
        expect([res.status, ((await res.json()) as string[])[0]], name).toEqual([404, 'fail']);
      }
    } finally {
      for (const name of Object.keys(odd)) await fs.rm(queuePaths(w.root, name).dir, { recursive: true, force: true });
    }
  });

  it('new_queue creates a queue (flash with the supervisor reply); a bad name shows its flash on the 404 page; delete_queue', async () => {
    const res = await postForm(`${B}/new_queue`, {
      'queue[name]': 'made',
      'queue[script]': (await fs.readFile(queuePaths(w.root, 'test').configFile, 'utf8')).match(/"script":"([^"]+)"/)![1],
      'queue[num_workers]': '1',
      'queue[exec_prefix]': '',
      'queue[coalesce_params][]': '1',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${w.origin}/q/made`);
    await waitFor(async () => (await fetch(`${B}/q/made.json`)).status === 200, 'made queue up');
    const page = await (await fetch(`${B}/q/made`, { headers: { cookie: cookiesOf(res) } })).text();
    expect(page).toContain('We got <code>{&quot;queue&quot;=&gt;{&quot;name&quot;=&gt;&quot;made&quot;');
    expect(page).toContain('queue created - awesome');
    // The supervisor's "success" makes it a notice, not an error (mgr-client's creation reply).
    expect(page).toMatch(/<div id="flash-notice"[^>]*>We got/);
    expect(page).not.toContain('id="flash-error"');
    expect(((await (await fetch(`${B}/q.json`)).json()) as string[]).includes('made')).toBe(true);

    const bad = await postForm(`${B}/new_queue`, { 'queue[name]': 'bad name', 'queue[script]': VERBS_SH });
    expect(bad.headers.get('location')).toBe(`${w.origin}/q/bad%20name`);
    const nf = await fetch(bad.headers.get('location')!, { headers: { cookie: cookiesOf(bad) } });
    expect(nf.status).toBe(404);
    const nfText = await nf.text();
    expect(nfText).toContain('<h2 id="not-found">Not Found</h2>');
    expect(nfText).toContain('queue name has invalid characters');

    const del = await postForm(`${B}/delete_queue`, { queue_name: 'made' });
    expect(del.status).toBe(303);
    expect(del.headers.get('location')).toBe(`${w.origin}/`);
    expect(await (await fetch(`${B}/`, { headers: { cookie: cookiesOf(del) } })).text()).toContain('started deleting queue');
    await waitFor(async () => (await fetch(`${B}/q/made.json`)).status === 404, 'made deleted');

    // A JSON client (x_format=json, or Accept) gets rq-mgr's answer in JSON, a refusal with its status, not a 303.
    const script = (await fs.readFile(queuePaths(w.root, 'test').configFile, 'utf8')).match(/"script":"([^"]+)"/)![1];
    const again = await postForm(`${B}/new_queue`, { 'queue[name]': 'again', 'queue[script]': script, 'queue[num_workers]': '1', x_format: 'json' });
    expect([again.status, await again.json()]).toEqual([200, ['ok', 'queue created - awesome']]);
    const twice = await postForm(`${B}/new_queue`, { 'queue[name]': 'again', 'queue[script]': script, 'queue[num_workers]': '1', x_format: 'json' });
    expect([twice.status, ((await twice.json()) as string[])[0]]).toEqual([409, 'fail']);
    const deleted = await postForm(`${B}/delete_queue`, { queue_name: 'again', x_format: 'json' });
    expect([deleted.status, await deleted.json()]).toEqual([200, ['ok', 'started deleting queue']]);
    const gone = await postForm(`${B}/delete_queue`, { queue_name: 'made', x_format: 'json' });
    expect([gone.status, await gone.json()]).toEqual([404, ['fail', 'no such queue']]);
    const dotted = await fetch(`${B}/delete_queue`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: 'queue_name=..',
    });
    expect(dotted.status).toBe(404);
    expect(((await dotted.json()) as string[])[0]).toBe('fail');
  });
});

describe('new_queue_link and rq_router indirection', () => {
  it('POST /new_queue_link creates a queue whose config is the given file; an unparsable file is 404', async () => {
    const script = JSON.parse(await fs.readFile(queuePaths(w.root, 'test').configFile, 'utf8')).script as string;
    const file = path.join(w.root, 'defs', 'linked.json');
    await fs.writeFile(file, JSON.stringify({ name: 'linked', script, num_workers: 1 }));
    const res = await postForm(`${B}/new_queue_link`, { 'queue[json_path]': file });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${w.origin}/q/linked`);
    await waitFor(async () => (await fetch(`${B}/q/linked.json`)).status === 200, 'linked queue up');
    const linkedPage = await (await fetch(`${B}/q/linked`, { headers: { cookie: cookiesOf(res) } })).text();
    expect(linkedPage).toContain('queue created - awesome');
    expect(linkedPage).toMatch(/<div id="flash-notice"[^>]*>We got/);
    expect((await fs.lstat(queuePaths(w.root, 'linked').configFile)).isSymbolicLink()).toBe(true);
    await postForm(`${B}/delete_queue`, { queue_name: 'linked' });

    await fs.writeFile(path.join(w.root, 'defs', 'broken.json'), '{"name":');
    const broken = await postForm(`${B}/new_queue_link`, { 'queue[json_path]': 'defs/broken.json' });
    expect(broken.status).toBe(404);
    expect(await broken.text()).toContain('Couldn&#39;t parse json file (defs/broken.json).');
  });

  it('routes message-level requests to rq_router while its rules file exists (spec §9.2)', async () => {
    const id = await send(B, 'test', { param1: 'done' });
    await waitState(B, 'test', id, ['done']);
    const rules = path.join(w.root, 'config', 'rq_router_rules.rb');
    await fs.writeFile(rules, '# rules');
    try {
      // No rq_router queue here: the routed requests find no queue.
      expect((await fetch(`${B}/q/test/${id}.json`)).status).toBe(404);
      expect((await fetch(`${B}/q/test/${id}/state.json`)).status).toBe(404);
      // Not routed: the status formats and the queue page.
      expect((await fetch(`${B}/q/test.json`)).status).toBe(200);
    } finally {
      await fs.rm(rules);
    }
    expect((await fetch(`${B}/q/test/${id}.json`)).status).toBe(200);
  });
});

describe('server behaviour (spec §9.1)', () => {
  it('refuses a cross-origin browser POST (403) and serves one without Origin', async () => {
    const id = await send(B, 'test', { param1: 'done' });
    await waitState(B, 'test', id, ['done']);
    const evil = await postForm(`${B}/q/test/${id}/clone`, {}, { origin: 'https://evil.example' });
    expect(evil.status).toBe(403);
    const same = await postForm(`${B}/q/test/${id}/clone`, {}, { origin: w.origin });
    expect(same.status).toBe(303);
    // Only a POST is a form post: a GET that names another Origin is served.
    expect((await fetch(`${B}/q/test.json`, { headers: { origin: 'https://evil.example' } })).status).toBe(200);
  });

  it('HTTP/1.0 without Host and HTTP/1.1 keep-alive both work', async () => {
    const raw = await rawExchange(w.port, 'GET /q.json HTTP/1.0\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.[01] 200/);
    expect(raw).toContain('application/json');
    expect(raw).toMatch(/\r\n\r\n\[("other"|"test"),("other"|"test")\]$/);

    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = (p: string) =>
      new Promise<{ port: number; status: number }>((resolve, reject) => {
        const req = http.get(`${B}${p}`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ port: req.socket!.localPort!, status: res.statusCode! }));
        });
        req.on('error', reject);
      });
    const one = await get('/q.json');
    const two = await get('/q/test.json');
    expect([one.status, two.status]).toEqual([200, 200]);
    expect(two.port).toBe(one.port);
    agent.destroy();
  });

  it('refuses a request with two Host lines (400), whichever comes first, and creates nothing', async () => {
    const ours = `Host: 127.0.0.1:${w.port}\r\n`;
    // Other headers of four letters are no Host.
    expect(await rawExchange(w.port, `GET /q.json HTTP/1.1\r\n${ours}From: a@b.example\r\nDate: x\r\nConnection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 200 /);
    for (const hosts of [ours + 'Host: evil.example\r\n', 'host: evil.example\r\n' + ours, ours + ours]) {
      const raw = await rawExchange(w.port, `GET /q.json HTTP/1.1\r\n${hosts}Connection: close\r\n\r\n`);
      expect(raw, hosts).toMatch(/^HTTP\/1\.1 400 /);
      expect(raw.slice(raw.indexOf('\r\n\r\n') + 4), hosts).toBe(JSON.stringify(['fail', 'Host: expected one header, received 2']));
    }
    const before = await messageIds(w.root, 'test');
    const body = `mesg=${encodeURIComponent(JSON.stringify({ dest: 'test', param1: 'done' }))}`;
    const post = await rawExchange(
      w.port,
      `POST /q/test/new_message HTTP/1.1\r\n${ours}${ours}Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(post).toMatch(/^HTTP\/1\.1 400 [^]*\r\n\r\n400 - Host: expected one header, received 2$/);
    expect(await messageIds(w.root, 'test')).toEqual(before);
  });

  it('honours Expect: 100-continue', async () => {
    const body = new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', param1: 'done' }) }).toString();
    const out = await new Promise<string>((resolve, reject) => {
      const s = net.connect(w.port, '127.0.0.1', () => {
        s.write(
          `POST /q/test/new_message HTTP/1.1\r\nHost: 127.0.0.1:${w.port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
        );
      });
      let buf = '';
      let sent = false;
      s.on('data', (d) => {
        buf += d;
        if (!sent && buf.includes('100 Continue')) {
          sent = true;
          s.write(body);
        }
      });
      s.on('end', () => resolve(buf));
      s.on('error', reject);
    });
    expect(out).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK/);
    expect(out).toMatch(/\["ok","http:/);
  });

  it('GET /healthz is 200 while all answer and 503 naming a dead queue; /dashboard.json carries counts', async () => {
    const ok = await fetch(`${B}/healthz`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: 'ok', checked: expect.arrayContaining(['rq-mgr', 'queue test', 'queue other']) });
    const dash = (await (await fetch(`${B}/dashboard.json`)).json()) as { mgr: { up: boolean }; queues: { name: string; counts: unknown }[] };
    expect(dash.mgr.up).toBe(true);
    expect(dash.queues.find((q) => q.name === 'test')?.counts).toMatchObject({ prep: expect.any(Number), done: expect.any(Number) });

    // A queue whose process cannot start (unreadable config) is listed by rq-mgr but answers nothing.
    const dir = queuePaths(w.root, 'broken').dir;
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, 'config.json'), 'not json');
    process.kill(w.mgr.child.pid!, 'SIGHUP');
    try {
      await waitFor(async () => (await fetch(`${B}/healthz`)).status === 503, 'healthz 503');
      const bad = (await (await fetch(`${B}/healthz`)).json()) as { status: string; failing: { name: string; error: string }[] };
      expect(bad.status).toBe('fail');
      expect(bad.failing.map((f) => f.name)).toEqual(['queue broken']);
      const page = await (await fetch(`${B}/`)).text();
      expect(page).toMatch(/id="q-broken-status" class="status down">DOWN /);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
      process.kill(w.mgr.child.pid!, 'SIGHUP');
      await waitFor(async () => (await fetch(`${B}/healthz`)).status === 200, 'healthz 200 again');
    }
  });

  it('unknown routes get the Not Found page', async () => {
    const res = await fetch(`${B}/no/such/thing`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('<h2 id="not-found">Not Found</h2>');
    expect((await fetch(`${B}/q/test/adminoper`)).status).toBe(404);
  });
});
