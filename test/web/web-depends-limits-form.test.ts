// The new-message form's depends, depends_fail, limit and limit_concurrency fields in Advanced, hideable by form.json, empty ones unset (rq-beyond §B8, §B12; real rq-mgr and queues).
import fs from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { type WebRoot } from './web-root.js';
import { KEY_TEXT, dependsLimitsWeb } from './depends-limits-harness.js';

const web = dependsLimitsWeb();
const { queued, message, page, spool, cancel } = web;
let w: WebRoot;
let B: string;
beforeAll(() => {
  ({ w, B } = web);
});

describe('the new-message form', () => {
  it('has depends, depends_fail (a select), limit and limit_concurrency in Advanced, hideable by form.json; empty ones mean unset', async () => {
    const doc = await page('/q/form/new_message');
    const advanced = doc.slice(doc.indexOf('id="mesg_advanced"'), doc.indexOf('</details>'));
    expect(advanced).toContain('<input type="text" id="mesg_depends" name="mesg[depends]" value="">');
    expect(advanced).toContain(
      '<select id="mesg_depends_fail" name="mesg[depends_fail]"><option value="">default (fail)</option><option value="fail">fail</option><option value="run">run</option><option value="wait">wait</option></select>',
    );
    expect(advanced).toContain('<input type="text" id="mesg_limit" name="mesg[limit]" value="">');
    expect(advanced).toContain('<input type="text" id="mesg_limit_concurrency" name="mesg[limit_concurrency]" value="">');
    await fs.writeFile(
      queuePaths(w.root, 'form').formFile,
      JSON.stringify({ default: 'hidden', mesg_param1: {}, mesg_depends: { label: 'After', help: 'refs' } }),
    );
    try {
      const hidden = await page('/q/form/new_message');
      expect(hidden).toContain('<div class="field" id="mesg_depends_field">\n  <label for="mesg_depends">After</label>');
      expect(hidden).toContain('<p class="help note" id="mesg_depends_help">refs</p>');
      for (const f of ['depends_fail', 'limit', 'limit_concurrency'])
        expect(hidden).toContain(`<div class="field" id="mesg_${f}_field" style="display: none;">`);
    } finally {
      await fs.rm(queuePaths(w.root, 'form').formFile);
    }

    // The form as a browser posts it: every Advanced field present, most of them empty.
    const x = await queued('up');
    const empty = ['priority', 'max_retries', 'timeout', 'depends', 'depends_fail', 'limit', 'limit_concurrency'].map(
      (f) => [`mesg[${f}]`, ''] as [string, string],
    );
    const post = (extra: [string, string][]) =>
      fetch(`${B}/q/form/new_message`, {
        method: 'POST',
        body: new URLSearchParams([['x_format', 'html'], ['mesg[dest]', 'form'], ['mesg[param1]', 'done'], ...empty, ...extra]),
      });
    const plain = await post([]);
    expect(plain.status).toBe(200);
    const plainId = /id="result-link">[^<]*\/q\/form\/([^<]+)</.exec(await plain.text())![1];
    expect(await message('form', plainId)).not.toHaveProperty('limit');
    const set = await post([
      ['mesg[depends]', `up/${x}`],
      ['mesg[depends_fail]', 'run'],
      ['mesg[limit]', 'reports'],
    ]);
    const setId = /id="result-link">[^<]*\/q\/form\/([^<]+)</.exec(await set.text())![1];
    expect(await message('form', setId)).toMatchObject({ depends: [`up/${x}`], depends_fail: 'run', limit: 'reports', waiting: { reason: 'dependencies' } });

    const before = await spool('form');
    const bad = await post([
      ['mesg[limit_concurrency]', '0'],
      ['mesg[limit]', 'k'],
    ]);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain(
      '<p id="result-error" class="bad">fail - limit_concurrency: expected a whole number 1-10000, received &quot;0&quot;</p>',
    );
    const dep = await post([['mesg[depends]', 'up/20200101.0000.00.000.1']]);
    expect([dep.status, await dep.text()]).toEqual([400, expect.stringContaining('fail - depends[0]: no message up/20200101.0000.00.000.1')]);
    // A JSON client's empty limit is its own value, refused by the queue.
    const json = await fetch(`${B}/q/form/new_message`, { method: 'POST', body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'form', limit: '' }) }) });
    expect([json.status, await json.json()]).toEqual([400, ['fail', `limit: expected ${KEY_TEXT}, received ""`]]);
    expect(await spool('form')).toEqual(before);
    await cancel('form', setId);
    await cancel('up', x);
  });
});
