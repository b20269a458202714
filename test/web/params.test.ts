// Query and form parameters: a query that gives a parameter twice is refused with 400 naming it, on every route the app registers, in the client's format.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQuery, requireSingleParams } from '../../src/web/params.js';
import { type TestRoot, makeRoot } from '../helpers/rq-root.js';
import { type BuiltApp, type Route, appFor, fillRoute, routeTable } from './route-table.js';

const refusal = (name: string, values: string[]) => `${name}: expected one value (a query parameter is given at most once), received ${JSON.stringify(values)}`;

/** What requireSingleParams says of a query string, or null when it lets it through. */
function refused(query: string): string | null {
  try {
    requireSingleParams(parseQuery(query));
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

describe('parseQuery', () => {
  it('refuses a name given twice, nested or not, and a name given both as a value and as a list or object', () => {
    expect(refused('state=done&state=err')).toBe(refusal('state', ['done', 'err']));
    expect(refused('limit=25&offset=0&limit=50')).toBe(refusal('limit', ['25', '50']));
    expect(refused('state=')).toBeNull();
    expect(refused('x=&x=')).toBe(refusal('x', ['', '']));
    expect(refused('query[param1]=a&query[param1]=b')).toBe(refusal('query[param1]', ['a', 'b']));
    expect(refused('a=1&a[]=2')).toBe(refusal('a', ['1', '2']));
    expect(refused('a[b]=1&a=2')).toBe(refusal('a', ['1', '2']));
    // %-escaped brackets are the same name.
    expect(refused('query%5Bparam1%5D=a&query[param1]=b')).toBe(refusal('query[param1]', ['a', 'b']));
  });

  it('lets lists (name[]) and distinct names through, and parses as before', () => {
    expect(refused('queue[]=a&queue[]=b&tag=t&query[param1]=x&query[param2]=y')).toBeNull();
    expect(parseQuery('queue[]=a&queue[]=b&query[param1]=x')).toEqual({ queue: ['a', 'b'], query: { param1: 'x' } });
    // A name of Object.prototype is no repeat of anything.
    expect(refused('toString=1&hasOwnProperty=2')).toBeNull();
  });
});

describe('every route refuses a repeated query parameter before it acts', () => {
  let t: TestRoot;
  let built: BuiltApp;
  let routes: Route[];
  beforeAll(async () => {
    t = await makeRoot();
    routes = await routeTable(t.root);
    built = await appFor(t.root, () => undefined);
  });
  afterAll(async () => {
    await built?.close();
    await t?.cleanup();
  });
  const values = { q: 'test', id: '20261121.1643.46.613.1', name: 'a.dat', file: 'stdio.log', tag: 'swept' };
  const urlOf = (r: Route, query: string) => {
    const url = fillRoute(r.pattern, values);
    return `${url}${url.includes('?') ? '&' : '?'}${query}`;
  };

  it('400 naming it, ["fail", text] to a JSON client and the text to the others, on each method × route', async () => {
    const text = refusal('limit', ['25', '50']);
    expect(routes.length).toBeGreaterThan(55);
    // Swagger UI's index.html is redirected to /docs/ in its onRequest hook (openapi/api-docs.ts): it reads no parameter, and the redirect drops them.
    for (const r of routes.filter((x) => !x.pattern.endsWith('/docs/static/index.html'))) {
      const method = r.method as 'GET' | 'HEAD' | 'POST';
      const json = await built.app.inject({ method, url: urlOf(r, 'limit=25&limit=50'), headers: { accept: 'application/json' } });
      expect([r.method, r.pattern, json.statusCode]).toEqual([r.method, r.pattern, 400]);
      if (method === 'HEAD') continue;
      // A .txt URL is always text (docs/http-api.md, Errors).
      if (r.pattern.endsWith('.txt')) expect([r.pattern, json.body]).toEqual([r.pattern, `400 - ${text}`]);
      else expect([r.pattern, json.headers['content-type'], JSON.parse(json.body)]).toEqual([r.pattern, 'application/json; charset=utf-8', ['fail', text]]);
      // The others keep the classic text; a route that only speaks JSON (new_messages) answers JSON to them too.
      const plain = await built.app.inject({ method, url: urlOf(r, 'limit=25&limit=50&x_format=html') });
      expect([r.pattern, plain.statusCode]).toEqual([r.pattern, 400]);
      expect([r.pattern, plain.body]).toEqual([r.pattern, plain.body.startsWith('[') ? JSON.stringify(['fail', text]) : `400 - ${text}`]);
    }
  });

  it('the list of a queue: state=done&state=err is refused, not read as its last value', async () => {
    const res = await built.app.inject({ url: '/q/test/messages.json?state=done&state=err' });
    expect([res.statusCode, JSON.parse(res.body)]).toEqual([400, ['fail', refusal('state', ['done', 'err'])]]);
  });
});
