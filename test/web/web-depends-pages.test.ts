// Dependencies on the message and queue pages against a real rq-mgr and queues (rq-beyond §B8, §B1.11): refs linked with their states, the policy, the dependents, undepend behind confirmations; the waiting reason in words.
import { beforeAll, describe, expect, it } from 'vitest';
import { Urls } from '../../src/web/urls.js';
import { waitingWords } from '../../src/web/views/waiting-view.js';
import { waitFor } from '../helpers/rq-root.js';
import { send, waitState } from './web-root.js';
import { dependsLimitsWeb, section, wrapped } from './depends-limits-harness.js';

const web = dependsLimitsWeb();
const { queued, message, page, cancel } = web;
let B: string;
beforeAll(() => {
  ({ B } = web);
});

describe('message and queue pages', () => {
  it('the message page shows the refs linked with their states, the policy, the dependents, the waiting reason in words, and undepend behind confirmations', async () => {
    const ok = await send(B, 'up', { param1: 'done' });
    const failing = await send(B, 'up', { param1: 'err' });
    const pending = await queued('up');
    await waitState(B, 'up', ok, ['done']);
    await waitState(B, 'up', failing, ['err']);
    const d = await send(B, 'dn', { param1: 'done', depends: [`up/${ok}`, `up/${failing}`, `up/${pending}`], depends_fail: 'wait' });
    await waitFor(async () => Object.keys((await message('dn', d)).depends_done ?? {}).length === 2, 'both finished dependencies resolved');
    const doc = await page(`/q/dn/${d}`);
    expect(doc).toContain(
      `<td id="field-waiting"> waiting on 2 dependencies: <a class="ref" href="/q/up/${failing}">${wrapped(`up/${failing}`)}</a>, <a class="ref" href="/q/up/${pending}">${wrapped(`up/${pending}`)}</a> </td>`,
    );
    const card = section(doc, 'dependencies');
    expect(card).toContain('if one fails: <span id="depends-fail">wait</span>');
    const row = (ref: string) => card.slice(card.indexOf(`<tr data-ref="${ref}">`), card.indexOf('</tr>', card.indexOf(`<tr data-ref="${ref}">`)));
    expect(row(`up/${ok}`)).toContain(
      `<td class="ref"><a class="ref" href="/q/up/${ok}">${wrapped(`up/${ok}`)}</a></td><td class="state">done</td><td class="action"></td>`,
    );
    // Policy wait: the failed one is resolved as err but still awaited (a requeue and success lets the message go).
    expect(row(`up/${failing}`)).toContain('<td class="state">err:failed (still awaited)</td>');
    expect(row(`up/${pending}`)).toContain('<td class="state">awaited</td>');
    expect(row(`up/${pending}`)).toContain(
      `<form class="inline" method="post" action="/q/dn/${d}/undepend" data-confirm="Stop waiting for up/${pending}?"><input type="hidden" name="depends" value="up/${pending}">`,
    );
    expect(card).toContain(
      `data-confirm="Stop waiting for all 2 dependencies of ${d}? It can then run at once."><input type="hidden" name="all" value="true"><button type="submit" id="btn-undepend-all"`,
    );
    // Not repeated in the full field list; confirm.js (the confirm prompts) is on the page.
    for (const f of ['depends', 'depends_fail', 'depends_done', 'dependents']) expect(doc).not.toContain(`id="field-${f}"`);
    expect(doc.split('id="field-waiting"').length).toBe(2);
    expect(doc).toContain('<script type="module" src="/js/confirm.js"></script>');
    // The dependency's page links back to its dependents.
    expect(section(await page(`/q/up/${pending}`), 'dependencies')).toContain(
      `<p id="dependents">Dependents (1): <a class="ref" href="/q/dn/${d}">${wrapped(`dn/${d}`)}</a></p>`,
    );
    // A dependency already done registers nothing; one in err does (policy wait hears of a requeue).
    expect(await page(`/q/up/${ok}`)).not.toContain('id="dependencies"');
    expect(await page(`/q/up/${failing}`)).toContain(`<a class="ref" href="/q/dn/${d}">${wrapped(`dn/${d}`)}</a>`);
    // A message without either has no card; the other reasons in words.
    const delayed = await queued('dn');
    const plain = await page(`/q/dn/${delayed}`);
    expect(plain).not.toContain('id="dependencies"');
    expect(plain).toMatch(/<td id="field-waiting"> delayed until <time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z">/);

    // Queue page: counts per reason, linking to waiting.json?reason=.
    const queue = section(await page('/q/dn'), 'waiting');
    expect(queue).toContain(
      '<a id="waiting-dependencies" data-reason="dependencies" href="/q/dn/waiting.json?reason=dependencies">dependencies</a> <span class="badge" id="waiting-dependencies-count">1</span>',
    );
    expect(queue).toMatch(/id="waiting-delayed-count">[1-9]\d*</);
    expect(queue).toContain('id="waiting-limit-count">0<');
    const listed = (await (await fetch(`${B}/q/dn/waiting.json?reason=dependencies`)).json()) as { msg_id: string }[];
    expect(listed.map((e) => e.msg_id)).toEqual([d]);
    for (const [q, id] of [
      ['dn', d],
      ['dn', delayed],
      ['up', pending],
    ])
      await cancel(q, id);
  });
});

describe('the waiting reason in words', () => {
  it('tells each reason, links refs through this server (under relative_root), and escapes what it does not know', () => {
    const urls = new Urls('/rq', '127.0.0.1:3333');
    const words = (w: unknown) => waitingWords(w, urls)?.value ?? null;
    expect(words({ reason: 'ready' })).toBe('ready to run');
    expect(words({ reason: 'delayed', due: 1795641311 })).toBe('delayed until <time datetime="2026-11-25T21:15:11.000Z">2026-11-25T21:15:11.000Z</time>');
    // A due no date can hold (a msg from before due was bounded, or edited by hand): the words, not a failed page.
    expect(words({ reason: 'delayed', due: 1e300 })).toBe('delayed');
    expect(words({ reason: 'coalesced', into: 'http://127.0.0.1:3333/rq/q/test/20261125.2105.11.541.2147444' })).toBe(
      `coalesced into <a class="ref" href="/rq/q/test/20261125.2105.11.541.2147444">${wrapped('http://127.0.0.1:3333/rq/q/test/20261125.2105.11.541.2147444')}</a>`,
    );
    expect(words({ reason: 'dependencies', waiting_on: ['a/20261125.2105.11.541.1'] })).toBe(
      `waiting on 1 dependency: <a class="ref" href="/rq/q/a/20261125.2105.11.541.1">${wrapped('a/20261125.2105.11.541.1')}</a>`,
    );
    expect(words({ reason: 'dependencies', waiting_on: ['a/20261125.2105.11.541.1', '../x'] })).toBe(
      `waiting on 2 dependencies: <a class="ref" href="/rq/q/a/20261125.2105.11.541.1">${wrapped('a/20261125.2105.11.541.1')}</a>, ../x`,
    );
    expect(words({ reason: 'limit', key: 'api:acme', position: 3 })).toBe('waiting for a slot of key <code class="limit-key">api:acme</code>, position 3');
    expect(words({ reason: 'limit', key: 'api:acme', position: 0 })).toBe('granted a slot of key <code class="limit-key">api:acme</code>, starting');
    expect(words({ reason: '<b>' })).toBe('&lt;b&gt;');
    expect(words(undefined)).toBeNull();
    expect(words('ready')).toBeNull();
  });
});
