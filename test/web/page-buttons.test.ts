// Every button a page shows says what it does and, pressed as a browser would post it, does that; every form field is labelled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/rq-root.js';
import { ALL_BYTES, attach } from './message-fixture.js';
import { type WebRoot, postForm, send, startWebRoot, stateOf } from './web-root.js';

let w: WebRoot;
let B: string;

beforeAll(async () => {
  w = await startWebRoot();
  B = w.base;
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

interface PageButton {
  action: string;
  fields: Record<string, string>;
  label: string;
  id: string | undefined;
  disabled: boolean;
}

const unescape = (s: string): string =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The one-button POST forms of a page, read the way a browser submits them. */
function buttonsOf(page: string): PageButton[] {
  const forms = page.matchAll(
    /<form class="inline" method="post" action="([^"]*)"[^>]*>(.*?)<button type="submit"(?: id="([^"]*)")? class="[^"]*"( disabled)?>(.*?)<\/button><\/form>/gs,
  );
  return [...forms].map(([, action, inputs, id, disabled, label]) => ({
    action: unescape(action),
    fields: Object.fromEntries([...inputs.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map(([, k, v]) => [unescape(k), unescape(v)])),
    label,
    id,
    disabled: disabled !== undefined,
  }));
}

async function page(p: string): Promise<string> {
  const res = await fetch(B + p);
  expect(res.status, p).toBe(200);
  return res.text();
}

/** Presses the button with `id` on the page at `p` (the labels are checked by the caller). */
async function press(p: string, id: string): Promise<PageButton> {
  const b = buttonsOf(await page(p)).find((x) => x.id === id);
  if (!b) throw new Error(`${p} has no button #${id}`);
  expect(b.disabled, id).toBe(false);
  const res = await postForm(B + b.action, b.fields);
  expect(res.status, `${id} → ${b.action}`).toBe(303);
  return b;
}

const labels = (page: string): Record<string, string> => Object.fromEntries(buttonsOf(page).flatMap((b) => (b.id ? [[b.id, b.label]] : [])));

describe('the queue page admin buttons', () => {
  it('say Pause/Resume and Down/Up after the queue state, and pressing each changes it', async () => {
    const up = labels(await page('/q/test'));
    expect(up).toMatchObject({
      'btn-pause': 'Pause',
      'btn-down': 'Down',
      'btn-restart': 'Restart',
      'btn-ack-errs': 'Ack Errors',
      'btn-requeue-errs': 'Requeue Errors',
    });

    await press('/q/test', 'btn-pause');
    expect(labels(await page('/q/test'))).toMatchObject({ 'btn-resume': 'Resume', 'btn-down': 'Down' });
    await press('/q/test', 'btn-resume');
    expect(labels(await page('/q/test'))).toMatchObject({ 'btn-pause': 'Pause' });

    await press('/q/test', 'btn-down');
    const down = buttonsOf(await page('/q/test'));
    expect(down.find((b) => b.id === 'btn-up')?.label).toBe('Up');
    expect(down.find((b) => b.id === 'btn-pause')?.disabled).toBe(true);
    await press('/q/test', 'btn-up');
    // Up starts the queue process again: the page offers Down once it runs.
    await waitFor(async () => labels(await page('/q/test'))['btn-down'] === 'Down', 'the queue to be up again');
    const id = await send(B, 'test', { param1: 'done' });
    await waitFor(async () => (await stateOf(B, 'test', id)) === 'done', 'a message to run after Up');
  });
});

describe('the message page buttons', () => {
  async function prepWithFiles(): Promise<string> {
    const r = await fetch(`${B}/q/test/new_message`, {
      method: 'POST',
      body: new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', param1: 'done', _method: 'prep' }) }),
    });
    const id = ((await r.json()) as string[])[1].split('/').pop()!;
    expect(await attach(B, 'test', id, 'a.txt', ALL_BYTES)).toEqual(['ok', expect.any(String)]);
    expect(await attach(B, 'test', id, 'b.txt', ALL_BYTES)).toEqual(['ok', expect.any(String)]);
    return id;
  }
  const attachmentsOf = async (id: string): Promise<string[]> => {
    const res = await fetch(`${B}/q/test/${id}.json`);
    return Object.keys(((await res.json()) as { _attachments?: object })._attachments ?? {}).sort();
  };

  it('an attachment Delete removes that attachment only; Commit Message sends the message on', async () => {
    const id = await prepWithFiles();
    const before = buttonsOf(await page(`/q/test/${id}`));
    expect(labels(await page(`/q/test/${id}`))).toMatchObject({ 'btn-commit': 'Commit Message', 'btn-delete': 'Delete Message', 'btn-cancel': 'Cancel' });
    const del = before.find((b) => b.label === 'Delete' && b.action.endsWith('/attach/a.txt'));
    if (!del) throw new Error('no Delete button for a.txt');
    expect((await postForm(B + del.action, del.fields)).status).toBe(303);
    expect(await attachmentsOf(id)).toEqual(['b.txt']);

    await press(`/q/test/${id}`, 'btn-commit');
    await waitFor(async () => (await stateOf(B, 'test', id)) === 'done', 'the committed message to run');
  });

  it('Delete Message on a prep message removes it', async () => {
    const id = await prepWithFiles();
    await press(`/q/test/${id}`, 'btn-delete');
    expect(await stateOf(B, 'test', id)).toBe('http 404');
  });
});

describe('the new-message form', () => {
  it('labels every field, and every field an operator fills has a help line', async () => {
    const form = await page('/q/test/new_message');
    const fields = [...form.matchAll(/<div class="field" id="(\w+)_field"[^>]*>\s*<label for="\w+">(.*?)<\/label>(.*?)<\/div>/gs)];
    expect(fields.length).toBeGreaterThan(15);
    for (const [, id, label, rest] of fields) {
      expect(label.trim(), `${id} label`).not.toBe('');
      // The destination is filled in, and the status is free text the script overwrites.
      if (id === 'mesg_dest' || id === 'mesg_status') continue;
      expect(rest, `${id} help`).toMatch(new RegExp(`<p class="help note" id="${id}_help">[^<]{8,}</p>`));
    }
    expect(fields.map(([, id]) => id)).toEqual(expect.arrayContaining(['mesg_tags', 'mesg_max_retries', 'mesg_depends', 'mesg_limit']));
  });
});
