// GET /q/<q>/config and /q/<q>/config.json serve a queue's env_vars by name only: their values (tokens, passwords) stay in config.json on disk.
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { type WebRoot, startWebRoot } from './web-root.js';

let w: WebRoot;

beforeAll(async () => {
  w = await startWebRoot({ queues: { secret: { env_vars: { SECRET_TOKEN: 'hunter2', REGION: 'eu' } }, plain: {} } });
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

describe("a queue's env_vars over HTTP", () => {
  it('are named with their values hidden, in the live config and in the file; a queue without them is served as stored', async () => {
    for (const route of ['config', 'config.json']) {
      const res = await fetch(`${w.base}/q/secret/${route}`);
      const text = await res.text();
      expect(text, route).not.toContain('hunter2');
      expect(JSON.parse(text), route).toMatchObject({ name: 'secret', env_vars: { SECRET_TOKEN: '(hidden)', REGION: '(hidden)' } });
    }
    // The file keeps them, for the queue's scripts.
    expect(JSON.parse(await fs.readFile(queuePaths(w.root, 'secret').configFile, 'utf8')).env_vars.SECRET_TOKEN).toBe('hunter2');
    const plain = await fetch(`${w.base}/q/plain/config.json`);
    expect(await plain.text()).toBe(await fs.readFile(queuePaths(w.root, 'plain').configFile, 'utf8'));
  });
});
