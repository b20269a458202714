// GET /q/<q>/config, /q/<q>/config.json and the queue page serve a queue's env_vars by name only and no basic_auth: their values (tokens, passwords) stay in config.json on disk.
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

  it('are hidden on the queue page too, with a basic_auth in any case left out; a config too big to be one is not read', async () => {
    const file = queuePaths(w.root, 'secret').configFile;
    const stored = JSON.parse(await fs.readFile(file, 'utf8'));
    await fs.writeFile(file, JSON.stringify({ ...stored, Basic_Auth: { users: { x: 'pass-789' } } }));
    const page = await (await fetch(`${w.base}/q/secret`)).text();
    expect(page).toContain('&quot;SECRET_TOKEN&quot;: &quot;(hidden)&quot;');
    for (const secret of ['hunter2', 'pass-789', 'Basic_Auth']) expect(page).not.toContain(secret);
    const served = await (await fetch(`${w.base}/q/secret/config.json`)).text();
    for (const secret of ['hunter2', 'pass-789', 'Basic_Auth']) expect(served).not.toContain(secret);
    // Over 1 MiB (the queue keeps the config it runs with): neither the page nor config.json reads it.
    await fs.writeFile(file, JSON.stringify({ ...stored, padding: 'x'.repeat(1024 * 1024) }));
    const big = await fetch(`${w.base}/q/secret`);
    const text = await big.text();
    expect(text.length).toBeLessThan(200_000);
    expect(text).toContain('<pre id="config-text">(not shown: not a JSON object of at most 1 MiB)</pre>');
    expect((await fetch(`${w.base}/q/secret/config.json`)).status).toBe(404);
    await fs.writeFile(file, JSON.stringify(stored));
  });
});
