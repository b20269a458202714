// The web says why a queue does not run: the SCRIPTERROR reason on the queue page and dashboard, the "Needs attention" panel, GET /doctor.json, a 404 naming a refused scandir entry.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../src/mgr/doctor.js';
import { waitFor } from '../helpers/rq-root.js';
import { type WebRoot, send, startWebRoot } from './web-root.js';

let w: WebRoot;
let apps: string;
let missing: string;

const doctor = async (): Promise<DoctorReport> => (await fetch(`${w.base}/doctor.json`)).json() as Promise<DoctorReport>;

beforeAll(async () => {
  apps = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-web-doctor-'));
  missing = path.join(apps, 'gone', 'run');
  w = await startWebRoot({ queues: { good: {}, broken: { script: missing } } });
}, 60_000);
afterAll(async () => {
  await w?.stop();
  await fs.rm(apps, { recursive: true, force: true });
});

describe('why a queue does not run, on the web', () => {
  it('all well: /doctor.json is empty and the dashboard has no panel', async () => {
    const d = await doctor();
    expect(d).toEqual({ ok: true, mgr: true, running: 2, findings: [] });
    expect(await (await fetch(`${w.base}/`)).text()).not.toContain('id="attention"');
  });

  it('SCRIPTERROR: the reason beside the badge, in the dashboard row, and in the Needs attention panel', async () => {
    await send(w.base, 'broken', { param1: 'x' });
    const reason = `script ${missing} does not exist`;
    await waitFor(async () => (await doctor()).findings.some((f) => f.subject === 'queue broken'), 'the queue to report SCRIPTERROR', 20_000);
    const page = await (await fetch(`${w.base}/q/broken`)).text();
    expect(page).toMatch(/<span class="status-badge down" id="queue-status" title="[^"]+">SCRIPTERROR<\/span>/);
    expect(page).toContain(`<span class="bad" id="queue-status-reason">${reason}</span>`);

    const res = await fetch(`${w.base}/`);
    expect(res.status).toBe(200);
    const dash = await res.text();
    expect(dash).toContain(`<div class="muted" id="q-broken-reason">${reason}</div>`);
    expect(dash).toContain('<h2>Needs attention</h2>');
    // Above the queue table, one line per problem with its fix.
    expect(dash.indexOf('id="attention"')).toBeLessThan(dash.indexOf('id="queue-table"'));
    expect(dash).toMatch(
      new RegExp(
        `<li id="attention-0" data-severity="problem" data-subject="queue broken"><strong class="bad">queue broken</strong>: SCRIPTERROR: ${reason.replace(/[/.]/g, '\\$&')}; its messages wait in que <span class="muted">Fix: make the script exist`,
      ),
    );

    const d = await doctor();
    expect(d.ok).toBe(false);
    expect(d.findings).toEqual([
      expect.objectContaining({ severity: 'problem', subject: 'queue broken', reason: `SCRIPTERROR: ${reason}; its messages wait in que` }),
    ]);
  });

  it('a scandir entry rq-mgr refused: its 404 says why, in HTML and JSON', async () => {
    const dir = path.join(apps, 'noexec');
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, 'run'), '#!/bin/sh\n', { mode: 0o644 });
    await fs.symlink(dir, path.join(w.root, 'scandir', 'noexec'));
    await waitFor(async () => (await doctor()).findings.some((f) => f.subject === 'scandir/noexec'), 'rq-mgr to refuse scandir/noexec');
    const why = `queue noexec is not running: scandir/noexec/run is not executable (chmod +x ${path.join(dir, 'run')})`;
    const page = await fetch(`${w.base}/q/noexec`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain(`<p class="muted" id="not-found-reason">${why}</p>`);
    const json = await fetch(`${w.base}/q/noexec.json`);
    expect(json.status).toBe(404);
    expect(await json.json()).toEqual(['fail', why]);
  });
});
