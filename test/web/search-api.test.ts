// GET /search (brightroll's test_web_search.rb, then rq's paging, free text, the results page and refusals) against a real root.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebRoot, postForm, startWebRoot } from './web-root.js';

let w: WebRoot;
beforeAll(async () => {
  w = await startWebRoot({ queues: { test_search: { num_workers: 1 } } });
  for (const p of ['ear', 'hello:pear', 'search', 'html', 'html']) {
    const res = await postForm(`${w.base}/q/test_search/new_message`, {
      mesg: JSON.stringify({ dest: `${w.base}/q/test_search`, src: 'test_search', param1: p, _method: 'prep' }),
    });
    expect(res.status).toBe(200);
  }
}, 60_000);
afterAll(() => w?.stop());

describe('GET /search', () => {
  it('answers brightroll’s test: every message, contains, exact, an unknown field', async () => {
    const all = await fetch(w.base + '/search?name=test_search');
    expect(all.status).toBe(200);
    expect(all.headers.get('content-type')).toMatch(/application\/json/);
    expect(await all.json()).toHaveLength(5);
    expect(await (await fetch(w.base + '/search?name=test_search&query[param1]=ear')).json()).toHaveLength(3);
    expect(await (await fetch(w.base + '/search?name=test_search&query[param1]=ear&exact=true')).json()).toHaveLength(1);
    expect(await (await fetch(w.base + '/search?name=test_search&query[fakestuff]=asdfasdf')).json()).toHaveLength(0);
  });

  it('gives each message’s fields, its state and id; pages with X-Total-Count', async () => {
    const res = await fetch(w.base + '/search?name=test_search&query[param1]=html&limit=1&offset=1');
    expect(res.headers.get('x-total-count')).toBe('2');
    const [m] = await res.json();
    expect(m).toMatchObject({ param1: 'html', src: 'test_search', state: 'prep', msg_id: expect.stringMatching(/^\d{8}\./) });
  });

  it('renders the results page with a free text over every field, escaped', async () => {
    const res = await fetch(w.base + '/search?name=test_search&text=pear&x_format=html');
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    const body = await res.text();
    expect(body).toContain('id="search-total">1<');
    expect(body).toContain('hello:pear');
    const xss = await (await fetch(w.base + '/search?name=test_search&x_format=html&text=%3Cscript%3Ex%3C/script%3E')).text();
    expect(xss).not.toContain('<script>x</script>');
  });

  it('refuses what it cannot search, naming the field', async () => {
    const none = await fetch(w.base + '/search');
    expect(none.status).toBe(400);
    expect(await none.text()).toMatch(/name/);
    const nosuch = await fetch(w.base + '/search?name=nosuch');
    expect(nosuch.status).toBe(404);
    expect(nosuch.headers.get('content-type')).toMatch(/application\/json/);
    expect(await nosuch.json()).toEqual(['fail', expect.stringMatching(/nosuch/)]);
    const bad = await fetch(w.base + '/search?name=test_search&query[a][b]=x');
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/query\[a\]/);
    const limit = await fetch(w.base + '/search?name=test_search&limit=0');
    expect(limit.status).toBe(400);
    expect(await limit.text()).toMatch(/limit/);
  });
});
