// rq_router end to end (spec §9.2, §12.3): web traffic routed by config/rq_router_rules.rb, relay and balance to another host.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/rq-root.js';
import { Host, RECORD_SH } from '../relay/hosts.js';

process.env.RQ_RELAY_BACKOFF_SCALE = '0.02';

let A: Host;
let B: Host;
let rulesFile: string;

function rules(farPort: number): string {
  return `# test routes
rule "drop by src"
src /^drop/
action :done

rule "balance by src"
src /^bal/
action :balance
route "http://127.0.0.1:${farPort}/q/test", "http://127.0.0.1:${farPort}/q/other"

rule "tests to B"
dest /^test$/
action :relay
route "127.0.0.1:${farPort}"
log true
`;
}

/** POST /q/<q>/new_message on a host's web (x_format json); returns the reply array. */
async function post(h: Host, queue: string, mesg: Record<string, unknown>): Promise<{ status: number; body: string }> {
  const res = await fetch(`${h.url(queue)}/new_message`, { method: 'POST', body: new URLSearchParams({ x_format: 'json', mesg: JSON.stringify(mesg) }) });
  return { status: res.status, body: await res.text() };
}

beforeAll(async () => {
  B = await Host.start({ queues: { test: { script: RECORD_SH }, other: { script: RECORD_SH } } });
  A = await Host.start({
    setup: async (root) => {
      rulesFile = path.join(root, 'config', 'rq_router_rules.rb');
      await fs.writeFile(rulesFile, rules(B.port));
    },
  });
}, 90_000);
afterAll(async () => {
  await Promise.all([A?.stop(), B?.stop()]);
});

describe('routing web traffic', () => {
  it('relay action: a message posted to /q/test goes to rq_router, then through relay to the far host', async () => {
    const r = await post(A, 'test', { dest: 'test', src: 'route-me', param1: 'p1' });
    expect(r.status).toBe(200);
    const [ok, full] = JSON.parse(r.body) as [string, string];
    expect(ok).toBe('ok');
    expect(full).toMatch(new RegExp(`^http://127.0.0.1:${A.port}/q/rq_router/`));
    const routed = await A.waitState('rq_router', full.split('/').pop()!, ['done', 'err']);
    expect(routed.status).toBe('done - done relay of 1 messages');
    const far = await waitFor(async () => (await B.messages('test')).find((m) => m.src === 'route-me' && m.state === 'done'), 'far copy', 20_000, 100);
    expect(far).toMatchObject({ dest: `http://127.0.0.1:${B.port}/q/test`, param1: 'p1', orig_msg_id: full });
    const log = await fs.readFile(path.join(A.root, 'log', 'rq_router.log'), 'utf8');
    expect(log).toMatch(new RegExp(`^\\d+ - \\S+ - tests to B - relay - ${full.split('/').pop()!.replace(/\./g, '\\.')} - route-me$`, 'm'));
  }, 40_000);

  it('balance action: each message goes to one of the routes', async () => {
    const srcs = ['bal1', 'bal2', 'bal3', 'bal4'];
    for (const src of srcs) expect(JSON.parse((await post(A, 'anything', { dest: 'anything', src })).body)[0]).toBe('ok');
    const arrived = await waitFor(
      async () => {
        const all = [...(await B.messages('test')), ...(await B.messages('other'))].filter((m) => srcs.includes(m.src) && m.state === 'done');
        return all.length === srcs.length ? all : false;
      },
      'balanced copies',
      30_000,
      100,
    );
    expect(arrived.map((m) => m.src).sort()).toEqual(srcs);
    for (const m of arrived) expect([`http://127.0.0.1:${B.port}/q/test`, `http://127.0.0.1:${B.port}/q/other`]).toContain(m.dest);
  }, 40_000);

  it('done action and the built-in default (err, logged)', async () => {
    const drop = JSON.parse((await post(A, 'x', { dest: 'x', src: 'drop-me' })).body)[1] as string;
    expect((await A.waitState('rq_router', drop.split('/').pop()!, ['done', 'err'])).status).toBe('done - router processed a done');
    const other = JSON.parse((await post(A, 'x', { dest: 'x', src: 'nobody' })).body)[1] as string;
    const id = other.split('/').pop()!;
    expect((await A.waitState('rq_router', id, ['done', 'err'])).status).toBe('err - router processed an err');
    expect(await fs.readFile(path.join(A.root, 'log', 'rq_router.log'), 'utf8')).toContain(` - default - err - ${id} - nobody`);
  });

  it('a bad rules file takes the router queue DOWN with the reason; web traffic is then refused', async () => {
    await fs.writeFile(rulesFile, 'rule "broken"\ndest /x/\naction :explode\n');
    const full = JSON.parse((await post(A, 'test', { dest: 'test', src: 'after-break' })).body)[1] as string;
    // A DOWN queue answers no message requests: the outcome is read from its directory.
    const errDir = path.join(A.root, 'queues', 'rq_router', 'err', full.split('/').pop()!);
    const status = await waitFor(() => fs.readFile(path.join(errDir, 'status'), 'utf8').catch(() => false as const), 'router message in err', 20_000, 50);
    expect(JSON.parse(status)).toEqual({ job_status: `Bad rule file at: ${rulesFile}` });
    const down = await fs.readFile(path.join(A.root, 'config', 'rq_router.down'), 'utf8');
    expect(down).toContain(`bad rules file: ${rulesFile}:3: unknown action :explode`);
    await waitFor(async () => (await post(A, 'test', { dest: 'test' })).status === 503, 'router DOWN', 10_000, 100);
    expect((await post(A, 'test', { dest: 'test' })).body).toBe('503 - Service Unavailable - Operationally Down');
    // The relay queue is never routed: it keeps working.
    expect((await post(A, 'relay', { dest: `http://127.0.0.1:${B.port}/q/test`, src: 'direct' })).status).toBe(200);
  });
});
