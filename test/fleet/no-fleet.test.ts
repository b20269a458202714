// A host without a fleet in config.json: nothing of etcd runs, /fleet.json, the /fleet page, `rq fleet` and `rq queues --fleet` say no fleet is configured, /metrics has no fleet gauges.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRoot, waitFor, type TestRoot } from '../helpers/rq-root.js';
import { BIN, MgrProc, run } from '../helpers/mgr-proc.js';

const NO_FLEET = 'no fleet is configured on this host (config/config.json has no "fleet"; docs/fleet.md)';

describe('without a fleet', { timeout: 30_000 }, () => {
  let root: TestRoot;
  let mgr: MgrProc;
  beforeAll(async () => {
    root = await makeRoot();
    mgr = await MgrProc.start(root.root);
  });
  afterAll(async () => {
    await mgr?.stop();
    await root?.cleanup();
  });

  it('GET /fleet.json answers 404 with the reason as JSON', async () => {
    const res = await waitFor(() => fetch(`http://127.0.0.1:${root.port}/fleet.json`), 'the web');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual(['fail', NO_FLEET]);
  });

  it('`rq fleet` exits 1 with the reason; --json as the refusal document', async () => {
    const plain = await run(BIN('rq'), ['fleet', '--root', root.root]).catch((e: { code: number; stdout: string }) => e);
    expect(plain).toMatchObject({ code: 1, stdout: `fail ${NO_FLEET}\n` });
    const json = await run(BIN('rq'), ['fleet', '--json', '--root', root.root]).catch((e: { code: number; stdout: string }) => e);
    expect(JSON.parse(json.stdout)).toEqual({ error: NO_FLEET, code: 'RQ_ERR_NO_FLEET' });
  });

  it('GET /fleet answers a 404 page saying so, and no page links it', async () => {
    const res = await fetch(`http://127.0.0.1:${root.port}/fleet`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain(`<h2 id="not-found">Not Found</h2><p class="muted" id="not-found-reason">${NO_FLEET.replaceAll('"', '&quot;')}</p>`);
    expect(await (await fetch(`http://127.0.0.1:${root.port}/`)).text()).not.toContain('nav-fleet');
  });

  it('`rq queues --fleet` exits 1 with the reason; --json as the refusal document', async () => {
    const plain = await run(BIN('rq'), ['queues', '--fleet', '--root', root.root]).catch((e: { code: number; stdout: string }) => e);
    expect(plain).toMatchObject({ code: 1, stdout: `fail ${NO_FLEET}\n` });
    const json = await run(BIN('rq'), ['queues', '--fleet', '--json', '--root', root.root]).catch((e: { code: number; stdout: string }) => e);
    expect(json).toMatchObject({ code: 1 });
    expect(JSON.parse(json.stdout)).toEqual({ error: NO_FLEET, code: 'RQ_ERR_NO_FLEET' });
  });

  it('/metrics has no fleet gauges', async () => {
    const text = await (await fetch(`http://127.0.0.1:${root.port}/metrics`)).text();
    expect(text).toContain('rq_up 1');
    expect(text).not.toContain('rq_fleet');
  });
});
