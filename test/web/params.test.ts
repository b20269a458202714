// Query and form parameters: a query that gives a parameter twice is refused with 400 naming it, on every route the app registers, in the client's format.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shown } from '../../src/errors.js';
import { MAX_PARAM_DEPTH, type Params, nestParams, objectParam, parseQuery, requireShallow, requireCleanQuery } from '../../src/web/params.js';
import { type TestRoot, makeRoot } from '../helpers/rq-root.js';
import { type BuiltApp, type Route, appFor, fillRoute, routeTable } from './route-table.js';

const refusal = (name: string, values: string[]) => `${name}: expected one value (a query parameter is given at most once), received ${JSON.stringify(values)}`;

/** What requireCleanQuery says of a query string, or null when it lets it through. */
function refused(query: string): string | null {
  try {
    requireCleanQuery(parseQuery(query));
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
    // A value replaced by an object, or a list by an object: the first would be lost as well.
    expect(refused('a=1&a[b]=2')).toBe(refusal('a', ['1', '2']));
    expect(refused('a[]=1&a[b]=2')).toBe(refusal('a', ['1', '2']));
    // The whole name, however deep; its values only, not those of its siblings.
    expect(refused('a[b][c]=1&a[b][c]=2')).toBe(refusal('a[b][c]', ['1', '2']));
    expect(refused('a[b]=1&a[c]=3&a[b]=2')).toBe(refusal('a[b]', ['1', '2']));
  });

  it('lets lists (name[]) and distinct names through, and parses as before', () => {
    expect(refused('queue[]=a&queue[]=b&tag=t&query[param1]=x&query[param2]=y')).toBeNull();
    expect(parseQuery('queue[]=a&queue[]=b&query[param1]=x')).toEqual({ queue: ['a', 'b'], query: { param1: 'x' } });
    // A name of Object.prototype is no repeat of anything.
    expect(refused('toString=1&hasOwnProperty=2')).toBeNull();
  });

  it('refuses the names that would reach Object.prototype, at any level, naming them, and touches no prototype', () => {
    for (const [query, name] of [
      ['__proto__[x]=1', '__proto__'],
      ['constructor[prototype][y]=2', 'constructor'],
      ['prototype[z]=3', 'prototype'],
      ['a=1&a2[__proto__][w]=5', 'a2[__proto__]'],
      ['query[constructor]=x', 'query[constructor]'],
    ]) {
      expect(refused(query), query).toBe(`parameter name: expected a name without __proto__, constructor or prototype, received "${name}"`);
      // Left out of what the parser gives, which cannot refuse (the check above does).
      expect(Object.getPrototypeOf(parseQuery(query))).toBe(Object.prototype);
    }
    // Before a repeat: the name is what is wrong with the query.
    expect(refused('a=1&a=2&constructor=1')).toMatch(/^parameter name: /);
    expect([({} as Record<string, unknown>).x, ({} as Record<string, unknown>).y, ({} as Record<string, unknown>).w]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });
});

/** A name of `levels` segments: `a[b][b]…`. */
const nameOf = (levels: number) => `a${'[b]'.repeat(levels - 1)}`;
/** What requireShallow says of a value, or null when it lets it through. */
function tooDeep(value: unknown, what = 'request body'): string | null {
  try {
    requireShallow(value, what);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

describe('nesting limits', () => {
  const refusal = (what: string) => `${what}: expected nesting at most ${MAX_PARAM_DEPTH} deep, received ${MAX_PARAM_DEPTH + 1} levels`;

  it('a value nested 32 levels (objects or arrays) is let through, one level more refused naming what it was', () => {
    const wrap = fc.constantFrom(
      (v: unknown) => ({ k: v }),
      (v: unknown) => [v],
    );
    // As many levels as the limit and a few more (fc.array alone draws short arrays).
    const levels = fc.integer({ min: 1, max: MAX_PARAM_DEPTH + 8 }).chain((n) => fc.array(wrap, { minLength: n, maxLength: n }));
    fc.assert(
      fc.property(levels, fc.constantFrom('request body', 'mesg'), (layers, what) => {
        // A wide sibling beside the deep branch, so that the deep one is not simply the last looked at.
        const value = { ...(layers.reduce<unknown>((v, w) => w(v), 'x') as object), side: [{ s: '1' }] };
        expect(tooDeep(value, what)).toBe(layers.length > MAX_PARAM_DEPTH ? refusal(what) : null);
      }),
    );
    expect(tooDeep('text')).toBeNull();
    expect(tooDeep(null)).toBeNull();
  });

  it('a form name of 32 segments nests, one of 33 stays flat and is refused by name', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX_PARAM_DEPTH + 8 }), (levels) => {
        const name = nameOf(levels);
        const params = nestParams([[name, 'v']]);
        if (levels <= MAX_PARAM_DEPTH) {
          let at: unknown = params.a;
          for (let i = 1; i < levels; i++) at = (at as Params).b;
          expect(at).toBe('v');
          expect(tooDeep(params)).toBeNull();
        } else {
          expect(params).toEqual({ [name]: 'v' });
          expect(tooDeep(params)).toBe(`parameter name: expected a name nested at most ${MAX_PARAM_DEPTH} deep, received ${shown(name)} (${levels} levels)`);
        }
      }),
    );
    // A JSON body's key is read the same way.
    expect(tooDeep({ [nameOf(MAX_PARAM_DEPTH)]: '1' })).toBeNull();
  });
});

describe('nestParams', () => {
  it('keeps flat a name that does not start with a name or has text after its brackets, and collects only at a trailing []', () => {
    expect(nestParams([['[a]', '1']])).toEqual({ '[a]': '1' });
    expect(nestParams([['a[b]x[c]', '1']])).toEqual({ 'a[b]x[c]': '1' });
    expect(nestParams([['a[b]c', '1']])).toEqual({ 'a[b]c': '1' });
    expect(nestParams([['a[][b]', '1']])).toEqual({ a: { '': { b: '1' } } });
  });
});

describe('objectParam', () => {
  it('is the nested object of a name, and undefined for text, a list, null (a JSON body) or no params', () => {
    const params = JSON.parse('{"queue":{"name":"q"},"list":["x"],"text":"t","none":null}') as Params;
    expect(objectParam(params, 'queue')).toEqual({ name: 'q' });
    expect(['list', 'text', 'none', 'absent'].map((k) => objectParam(params, k))).toEqual([undefined, undefined, undefined, undefined]);
    expect(objectParam(undefined, 'queue')).toBeUndefined();
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
