// What the web's tag tests share: one web root with queues a, b, c and hung for the file, and the readers and writers of tags over HTTP.
import { afterAll, beforeAll, expect } from 'vitest';
import { waitFor } from '../helpers/rq-root.js';
import { queueFiles } from './message-fixture.js';
import { type WebRoot, postForm, send, startWebRoot } from './web-root.js';

export let w: WebRoot;
export let B: string;

/** The file's web root: started in beforeAll, stopped in afterAll. */
export function useWebTagsRoot(): void {
  beforeAll(async () => {
    w = await startWebRoot({ queues: { a: {}, b: {}, c: {}, hung: {} } });
    B = w.base;
  }, 60_000);
  afterAll(async () => {
    await w?.stop();
  });
}

export const TAG_TEXT = 'a tag of 1-64 characters from A-Z a-z 0-9 . _ : @ + - (starting with a letter or digit)';
export const later = () => Math.floor(Date.now() / 1000) + 3600;
/** A message that stays in que for the test's length. */
export const queued = (q: string, fields: Record<string, unknown> = {}) => send(B, q, { param1: 'done', due: later(), ...fields });
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const getJson = async (p: string): Promise<[number, any]> => {
  const res = await fetch(B + p);
  expect(res.headers.get('content-type'), p).toMatch(/^application\/json/);
  return [res.status, await res.json()];
};
export const tagJson = async (q: string, id: string, form: Record<string, string>) => {
  const res = await postForm(`${B}/q/${q}/${id}/tags`, { x_format: 'json', ...form });
  return [res.status, await res.json()];
};
export const spool = () => queueFiles(w.root, 'b');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const message = async (q: string, id: string): Promise<any> => (await fetch(`${B}/q/${q}/${id}.json`)).json();

/** Tags `id` with `tag` and returns once the clock has moved past its tagging time, so the next tagging is strictly newer. */
export async function tagInOrder(q: string, id: string, tag: string): Promise<void> {
  expect((await tagJson(q, id, { add: tag }))[0]).toBe(200);
  const [, page] = await getJson(`/q/${q}/tags/${tag}.json?limit=1`);
  expect(page.messages[0].msg_id).toBe(id);
  const at = Date.parse(page.messages[0].tagged_at);
  await waitFor(() => Date.now() > at, 'the clock to pass a tagging time', 1000, 1);
}
