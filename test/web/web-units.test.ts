// Pure parts of the web process, and buildApp via inject with nothing running (supervisor down, allowed_ips).
import fs from 'node:fs/promises';
import { layout } from '../../src/web/views/layout.js';
import { Urls } from '../../src/web/urls.js';
import { stepDuration, timelineView } from '../../src/web/views/timeline-view.js';
import { dashboardView } from '../../src/web/views/dashboard-view.js';
import type { DashboardData } from '../../src/web/dashboard-data.js';
import { listFilter } from '../../src/web/list-params.js';
import { type QueuePageData, queueView } from '../../src/web/views/queue-view.js';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/web/app.js';
import { ipAllowed } from '../../src/web/access-control.js';
import { checkCredentials } from '../../src/web/credentials.js';
import { completeUtf8Length } from '../../src/web/log-tail.js';
import { nestParams, parseFormBody } from '../../src/web/params.js';
import { rubyInspect } from '../../src/web/ruby-inspect.js';
import { html, raw, safeHref } from '../../src/web/views/html.js';
import type { GlobalConfig } from '../../src/config/global-config.js';
import { inProcessDeps } from './in-process-app.js';

describe('html template', () => {
  it('escapes every interpolation unless marked raw, renders arrays and skips null/false', () => {
    const name = `<script>"x"&'y'</script>`;
    expect(html`<td title="${name}">${name}</td>`.value).toBe(
      '<td title="&lt;script&gt;&quot;x&quot;&amp;&#39;y&#39;&lt;/script&gt;">&lt;script&gt;&quot;x&quot;&amp;&#39;y&#39;&lt;/script&gt;</td>',
    );
    expect(html`${[1, '<b>', html`<i>${'&'}</i>`]}`.value).toBe('1&lt;b&gt;<i>&amp;</i>');
    expect(html`${null}${undefined}${false}${0}`.value).toBe('0');
    expect(html`${raw('<hr>')}`.value).toBe('<hr>');
    // Objects render as escaped JSON; what JSON cannot write (a bigint) renders as text.
    expect(html`${{ a: '<' }}`.value).toBe('{&quot;a&quot;:&quot;&lt;&quot;}');
    expect(html`${10n}`.value).toBe('10');
    expect(safeHref('javascript:alert(1)')).toBe('#');
    expect(safeHref('//evil.example')).toBe('#');
    expect(safeHref('https://ok.example/a')).toBe('https://ok.example/a');
    expect(safeHref('/q/test')).toBe('/q/test');
  });
});

describe('page layout', () => {
  it('a page without a flash has nothing between the body tag and the page itself', () => {
    const page = layout({ bare: true, env: null, flash: null, now: new Date(0), urls: new Urls(undefined, '127.0.0.1:3333') }, html`<p>x</p>`).value;
    expect(page.endsWith('<body class="env-development development bare" data-root="/"><p>x</p></body></html>')).toBe(true);
  });
});

describe('queue page head', () => {
  const page = (snap: QueuePageData['snap']) =>
    queueView(
      {
        name: 'q',
        snap,
        configText: '{}',
        schedules: [],
        table: { name: 'q', filter: listFilter({}), counts: { counts: null, source: null }, page: null, now: 0 },
        now: 0,
      },
      new Urls(undefined, '127.0.0.1:3333'),
    ).value;

  it('a queue process that does not answer and left no pid file reads "pid -", not a blank', () => {
    const dead = page({ name: 'q', alive: false, error: 'connect ENOENT', pid: null });
    expect(dead).toContain('pid <span id="queue-pid">-</span> · uptime <span id="queue-uptime">-</span>');
    expect(dead).toContain('queue is COMPLETELY DOWN');
    const up = page({ name: 'q', alive: true, status: 'UP', uptime: 5, pid: 4242 });
    expect(up).toContain('pid <span id="queue-pid">4242</span>');
  });
});

describe('timeline step durations', () => {
  it('reads as seconds, then minutes and seconds, then hours and minutes', () => {
    expect([0, 400, 9_999, 10_000, 15_000, 59_499, 59_500, 185_000, 3_599_000, 3_600_000, 7_260_000].map(stepDuration)).toEqual([
      '0.000s',
      '0.400s',
      '10.0s',
      '10s',
      '15s',
      '59s',
      '1m 00s',
      '3m 05s',
      '59m 59s',
      '1h 00m',
      '2h 01m',
    ]);
    expect(stepDuration(-1)).toBe('');
    expect(stepDuration(NaN)).toBe('');
  });
});

describe('timeline steps', () => {
  it("a step's details beyond from, to, actor and reason read as `key value` phrases, comma-separated", () => {
    const page = timelineView([{ at: '2026-11-21T10:00:00.000Z', from: 'que', to: 'run', actor: 'queue', pid: 4242, attempt: 2 }]).value;
    expect(page).toContain('<span class="t-reason"> <span class="muted small">pid 4242, attempt 2</span></span>');
  });
});

describe('dashboard supervisor line', () => {
  const mgrLine = (version: string, versionMismatch: boolean) => {
    const d: DashboardData = {
      mgr: { up: true, pid: 7, uptime: 3, version, versionMismatch },
      queues: [],
      timers: { ok: true, timers: [] },
      webVersion: '3.0.0',
      now: 0,
    };
    const page = dashboardView(d, new Urls(undefined, '127.0.0.1:3333'), false, html``).value;
    return /<li class="[^"]*">server: [^\n]*<\/li>/.exec(page)?.[0];
  };
  it('names both versions in the bad colour when rq-mgr runs another version than this web process', () => {
    expect(mgrLine('2.9.1', true)).toBe('<li class="bad">server: v2.9.1 (this web process is v3.0.0)</li>');
    expect(mgrLine('3.0.0', false)).toBe('<li class="">server: v3.0.0</li>');
  });
});

describe('form params', () => {
  it('nests Rack-style keys and refuses prototype keys', () => {
    expect(parseFormBody('mesg%5Bdest%5D=test&mesg[param1]=a+b&x_format=html&queue[coalesce_params][]=1&queue[coalesce_params][]=3')).toEqual({
      mesg: { dest: 'test', param1: 'a b' },
      x_format: 'html',
      queue: { coalesce_params: ['1', '3'] },
    });
    for (const key of ['__proto__[polluted]', 'a[__proto__][x]', 'constructor[prototype][y]'])
      expect(() => nestParams([[key, 'yes']]), key).toThrow('parameter name');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(nestParams([['a[b]c', '1']])).toEqual({ 'a[b]c': '1' });
  });

  it('refuses %-escapes that are not UTF-8, naming the field; keeps a U+FFFD the body holds itself', () => {
    expect(() => parseFormBody('a=ok&param1=x%FFy')).toThrow(
      'param1: expected UTF-8 text (each %-escape a byte of a UTF-8 sequence), received 1 byte sequence that is not UTF-8',
    );
    expect(() => parseFormBody('k%C3=v')).toThrow(/^request body: expected UTF-8 text/);
    expect(parseFormBody('param1=%EF%BF%BD%C3%A9')).toEqual({ param1: '\uFFFDé' });
    expect(parseFormBody('param1=\uFFFD')).toEqual({ param1: '\uFFFD' });
  });
});

describe('classic inspect texts', () => {
  it('renders like Ruby inspect', () => {
    expect(rubyInspect(['fail', 'msg not in runnable state'])).toBe('["fail", "msg not in runnable state"]');
    expect(rubyInspect([false, 'No attachment'])).toBe('[false, "No attachment"]');
    expect(rubyInspect({ queue: { name: 'x', n: ['1'] } })).toBe('{"queue"=>{"name"=>"x", "n"=>["1"]}}');
    expect(rubyInspect(null)).toBe('nil');
    expect(rubyInspect('a"b\\c\n')).toBe('"a\\"b\\\\c\\n"');
  });
});

describe('UTF-8 boundaries', () => {
  it('never cuts a UTF-8 sequence', () => {
    const b = Buffer.from('aé€😀');
    expect(completeUtf8Length(b, b.length)).toBe(b.length);
    expect(completeUtf8Length(b, 2)).toBe(1); // é cut after its first byte
    expect(completeUtf8Length(b, 4)).toBe(3); // € cut
    expect(completeUtf8Length(b, b.length - 1)).toBe(6); // 😀 cut
    expect(completeUtf8Length(Buffer.from([0x80, 0x80]), 2)).toBe(2); // garbage passes through
  });
});

describe('access checks', () => {
  it('compares credentials for known users only', () => {
    expect(checkCredentials({ a: 'p' }, 'a', 'p')).toBe(true);
    expect(checkCredentials({ a: 'p' }, 'a', 'q')).toBe(false);
    expect(checkCredentials({ a: 'p' }, 'b', 'p')).toBe(false);
    expect(checkCredentials({ a: 'p' }, 'toString', '')).toBe(false);
  });

  it('allowed_ips is a substring match of any one entry, empty allows all', () => {
    expect(ipAllowed('127.0.0.1', undefined)).toBe(true);
    expect(ipAllowed('127.0.0.1', [])).toBe(true);
    expect(ipAllowed('::ffff:127.0.0.1', ['127.0.0.'])).toBe(true);
    expect(ipAllowed('10.0.0.1', ['127.0.0.'])).toBe(false);
    // One entry that matches is enough: a list names every network that may come in.
    expect(ipAllowed('10.0.0.1', ['127.0.0.', '10.0.0.'])).toBe(true);
    expect(ipAllowed('192.168.1.5', ['127.0.0.', '10.0.0.'])).toBe(false);
  });
});

describe('buildApp with nothing running', () => {
  let root: string;
  let app: FastifyInstance;
  const make = (config: Partial<GlobalConfig>) =>
    buildApp(inProcessDeps(root, { config: { host: '127.0.0.1', port: 1, env: 'stage', ...config } as GlobalConfig }));
  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-webunit-'));
    for (const d of ['config', 'queues', 'timers']) await fs.mkdir(path.join(root, d));
    app = await make({});
  });
  afterAll(async () => {
    await app?.close();
    await fs.rm(root, { recursive: true, force: true });
  });

  it('says the supervisor is down, on the dashboard and as 503s', async () => {
    const dash = await app.inject({ url: '/' });
    expect(dash.statusCode).toBe(200);
    expect(dash.body).toContain('QUEUE MGR is DOWN');
    expect(dash.body).toContain('<body class="env-stage stage"');
    expect(dash.body).toMatch(/id="timer-error">Error: /);
    const list = await app.inject({ url: '/q.json' });
    expect(list.statusCode).toBe(503);
    // Every 503 says when to come back, not only the connection limits' own.
    expect(list.headers['retry-after']).toBe('5');
    expect(list.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(list.body)).toEqual(['fail', 'QueueMgr not running']);
    expect((await app.inject({ url: '/q/test' })).body).toBe('503 - QueueMgr not running');
    const health = await app.inject({ url: '/healthz' });
    expect(health.statusCode).toBe(503);
    expect(JSON.parse(health.body).failing[0].name).toBe('rq-mgr');
  });

  it('refuses cross-origin browser posts and unsupported bodies sensibly', async () => {
    const evil = await app.inject({
      method: 'POST',
      url: '/delete_queue',
      headers: { origin: 'http://evil.example', host: 'localhost' },
      payload: 'queue_name=x',
    });
    expect(evil.statusCode).toBe(403);
    expect(evil.body).toMatch(/cross-origin POST refused/);
    const bad = await app.inject({ method: 'POST', url: '/delete_queue', headers: { origin: 'null', host: 'localhost' }, payload: 'queue_name=x' });
    expect(bad.statusCode).toBe(403);
    // No Origin, but sent by a page of another site, as the browser says: refused too; from this site, or no browser, served.
    for (const site of ['cross-site', 'same-site']) {
      const from = await app.inject({ method: 'POST', url: '/delete_queue', headers: { 'sec-fetch-site': site, host: 'localhost' }, payload: 'queue_name=x' });
      expect([from.statusCode, from.body], site).toEqual([403, `403 - Forbidden: cross-origin POST refused (Sec-Fetch-Site ${site})`]);
    }
    // A compressed body is refused before any parser reads it: read as it is it would be other bytes than were meant.
    const gz = await app.inject({
      method: 'POST',
      url: '/q/test/new_message',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: '{"dest":"test"}',
    });
    expect([gz.statusCode, JSON.parse(gz.body)]).toEqual([
      415,
      ['fail', 'request body: expected it sent as it is (no Content-Encoding, or identity), received Content-Encoding "gzip"'],
    ]);
    const own = await app.inject({
      method: 'POST',
      url: '/delete_queue',
      headers: { 'sec-fetch-site': 'same-origin', host: 'localhost' },
      payload: 'queue_name=x',
    });
    expect(own.statusCode).not.toBe(403);
    const big = await app.inject({
      method: 'POST',
      url: '/q/test/new_message',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'mesg=' + 'x'.repeat(17 * 1024 * 1024),
    });
    expect(big.statusCode).toBe(413);
    expect(big.body).toMatch(/^413 - Request body too large/);
  });

  it('allowed_ips refuses other clients with the classic 403', async () => {
    const locked = await make({ allowed_ips: ['10.99.'] });
    try {
      const res = await locked.inject({ url: '/', remoteAddress: '127.0.0.1' });
      expect(res.statusCode).toBe(403);
      expect(res.body).toBe('Forbidden');
      // A JSON client gets the same refusal in its own format.
      const json = await locked.inject({ url: '/q.json', remoteAddress: '127.0.0.1' });
      expect(json.statusCode).toBe(403);
      expect(JSON.parse(json.body)).toEqual(['fail', 'Forbidden']);
      expect((await locked.inject({ url: '/css/rq.css', remoteAddress: '10.99.0.7' })).statusCode).toBe(200);
    } finally {
      await locked.close();
    }
  });
});
