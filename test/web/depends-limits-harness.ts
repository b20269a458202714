// What the web dependency and limit tests share: a real root (rq-mgr, queues up, dn, lim, form; limits.json with reports: 1) behind its web, the calls they make to it, and the texts they expect.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { rootPaths } from '../../src/config/paths.js';
import { idText } from '../../src/web/views/id-text.js';
import { killLeftoverGroups, pidInFile } from '../helpers/process-groups.js';
import { queueFiles } from './message-fixture.js';
import { type WebRoot, postForm, send, startWebRoot, waitState } from './web-root.js';

/** A ref as a page writes it: a <wbr> after each slash and dot, so it wraps only there (views/id-text.ts). */
export const wrapped = (ref: string) => idText(ref).value;

export const later = () => Math.floor(Date.now() / 1000) + 3600;

/** The markup from the element with `id` to the end of its section. */
export const section = (doc: string, id: string) => {
  const at = doc.indexOf(`id="${id}"`);
  expect(at, id).toBeGreaterThan(-1);
  return doc.slice(at, doc.indexOf('</section>', at));
};

export const REF_TEXT = 'a message ref such as test/20261121.1643.46.613.2164022';
export const NOT_BOTH = 'give depends or all, not both and not neither';
export const KEY_TEXT = 'a key of 1-256 characters without control characters';
export const HOSTILE = `<script>alert(1)</script>"'><img src=x onerror=1>`;
export const HOSTILE_ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&gt;&lt;img src=x onerror=1&gt;';

/**
 * Starts the root and its web before the file's tests and stops it after (its `w` and base URL `B` readable once started);
 * the calls below go to it, and the process groups of `forever` scripts are killed after each test.
 */
export function dependsLimitsWeb() {
  let w: WebRoot;
  let B: string;
  const groups = killLeftoverGroups();

  beforeAll(async () => {
    w = await startWebRoot({
      queues: { up: {}, dn: {}, lim: { num_workers: 3 }, form: {} },
      setup: async (root) => void (await fs.writeFile(rootPaths(root).limitsFile, JSON.stringify({ reports: 1 }))),
    });
    B = w.base;
  }, 60_000);
  afterAll(async () => {
    await w?.stop();
  });

  const queued = (q: string, fields: Record<string, unknown> = {}) => send(B, q, { param1: 'done', due: later(), ...fields });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const message = async (q: string, id: string): Promise<any> => (await fetch(`${B}/q/${q}/${id}.json`)).json();
  const undepend = async (q: string, id: string, form: Record<string, string> | URLSearchParams) => {
    const body = form instanceof URLSearchParams ? form : new URLSearchParams({ x_format: 'json', ...form });
    const res = await fetch(`${B}/q/${q}/${id}/undepend`, { method: 'POST', body, redirect: 'manual' });
    return [res.status, await res.json()];
  };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const limits = async (query = ''): Promise<[number, any]> => {
    const res = await fetch(`${B}/limits.json${query}`);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    return [res.status, await res.json()];
  };
  const page = async (p: string, init: RequestInit = {}) => {
    const res = await fetch(B + p, init);
    expect(res.headers.get('content-type'), p).toMatch(/^text\/html/);
    return res.text();
  };
  const spool = (q: string) => queueFiles(w.root, q);
  /** A `forever` script holding its run until cancelled; its group is killed after the test whatever happens. */
  async function forever(q: string, name: string, fields: Record<string, unknown>): Promise<string> {
    const pidFile = path.join(w.root, `${name}.pid`);
    const id = await send(B, q, { param1: 'forever', param2: pidFile, ...fields });
    await waitState(B, q, id, ['run']);
    groups.push(await pidInFile(pidFile));
    return id;
  }
  const cancel = (q: string, id: string) => postForm(`${B}/q/${q}/${id}/cancel`, { x_format: 'json' });

  return {
    get w(): WebRoot {
      return w;
    },
    get B(): string {
      return B;
    },
    groups,
    queued,
    message,
    undepend,
    limits,
    page,
    spool,
    forever,
    cancel,
  };
}
