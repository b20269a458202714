// Classic-client behaviours of the web, each requested and parsed as the classic and brightroll clients do, against a real rq-mgr + web.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { VERBS_SH } from '../helpers/rq-root.js';
import { type WebRoot, postForm, send, startWebRoot, waitState } from './web-root.js';

let w: WebRoot;
let B: string;

beforeAll(async () => {
  w = await startWebRoot({
    config: { allow_new_queue: true, script_dirs: [path.dirname(VERBS_SH), 'defs'] },
    setup: (root) => fs.mkdir(path.join(root, 'defs')).then(() => ({})),
    queues: { test: {} },
  });
  B = w.base;
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

describe('a queue created over HTTP answers as soon as the creation has answered', () => {
  it('POST /new_queue_link, then at once GET /q/<new>/config (brightroll: Net::HTTP, no redirect followed)', async () => {
    const file = path.join(w.root, 'defs', 'fresh.json');
    await fs.writeFile(file, JSON.stringify({ name: 'fresh', script: VERBS_SH, num_workers: 2 }));
    const made = await postForm(`${B}/new_queue_link`, { 'queue[json_path]': file });
    expect([made.status, made.headers.get('location')]).toEqual([303, `${w.origin}/q/fresh`]);
    const config = await fetch(`${B}/q/fresh/config`);
    expect(config.status).toBe(200);
    expect(await config.json()).toMatchObject({ name: 'fresh', num_workers: 2 });
  });

  it('POST /new_queue, then at once a message to it (the form a setup script posts)', async () => {
    const made = await postForm(`${B}/new_queue`, { 'queue[name]': 'formed', 'queue[script]': VERBS_SH, 'queue[num_workers]': '1', 'queue[exec_prefix]': '' });
    expect(made.status).toBe(303);
    const reply = await fetch(`${B}/q/formed/new_message`, {
      method: 'POST',
      body: new URLSearchParams({ x_format: 'json', mesg: JSON.stringify({ dest: 'formed', param1: 'done' }) }),
    });
    expect(reply.status).toBe(200);
    const [ok, full] = (await reply.json()) as [string, string];
    expect(ok).toBe('ok');
    await waitState(B, 'formed', full.split('/').pop()!, ['done']);
  });
});

describe('brightroll: POST /q/<q>/new_message with an application/json body', () => {
  const postJson = (body: unknown) =>
    fetch(`${B}/q/test/new_message`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('the body is the message; its _method prep makes a prep message, commit and the default commit it', async () => {
    const prep = await postJson({ dest: 'test', param1: 'done', _method: 'prep' });
    expect([prep.status, prep.headers.get('content-type')]).toEqual([200, 'application/json; charset=utf-8']);
    const [ok, full] = (await prep.json()) as [string, string];
    expect(ok).toBe('ok');
    const id = full.split('/').pop()!;
    const stored = (await (await fetch(`${B}/q/test/${id}.json`)).json()) as Record<string, unknown>;
    expect(stored).toMatchObject({ state: 'prep', dest: 'test', param1: 'done' });
    // `_method` chooses the command; it is not a field of the message.
    expect(stored._method).toBeUndefined();
    for (const body of [
      { dest: 'test', param1: 'done', _method: 'commit' },
      { dest: 'test', param1: 'done' },
    ]) {
      const [, f] = (await (await postJson(body)).json()) as [string, string];
      expect(await waitState(B, 'test', f.split('/').pop()!, ['done'])).toBe('done');
    }
  });

  it('a content type with parameters is still its type: a JSON body with a charset is the message, a form with a charset its fields', async () => {
    const stored = async (res: Response) => {
      const [ok, full] = (await res.json()) as [string, string];
      expect(ok).toBe('ok');
      return (await (await fetch(`${B}/q/test/${full.split('/').pop()}.json`)).json()) as Record<string, unknown>;
    };
    for (const type of ['application/json; charset=utf-8', 'Application/JSON;charset=UTF-8', 'application/json ; charset=utf-8']) {
      const res = await fetch(`${B}/q/test/new_message`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: JSON.stringify({ dest: 'test', param1: 'done', param2: type, _method: 'prep' }),
      });
      expect([type, res.status]).toEqual([type, 200]);
      expect(await stored(res)).toMatchObject({ state: 'prep', param2: type });
    }
    const mesg = JSON.stringify({ dest: 'test', param1: 'done', param2: 'form with a charset', _method: 'prep' });
    const form = await fetch(`${B}/q/test/new_message`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
      body: new URLSearchParams({ mesg, x_format: 'json' }).toString(),
    });
    expect(form.status).toBe(200);
    expect(await stored(form)).toMatchObject({ state: 'prep', param2: 'form with a charset' });
  });

  it('an unknown _method is the classic 400; a body that is not an object is a 400 naming the body', async () => {
    // A JSON body is a JSON client: the classic text comes as ["fail", text].
    const bad = await postJson({ dest: 'test', _method: 'later' });
    expect([bad.status, await bad.json()]).toEqual([400, ['fail', 'Invalid method param']]);
    const list = await postJson([{ dest: 'test' }]);
    expect(list.status).toBe(400);
    expect(await list.json()).toEqual(['fail', 'JSON body: expected a JSON object (the message, or {"mesg": {...}}), received [{"dest":"test"}]']);
  });
});

/** `name : value` rows of the message page, as a scraper reads them: td.key, td.sep, the value cell's text. */
function scrapeFields(page: string): Record<string, string> {
  const rows = page.matchAll(/<td class="key">([^<]+)<\/td><td class="sep"> : <\/td><td[^>]*>([\s\S]*?)<\/td><\/tr>/g);
  return Object.fromEntries([...rows].map((m) => [m[1].trim(), m[2].replace(/<[^>]+>/g, '').trim()]));
}

describe('the message page has the classic name : value cells', () => {
  it('status, state, params, count and the full fields, each readable by its name; the ids stay', async () => {
    const id = await send(B, 'test', { param1: 'done', param2: 'two', src: 'scraper' });
    await waitState(B, 'test', id, ['done']);
    const page = await (await fetch(`${B}/q/test/${id}`)).text();
    expect(scrapeFields(page)).toMatchObject({
      status: 'done - done sleeping',
      state: 'done',
      param1: 'done',
      param2: 'two',
      count: '0',
      msg_id: id,
      src: 'scraper',
      dest: 'test',
      max_count: '15',
    });
    // As text (lynx -dump, tags stripped): "state : done".
    expect(page.replace(/<[^>]+>/g, '')).toMatch(/\sstate\s+:\s+done\s/);
    for (const el of ['field-status', 'field-state', 'field-param1', 'field-msg_id']) expect(page, el).toContain(`id="${el}"`);
  });

  it("the classic clients' row patterns match the page: the name and the value each with whitespace around them", async () => {
    const id = await send(B, 'test', { param1: 'done', param2: 'pattern', count: 2, max_count: 7, src: 'classic' });
    await waitState(B, 'test', id, ['done']);
    const page = await (await fetch(`${B}/q/test/${id}`)).text();
    // As the classic test scripts match them (Ruby's \s is ASCII whitespace, as is this one written out).
    const row = (key: string, value: string) => new RegExp(`[ \t\r\n]${key}[^:]+:[^:]*?[ \t\r\n]${value}[ \t\r\n]`);
    for (const [key, value] of [
      ['count', '2'],
      ['max_count', '7'],
      ['param2', 'pattern'],
      ['src', 'classic'],
      ['msg_id', id],
      ['dest', 'test'],
    ])
      expect(page, key).toMatch(row(key, value));
    expect(page).toMatch(/\scount[^:]+:[^2]+2\s/);
    // A cell's outer spaces are not drawn: the cells are the classic ones, each id on its value.
    expect(page).toContain('<td class="key"> count </td><td class="sep"> : </td><td id="field-count"> 2 </td>');
  });
});

describe('form.json {"default": "hidden"} hides every div.field of the new-message form', () => {
  it('each div.field gets style="display: none;" but those form.json names, which keep their label and p.note help', async () => {
    const form = queuePaths(w.root, 'test').formFile;
    const divs = (page: string) => [...page.matchAll(/<div class="field" id="([^"]+)_field"([^>]*)>/g)].map((m) => ({ id: m[1], style: m[2].trim() }));
    try {
      await fs.writeFile(form, JSON.stringify({ default: 'hidden' }));
      const hidden = await (await fetch(`${B}/q/test/new_message`)).text();
      const all = divs(hidden);
      expect(all.map((d) => d.id)).toEqual(
        expect.arrayContaining(['mesg_dest', 'mesg_src', 'mesg_param1', 'mesg_post_run_webhook', 'mesg_tags', 'mesg_priority', 'due_at', 'filedata']),
      );
      for (const d of all) expect(d.style, d.id).toBe('style="display: none;"');
      // The Advanced fieldset, all of whose fields are hidden, goes with them.
      expect(hidden).toContain('<details class="field" id="mesg_advanced" style="display: none;">');

      // The debug queue's form.json: param1 and param2 shown, relabelled, every other field hidden.
      await fs.writeFile(
        form,
        JSON.stringify({ default: 'hidden', mesg_param1: { label: 'what', help: 'what to print' }, mesg_param2: { label: 'how long' }, due_at: {} }),
      );
      const shown = await (await fetch(`${B}/q/test/new_message`)).text();
      const visible = divs(shown)
        .filter((d) => d.style === '')
        .map((d) => d.id);
      expect(visible.sort()).toEqual(['due_at', 'mesg_param1', 'mesg_param2']);
      expect(shown).toContain('<label for="mesg_param1">what</label>');
      expect(notesOf(shown, 'mesg_param1')).toEqual(['what to print']);
      expect(shown).toContain('<label for="mesg_param2">how long</label>');
      expect(notesOf(shown, 'mesg_param2')).toEqual(['Given to the script as RQ_PARAM2']);
      for (const d of divs(shown).filter((x) => x.style !== '')) expect(d.style, d.id).toBe('style="display: none;"');
    } finally {
      await fs.rm(form, { force: true });
    }
  });
});

/** Each `p.note` text of one field's div, as a scraping client collects them. */
function notesOf(page: string, fieldId: string): string[] {
  const div = new RegExp(`<div class="field" id="${fieldId}_field"[^>]*>([\\s\\S]*?)</div>`).exec(page);
  if (!div) throw new Error(`no div#${fieldId}_field`);
  return [...div[1].matchAll(/<p class="([^"]*)"[^>]*>([^<]*)<\/p>/g)].filter((m) => m[1].split(' ').includes('note')).map((m) => m[2]);
}

describe('the new-message form has each help text in a p.note', () => {
  it("the defaults, then form.json's help instead; each text once (one element, classes help and note)", async () => {
    const form = queuePaths(w.root, 'test').formFile;
    const page = async () => (await fetch(`${B}/q/test/new_message`)).text();
    const plain = await page();
    for (const f of ['mesg_src', 'mesg_param1', 'mesg_param2', 'mesg_param3', 'mesg_param4', 'mesg_post_run_webhook'])
      expect(notesOf(plain, f), f).toHaveLength(1);
    expect(notesOf(plain, 'mesg_param1')).toEqual(['Given to the script as RQ_PARAM1']);
    // The classic Status field is kept, and says that a create does not store it.
    expect(notesOf(plain, 'mesg_status')).toEqual(['Not stored: the status of a message is what its state and its script say']);
    expect(plain).toContain(`<p class="help note">'prep' stays in prep state until commited (allows attachments/modification/etc.)</p>`);
    try {
      await fs.writeFile(form, JSON.stringify({ mesg_param1: { label: 'queue name', help: 'the queue to clean' }, mesg_param2: { label: 'days to keep' } }));
      const custom = await page();
      expect(notesOf(custom, 'mesg_param1')).toEqual(['the queue to clean']);
      // A label alone keeps the default help.
      expect(notesOf(custom, 'mesg_param2')).toEqual(['Given to the script as RQ_PARAM2']);
      expect(custom.split('the queue to clean')).toHaveLength(2);
    } finally {
      await fs.rm(form, { force: true });
    }
  });
});
