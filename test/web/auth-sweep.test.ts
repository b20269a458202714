// basic_auth on every method × route the app registers (static files and 404s too): without valid
// credentials each answers 401 with the realm and changes nothing on disk; with them, none answers 401.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { type AttachedMessage, attachedDoneMessage, contentSnapshot } from './message-fixture.js';
import { type Route, fillRoute, routeTable } from './route-table.js';
import { type WebRoot, startWebRoot } from './web-root.js';

const REALM = 'rq-sweep';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const GOOD = { authorization: basic('admin', 's3cret') };

/** Requests outside the route table: what the not-found handler answers, and methods no route has. */
const UNROUTED: Route[] = [
  { method: 'GET', pattern: '/no/such/route' },
  { method: 'POST', pattern: '/no/such/route' },
  ...['PUT', 'DELETE', 'PATCH', 'OPTIONS'].map((method) => ({ method, pattern: '/q/:q' })),
];

let w: WebRoot;
let msg: AttachedMessage;
let sweep: { method: string; url: string }[];
let linkFile: string;
let script: string;

beforeAll(async () => {
  w = await startWebRoot({ config: { allow_new_queue: true, basic_auth: { realm: REALM, users: { admin: 's3cret' } } } });
  msg = await attachedDoneMessage(w.base, w.root, 'test', { headers: GOOD });
  // A queue definition new_queue_link would create a queue from, were it let through.
  script = JSON.parse(await fs.readFile(queuePaths(w.root, 'test').configFile, 'utf8')).script as string;
  linkFile = path.join(w.root, 'linked.json');
  await fs.writeFile(linkFile, JSON.stringify({ name: 'swept_link', script, num_workers: 1 }));
  const values = { q: 'test', id: msg.id, name: msg.name, file: 'stdio.log', tag: 'swept' };
  sweep = [...(await routeTable(w.root)), ...UNROUTED].map((r) => ({ method: r.method, url: w.base + fillRoute(r.pattern, values) }));
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

/** Fields that make every POST route act if it let the request through: create, delete, down, new queue, upload, tag, cancel by tag, undepend. */
function actingBody(): FormData {
  const fd = new FormData();
  fd.set('mesg', JSON.stringify({ dest: 'test', param1: 'done' }));
  fd.set('x_format', 'json');
  fd.set('_method', 'delete');
  fd.set('down', '1');
  fd.set('queue_name', 'test');
  fd.set('add', 'swept');
  fd.set('tag', 'swept');
  fd.set('all', 'true');
  fd.set('queue[name]', 'swept');
  fd.set('queue[script]', script);
  fd.set('queue[json_path]', linkFile);
  fd.set('filedata', new Blob(['swept']), 'swept.txt');
  return fd;
}

async function hit(method: string, url: string, headers: Record<string, string>, body?: FormData | URLSearchParams): Promise<Response> {
  const res = await fetch(url, { method, headers, body: method === 'POST' ? body : undefined, redirect: 'manual' });
  // The log's event stream would otherwise stay open; status and headers are all that is checked.
  await res.body?.cancel();
  return res;
}

describe('the route table', () => {
  it('holds the routes of spec §9.3 and the static files, each with a real target', () => {
    const lines = sweep.map((r) => `${r.method} ${r.url.slice(w.base.length)}`);
    expect(lines.length).toBeGreaterThan(55);
    for (const must of [
      'POST /q/test/new_message',
      'GET /css/rq.css',
      'GET /js/main.js',
      'GET /favicon.ico',
      'HEAD /q.json',
      `GET /q/test/${msg.id}/attach/${msg.name}`,
      `POST /q/test/${msg.id}/attach/new`,
      // rq-beyond §B9: the tag routes.
      `POST /q/test/${msg.id}/tags`,
      'POST /q/test/cancel_tagged',
      'GET /q/test/tags.json',
      'GET /q/test/tags/swept',
      'GET /tags/swept',
      'GET /tracked.json',
      // rq-beyond §B8, §B12: undepend, the limits table and the dashboard script that redraws it.
      `POST /q/test/${msg.id}/undepend`,
      'GET /limits.json',
      'HEAD /limits.json',
      'GET /js/limits.js',
      'GET /js/poll.js',
      // The OpenAPI document and Swagger UI with its assets (web/openapi/api-docs.ts).
      'GET /docs',
      'GET /docs/json',
      'GET /docs/yaml',
      'GET /docs/static/swagger-initializer.js',
      'GET /docs/static/swagger-ui.css',
      // rq-beyond §B15: statistics, failure groups, their pages and the chart library they draw with.
      'GET /q/test/stats.json',
      'GET /q/test/failed.json',
      'GET /q/test/stats',
      'GET /q/test/failed',
      'GET /js/stats-charts.js',
      'GET /js/uPlot.esm.js',
      'GET /css/uPlot.min.css',
      'GET /css/stats.css',
      // The live event stream and the scripts that follow it.
      'GET /events',
      'GET /js/live.js',
      'GET /js/queue.js',
      // rq-beyond §B16: Prometheus, behind the same basic_auth unless metrics_public (metrics-public.test.ts).
      'GET /metrics',
      'HEAD /metrics',
      // A fleet's hosts (docs/fleet.md): behind the same basic_auth as every API route, and its page as every page.
      'GET /fleet.json',
      'HEAD /fleet.json',
      'GET /fleet',
      'HEAD /fleet',
      'GET /js/fleet.js',
    ]) {
      expect(lines).toContain(must);
    }
  });
});

describe('without valid credentials', () => {
  const refused: [string, Record<string, string>][] = [
    ['no Authorization header', {}],
    ['a wrong password', { authorization: basic('admin', 'nope') }],
    ['an unknown user with a known password', { authorization: basic('root', 's3cret') }],
    ['an empty password', { authorization: basic('admin', '') }],
    ['another scheme', { authorization: 'Bearer s3cret' }],
    ['a Basic value that is not base64', { authorization: 'Basic !!!' }],
  ];

  it.each(refused)('with %s every route answers 401 with WWW-Authenticate and changes nothing', async (_label, headers) => {
    const before = await contentSnapshot(w.root);
    const answers: string[] = [];
    for (const r of sweep) {
      const res = await hit(r.method, r.url, headers, actingBody());
      const challenge = res.headers.get('www-authenticate') ?? '(none)';
      answers.push(`${r.method} ${r.url} ${res.status} ${challenge.startsWith(`Basic realm="${REALM}"`) ? 'challenge' : challenge}`);
    }
    // One list, so a failure names every route that let the request through.
    expect(answers).toEqual(sweep.map((r) => `${r.method} ${r.url} 401 challenge`));
    expect(await contentSnapshot(w.root)).toEqual(before);
  });
});

describe('with the right credentials', () => {
  it('every GET and HEAD route serves its target (200), or a 303 on this server to a page that does', async () => {
    const reads = sweep.filter((r) => (r.method === 'GET' || r.method === 'HEAD') && !r.url.includes('/no/such/route'));
    const answers: string[] = [];
    for (const r of reads) {
      let res = await hit(r.method, r.url, GOOD);
      // Swagger UI's /docs/static/index.html leads to /docs/.
      const location = res.status === 303 ? new URL(res.headers.get('location') ?? '', r.url) : null;
      if (location?.origin === w.origin) res = await hit(r.method, location.href, GOOD);
      answers.push(`${r.method} ${r.url} ${res.status}`);
    }
    // This root is in no fleet: /fleet.json's and /fleet's own answer is the 404 that says so (test/fleet/ serves them in one).
    expect(answers).toEqual(reads.map((r) => `${r.method} ${r.url} ${/\/fleet(\.json)?$/.test(r.url) ? 404 : 200}`));
  });

  it('no route answers 401', async () => {
    // Empty forms: every POST is let in and refuses or does something harmless (clone, restart).
    const answers: string[] = [];
    for (const r of sweep) {
      const res = await hit(r.method, r.url, GOOD, new URLSearchParams());
      answers.push(`${r.method} ${r.url} ${res.status === 401 || res.headers.has('www-authenticate') ? 'challenged' : 'let in'}`);
    }
    expect(answers).toEqual(sweep.map((r) => `${r.method} ${r.url} let in`));
  });
});
