// The OpenAPI document (/docs/json) and Swagger UI (/docs): valid OpenAPI 3, complete against the route table,
// the committed docs/openapi.json, served from this server through the same checks as every route.
import fs from 'node:fs';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT } from '../helpers/rq-root.js';
import { OPENAPI_FILE, openapiDifference } from './openapi-file.js';
import { PREFIX, prefixedRoot } from './openapi-harness.js';
import { routeTable } from './route-table.js';
import { type WebRoot, rawGet, startWebRoot } from './web-root.js';

interface Operation {
  summary?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> };
  responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }>;
}
interface OpenApi {
  openapi: string;
  servers: { url: string }[];
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
}

const s = prefixedRoot();
let doc: OpenApi;

beforeAll(async () => {
  const res = await fetch(`${s.w.base}/docs/json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  doc = (await res.json()) as OpenApi;
});

/** Every `METHOD /path` of the document, paths as OpenAPI writes them (`/q/{q}`). */
const operations = () =>
  Object.entries(doc.paths).flatMap(([p, ops]) => Object.entries(ops).map(([m, op]) => ({ key: `${m.toUpperCase()} ${p}`, path: p, op })));

/** Static files of public/ and the two app.ts serves, and the docs' own routes: not API. */
function isStaticOrDocs(pattern: string): boolean {
  const files = (fs.readdirSync(path.join(PROJECT, 'src', 'web', 'public'), { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((e) => e.isFile())
    .map((e) => `/${path.relative(path.join(PROJECT, 'src', 'web', 'public'), path.join(e.parentPath, e.name))}`);
  return (
    [...files, '/js/ansi_up.js', '/js/uPlot.esm.js', '/css/uPlot.min.css', '/favicon.ico'].includes(pattern) ||
    pattern === '/docs' ||
    pattern.startsWith('/docs/')
  );
}

describe('the document at /docs/json', () => {
  it('is valid OpenAPI 3, its paths relative to relative_root', async () => {
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toMatch(/^3\.0\./);
    expect(doc.servers).toEqual([expect.objectContaining({ url: PREFIX })]);
  });

  it('documents every route of the route table with its method, and nothing else', async () => {
    const table = (await routeTable(s.w.root))
      .filter((r) => r.method === 'GET' || r.method === 'POST')
      .map((r) => ({ method: r.method, pattern: r.pattern.slice(PREFIX.length) || '/' }))
      .filter((r) => !isStaticOrDocs(r.pattern));
    const expected = [...new Set(table.map((r) => `${r.method} ${r.pattern.replace(/:(\w+)/g, '{$1}')}`))].sort();
    expect(expected.length).toBeGreaterThan(40);
    // A route added to routes.ts without a schema shows up here without a summary, or (hidden) not at all.
    expect(
      operations()
        .map((o) => o.key)
        .sort(),
    ).toEqual(expected);
  });

  it('gives every operation a summary, known tags, its path parameters and its answers', () => {
    const tags = new Set(doc.tags.map((t) => t.name));
    const problems: string[] = [];
    for (const { key, path: p, op } of operations()) {
      if (!op.summary) problems.push(`${key}: no summary`);
      if (!op.tags?.length || !op.tags.every((t) => tags.has(t))) problems.push(`${key}: tags ${JSON.stringify(op.tags)}`);
      const inPath = [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      const declared = (op.parameters ?? [])
        .filter((x) => x.in === 'path' && x.required)
        .map((x) => x.name)
        .sort();
      if (JSON.stringify(inPath) !== JSON.stringify(declared)) problems.push(`${key}: path parameters ${declared.join(',')}`);
      // The plugin's placeholder when a route has no response schema.
      if (Object.values(op.responses).some((r) => !r.content && !r.headers)) problems.push(`${key}: a response without content`);
    }
    expect(problems).toEqual([]);
  });

  it('gives every JSON route and the JSON form of every action a JSON answer', () => {
    const byKey = new Map(operations().map((o) => [o.key, o.op]));
    const jsonRoutes = [...byKey.keys()].filter((k) => k.startsWith('GET ') && k.endsWith('.json'));
    // Routes whose JSON form is a suffix of a segment, or that have no suffix.
    jsonRoutes.push('GET /healthz', 'GET /q/{q}/config', 'GET /q/{q}', 'GET /q/{q}/{id}', 'GET /tags/{tag}', 'GET /q/{q}/tags/{tag}');
    // Actions answering JSON with x_format=json (new_message by default).
    const actions = [
      'new_message',
      '{id}',
      '{id}/cancel',
      '{id}/requeue',
      '{id}/priority',
      '{id}/reschedule',
      '{id}/tags',
      '{id}/undepend',
      '{id}/attach/new',
      '{id}/attach/{name}',
      'requeue_errs',
      'cancel_tagged',
    ];
    jsonRoutes.push(...actions.map((a) => `POST /q/{q}/${a}`));
    expect(jsonRoutes.length).toBeGreaterThan(25);
    const missing = jsonRoutes.filter((k) => !byKey.get(k)?.responses['200']?.content?.['application/json']);
    expect(missing).toEqual([]);
    for (const a of actions.filter((x) => x !== 'new_message')) {
      const body = byKey.get(`POST /q/{q}/${a}`)!.requestBody?.content['multipart/form-data']?.schema.properties ?? {};
      expect(Object.keys(body), a).toContain('x_format');
    }
  });
});

describe('docs/openapi.json, the document as committed', () => {
  let plain: WebRoot;
  beforeAll(async () => {
    // The config rq-install writes as far as the document goes: no relative_root, no basic_auth.
    plain = await startWebRoot({ queues: {} });
  }, 60_000);
  afterAll(async () => {
    await plain?.stop();
  });

  it('is what the web serves at /docs/json, info.version aside (npm run openapi writes it)', async () => {
    const served = (await (await fetch(`${plain.base}/docs/json`)).json()) as Record<string, unknown>;
    const difference = openapiDifference(await fs.promises.readFile(OPENAPI_FILE, 'utf8'), served);
    const advice = `the served /docs/json differs from docs/openapi.json ${difference}. If the change is meant, run \`npm run openapi\`, review \`git diff docs/openapi.json\` and commit it`;
    expect(difference, advice).toBeNull();
  });
});

/** A GET through http.request, to send a Host header fetch would not. */
describe('Swagger UI at /docs', () => {
  it.each(['/docs', '/docs/'])('%s is the UI, its scripts and styles from this server', async (page) => {
    const res = await fetch(s.w.base + page);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    // rq's own policy: scripts only from this origin.
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await res.text();
    expect(html).toContain('<div id="swagger-ui">');
    expect(html).not.toMatch(/https?:\/\//);
    const assets = [...html.matchAll(/<(?:script src|link[^>]*href)="([^"]+)"/g)].map((m) => new URL(m[1], res.url));
    expect(assets.map((u) => u.pathname)).toEqual(
      expect.arrayContaining([
        `${PREFIX}/docs/static/swagger-ui-bundle.js`,
        `${PREFIX}/docs/static/swagger-ui.css`,
        `${PREFIX}/docs/static/swagger-initializer.js`,
      ]),
    );
    // rq's favicon, not the plugin's.
    expect(assets.map((u) => u.pathname).filter((p) => /favicon/.test(p))).toEqual([`${PREFIX}/docs/static/theme/favicon.svg`]);
    for (const u of assets) {
      expect(u.origin).toBe(s.w.origin);
      const asset = await fetch(u);
      expect(asset.status, u.href).toBe(200);
      expect(asset.headers.get('content-type'), u.href).toMatch(/^(application\/javascript|text\/css|image\/png|image\/svg\+xml)/);
      await asset.arrayBuffer();
    }
  });

  it('loads the document from this server', async () => {
    const js = await (await fetch(`${s.w.base}/docs/static/swagger-initializer.js`)).text();
    expect(js).toContain("url: resolveUrl('./json')");
    expect(js).toContain('validatorUrl: null');
  });

  it('/docs/static/index.html leads to /docs/, with a query string too (no redirect loop)', async () => {
    for (const suffix of ['', '?x=<b>']) {
      const res = await fetch(`${s.w.base}/docs/static/index.html${suffix}`, { redirect: 'manual' });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe(`${s.w.base}/docs/`);
    }
  });

  it('is refused to a Host that is not this server, like every route', async () => {
    for (const p of ['/docs', '/docs/json', '/docs/static/swagger-ui-bundle.js']) {
      expect((await rawGet(s.w.base + p, { host: 'evil.example' })).status, p).toBe(421);
      expect((await rawGet(s.w.base + p, { host: `127.0.0.1:${s.w.port}` })).status, p).toBe(200);
    }
  });
});
