// Tag pages against a real rq-mgr + web process (rq-beyond §B9, §B1.11): message page chips, form and Track toggle, the tag views, queue tag chips, the dashboard's #tracked, the form's mesg[tags]; hostile values come back escaped.
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { type WebRoot, cookiesOf, postForm, send, startWebRoot, waitState } from './web-root.js';

let w: WebRoot;
let B: string;

beforeAll(async () => {
  w = await startWebRoot({ queues: { pa: {}, pb: {} } });
  B = w.base;
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

const later = () => Math.floor(Date.now() / 1000) + 3600;
const queued = (q: string, fields: Record<string, unknown> = {}) => send(B, q, { param1: 'done', due: later(), ...fields });
const page = async (p: string, init: RequestInit = {}) => {
  const res = await fetch(B + p, init);
  expect(res.headers.get('content-type'), p).toMatch(/^text\/html/);
  return [res.status, await res.text()] as const;
};
/** The markup of one element with an id, up to the end of its section. */
const section = (doc: string, id: string) => {
  const at = doc.indexOf(`id="${id}"`);
  expect(at, id).toBeGreaterThan(-1);
  return doc.slice(at, doc.indexOf('</section>', at));
};
/** The data-ref of every row of a table, in order. */
const refs = (doc: string) => [...doc.matchAll(/<tr data-ref="([^"]+)">/g)].map((m) => m[1]);

describe('message page', () => {
  it('shows tag chips linking to the tag view, #tag-form, and a Track toggle that adds and removes "track"', async () => {
    const id = await queued('pa', { tags: 'nightly,v1.json' });
    const [, doc] = await page(`/q/pa/${id}`);
    const tags = section(doc, 'tags-section');
    expect(tags).toContain('<a class="tag-chip" data-tag="nightly" href="/tags/nightly">nightly</a>');
    // A tag ending in .json would read as the JSON route: its chip asks for the HTML view.
    expect(tags).toContain('<a class="tag-chip" data-tag="v1.json" href="/tags/v1.json?x_format=html">v1.json</a>');
    expect(tags).toContain(`<form id="tag-form" class="tag-form" method="post" action="/q/pa/${id}/tags">`);
    expect(tags).toContain('name="add"');
    expect(tags).toContain('name="remove"');
    expect(tags).toContain('id="btn-track"');
    expect(tags).not.toContain('id="btn-untrack"');
    // Tags have their own card, not a row of the full field table.
    expect(doc).not.toContain('id="field-tags"');

    const track = await postForm(`${B}/q/pa/${id}/tags`, { add: 'track' });
    expect(track.status).toBe(303);
    const [, tracked] = await page(`/q/pa/${id}`, { headers: { cookie: cookiesOf(track) } });
    expect(tracked).toMatch(/<div id="flash-notice"[^>]*>Tags updated: nightly, v1.json, track</);
    expect(section(tracked, 'tags-section')).toContain('id="btn-untrack"');
    expect((await postForm(`${B}/q/pa/${id}/tags`, { remove: 'track' })).status).toBe(303);
    const [, untracked] = await page(`/q/pa/${id}`);
    expect(section(untracked, 'tags-section')).toContain('id="btn-track"');

    const bare = await queued('pa');
    expect(section((await page(`/q/pa/${bare}`))[1], 'tags-section')).toContain('<span class="muted" id="tags-empty">none</span>');
  });
});

describe('tag views', () => {
  it('GET /tags/<tag>: every queue, newest tagging first, with state and links; GET /q/<q>/tags/<tag>: one queue, with cancel_tagged', async () => {
    const first = await queued('pa', { tags: 'view' });
    const second = await queued('pb', { tags: 'view' });
    const finished = await send(B, 'pb', { param1: 'done', tags: 'view' });
    await waitState(B, 'pb', finished, ['done']);
    const [status, doc] = await page('/tags/view');
    expect(status).toBe(200);
    expect(doc).toContain('<span class="tag-chip" id="tag-name">view</span> in every queue');
    expect(doc).toContain('<span id="tagged-total">3</span>');
    expect(refs(doc)).toEqual([`pb/${finished}`, `pb/${second}`, `pa/${first}`]);
    expect(doc).toContain(`<td class="msg"><a class="msg-link" href="/q/pb/${finished}">${finished}</a></td><td class="state">done</td>`);
    expect(doc).toContain(`<td class="queue"><a href="/q/pa">pa</a></td>`);
    expect(doc).not.toContain('id="cancel-tagged-form"');

    const [, paged] = await page('/tags/view?limit=1&offset=1');
    expect(refs(paged)).toEqual([`pb/${second}`]);
    expect(paged).toContain('id="tagged-prev" href="/tags/view?offset=0&amp;limit=1"');
    expect(paged).toContain('id="tagged-next" href="/tags/view?offset=2&amp;limit=1"');
    const [, done] = await page('/tags/view?state=done');
    expect(refs(done)).toEqual([`pb/${finished}`]);
    expect(done).toContain('<option value="done" selected>done</option>');

    const [, one] = await page('/q/pb/tags/view');
    expect(refs(one)).toEqual([`pb/${finished}`, `pb/${second}`]);
    expect(one).toContain('<title>RQ :: pb</title>');
    const cancel = section(one, 'cancel-tagged');
    expect(cancel).toContain(
      '<form class="inline" id="cancel-tagged-form" method="post" action="/q/pb/cancel_tagged" data-confirm="Cancel every prep, queued and running message of pb tagged view?">',
    );
    expect(cancel).toContain('<input type="hidden" name="tag" value="view">');
    // The confirm prompt needs confirm.js on the page.
    expect(one).toContain('<script type="module" src="/js/confirm.js"></script>');

    const [, empty] = await page('/tags/nobody');
    expect(empty).toContain('<p class="muted" id="tagged-empty">No messages.</p>');
  });

  it('a bad tag, state or offset is a 400 naming the field; unknown queues are 404', async () => {
    const bad = await fetch(`${B}/tags/a%20b`);
    expect([bad.status, await bad.text()]).toEqual([
      400,
      '400 - tag: expected a tag of 1-64 characters from A-Z a-z 0-9 . _ : @ + - (starting with a letter or digit), received "a b"',
    ]);
    const state = await fetch(`${B}/q/pa/tags/view?state=nope`);
    expect([state.status, await state.text()]).toEqual([400, '400 - state: expected one of prep, que, run, done, relayed, err, received "nope"']);
    expect((await fetch(`${B}/tags/view?offset=1000`)).status).toBe(400);
    expect((await fetch(`${B}/q/nosuch/tags/view`)).status).toBe(404);
  });
});

describe('queue page and dashboard', () => {
  it("the queue page lists its tags with counts, each linking to the queue's tag view", async () => {
    await queued('pb', { tags: 'qchip' });
    const [, doc] = await page('/q/pb');
    const tags = section(doc, 'queue-tags');
    expect(tags).toContain('<a class="tag-chip" data-tag="qchip" href="/q/pb/tags/qchip">qchip <span class="tag-count">1</span></a>');
  });

  it("the dashboard's #tracked lists tracked messages across queues with their state; hostile texts come back escaped", async () => {
    const hostile = `<script>alert(1)</script>"'><img src=x onerror=1>`;
    const a = await queued('pa', { tags: 'track' });
    const b = await queued('pb', { tags: 'track' });
    await postForm(`${B}/q/pb/${b}/cancel`, { x_format: 'json', reason: hostile });
    const [, doc] = await page('/');
    const tracked = section(doc, 'tracked');
    expect(tracked).toContain('data-refresh="/tracked.json"');
    expect(refs(tracked)).toEqual([`pb/${b}`, `pa/${a}`]);
    expect(tracked).toContain(
      '<td class="state">err</td><td class="status">err - CANCELLED - &lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&gt;&lt;img src=x onerror=1&gt;</td>',
    );
    expect(tracked).toContain('<td class="state">que</td>');
    for (const view of [doc, (await page('/tags/track'))[1], (await page('/q/pb/tags/track'))[1]]) {
      expect(view).not.toContain('<script>alert');
      expect(view).not.toContain('<img src=x');
    }
    // A hostile tag never reaches a page: refused as text, which browsers are told not to sniff.
    const res = await fetch(`${B}/tags/${encodeURIComponent(hostile)}`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const flash = await postForm(`${B}/q/pa/cancel_tagged`, { tag: 'track', back: `/q/pa?x=${hostile}` });
    expect(flash.headers.get('location')).toMatch(new RegExp(`^${w.origin}/q/pa\\?x=[^<>"' ]+$`));
    await postForm(`${B}/q/pa/${a}/cancel`, { x_format: 'json' });
  });
});

describe('new-message form', () => {
  it('has mesg[tags] (hidden by form.json like the others, label overridable); the tags arrive', async () => {
    const [, form] = await page('/q/pa/new_message');
    expect(form).toContain('<div class="field" id="mesg_tags_field">');
    expect(form).toContain('<input type="text" id="mesg_tags" name="mesg[tags]" value="">');
    const res = await postForm(`${B}/q/pa/new_message`, {
      x_format: 'json',
      'mesg[dest]': 'pa',
      'mesg[param1]': 'done',
      'mesg[due]': String(later()),
      'mesg[tags]': 'from-form,second',
    });
    const id = ((await res.json()) as string[])[1].split('/').pop()!;
    expect(((await (await fetch(`${B}/q/pa/${id}.json`)).json()) as { tags: string[] }).tags).toEqual(['from-form', 'second']);
    const bad = await postForm(`${B}/q/pa/new_message`, { x_format: 'json', 'mesg[dest]': 'pa', 'mesg[tags]': 'a b' });
    expect([bad.status, await bad.json()]).toEqual([
      400,
      ['fail', 'tags[0]: expected a tag of 1-64 characters from A-Z a-z 0-9 . _ : @ + - (starting with a letter or digit), received "a b"'],
    ]);
    await postForm(`${B}/q/pa/${id}/cancel`, { x_format: 'json' });

    const formFile = queuePaths(w.root, 'pa').formFile;
    try {
      await fs.writeFile(formFile, JSON.stringify({ default: 'hidden', mesg_param1: {} }));
      expect((await page('/q/pa/new_message'))[1]).toContain('<div class="field" id="mesg_tags_field" style="display: none;">');
      await fs.writeFile(formFile, JSON.stringify({ default: 'hidden', mesg_tags: { label: 'Labels <b>', help: 'comma list' } }));
      const custom = (await page('/q/pa/new_message'))[1];
      expect(custom).toContain('<div class="field" id="mesg_tags_field">');
      expect(custom).toContain('<label for="mesg_tags">Labels &lt;b&gt;</label>');
      expect(custom).toContain('<p class="help note" id="mesg_tags_help">comma list</p>');
    } finally {
      await fs.rm(formFile, { force: true });
    }
  });
});
