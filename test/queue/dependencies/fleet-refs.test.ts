// Calls about another host's messages (src/queue/dependencies/fleet-refs.ts) against a real HTTP server: the fleet's credentials go only to a host up in the fleet at that URL now;
// a ref of a host that is not up is refused at create, saying so.
import http from 'node:http';
import { once } from 'node:events';
import type net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FleetView } from '../../../src/ipc/fleet-reply.js';
import { FleetRefs } from '../../../src/queue/dependencies/fleet-refs.js';

const ID = '20261203.1200.00.000.1';
let server: http.Server;
let url: string;
/** The Authorization header of each request the far host got, or null. */
let seen: (string | null)[];
/** Whether the far host answers 401 to a request with this Authorization header (its basic_auth refusing it). */
let refuses: (authorization: string | null) => boolean;

beforeEach(async () => {
  seen = [];
  refuses = () => false;
  server = http.createServer((req, res) => {
    seen.push(req.headers.authorization ?? null);
    req.resume();
    req.on('end', () => {
      if (refuses(req.headers.authorization ?? null)) return void res.writeHead(401, { 'content-type': 'application/json' }).end('["fail","401"]');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url!.endsWith('/state.json') ? '["done"]' : req.url!.endsWith('/resolved') ? '["ok","resolved"]' : '["ok",{"state":"done"}]');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
});
afterEach(async () => {
  await new Promise((r) => server.close(r));
});

const basic = (password: string) => `Basic ${Buffer.from(`rq-fleet:${password}`).toString('base64')}`;

/** FleetRefs with host b at `url` in the state given, and etcd answering rq-mgr or not; rq-mgr gives `passwords` in turn (the last one from then on). */
function refs(b: 'up' | 'gone' | 'absent', reachable = true, passwords = ['pw']): FleetRefs {
  const view: FleetView = {
    fleet: 'f',
    host: 'a',
    member: { state: 'member', since: '' },
    etcd: { endpoints: [], reachable },
    hosts: b === 'absent' ? [] : [{ host: 'b', state: b, url, since: null, queues: {} }],
  };
  return new FleetRefs({
    selfUrl: 'http://a.example',
    fleet: () => Promise.resolve({ ok: true, value: view, raw: ['ok', view] }),
    credential: () => Promise.resolve({ ok: true, value: { user: 'rq-fleet', password: passwords.length > 1 ? passwords.shift()! : passwords[0] }, raw: null }),
  });
}

describe('FleetRefs', () => {
  it('refuses at create a ref of a host that is gone, saying it is gone and since when, the ref quoted whole', async () => {
    const ref = `${url}/q/work/${ID}`;
    await expect(refs('gone').canonical(ref, 'depends[0]')).rejects.toThrow(
      `depends[0]: expected the full id of a message of another host of fleet f that is up (no other host is up), received "${ref}", a message of host b, gone since an unknown time`,
    );
    await expect(refs('absent').canonical(ref, 'depends[0]')).rejects.toThrow(
      `depends[0]: expected the full id of a message of another host of fleet f that is up (no other host is up), received "${ref}"`,
    );
    expect(await refs('up').canonical(ref, 'depends[0]')).toBe(ref);
  });

  it('sends the fleet credentials on every kind of call to a host up at that URL, and on none to one that left, is unknown, or while etcd is silent', async () => {
    const auth = `Basic ${Buffer.from('rq-fleet:pw').toString('base64')}`;
    const ref = () => `${url}/q/work/${ID}`;
    const calls = async (r: FleetRefs) => {
      await r.exists(ref());
      await r.register(ref(), `work/${ID}`);
      await r.notify(ref(), { dependency: `work/${ID}`, state: 'done' });
    };
    await calls(refs('up'));
    expect(seen).toEqual([auth, auth, auth]);
    for (const r of [refs('gone'), refs('absent'), refs('up', false)]) {
      seen = [];
      await calls(r);
      expect(seen).toEqual([null, null, null]);
    }
  });

  it("a 401 to the secret held from an earlier call asks rq-mgr again and makes the call once more: the fleet's secret changed meanwhile", async () => {
    const r = refs('up', true, ['old', 'new']);
    const ref = `${url}/q/work/${ID}`;
    expect(await r.exists(ref)).toBe(true);
    refuses = (a) => a !== basic('new');
    seen = [];
    expect(await r.exists(ref)).toBe(true);
    expect(seen).toEqual([basic('old'), basic('new')]);
  });

  it('a 401 to a secret just asked is not tried again, and the next call asks rq-mgr again; a 401 to a call without it says so', async () => {
    refuses = (a) => a !== basic('third');
    const r = refs('up', true, ['first', 'second', 'third']);
    const ref = `${url}/q/work/${ID}`;
    expect(await r.exists(ref)).toBe(`${ref}/state.json answered 401: that host did not take this fleet's secret`);
    expect(seen).toEqual([basic('first')]);
    // Dropped with its 401: asked again (second), refused, asked again once more (third).
    expect(await r.exists(ref)).toBe(`${ref}/state.json answered 401: that host did not take this fleet's secret`);
    expect(await r.exists(ref)).toBe(true);
    expect(seen).toEqual([basic('first'), basic('second'), basic('third')]);
    refuses = () => true;
    seen = [];
    expect(await refs('gone').exists(ref)).toBe(
      `${ref}/state.json answered 401 to a call without the fleet's secret, which this host gives only to hosts up in the fleet`,
    );
    expect(seen).toEqual([null]);
  });

  it("a failed read of rq-mgr's view is not kept: the next create asks again (rq-mgr restarting as the queue starts)", async () => {
    const view: FleetView = {
      fleet: 'f',
      host: 'a',
      member: { state: 'member', since: '' },
      etcd: { endpoints: [], reachable: true },
      hosts: [{ host: 'b', state: 'up', url, since: null, queues: {} }],
    };
    let asked = 0;
    const r = new FleetRefs({
      selfUrl: 'http://a.example',
      fleet: () => (++asked === 1 ? Promise.reject(new Error('ECONNREFUSED')) : Promise.resolve({ ok: true, value: view, raw: ['ok', view] })),
      credential: () => Promise.resolve({ ok: true, value: { user: 'rq-fleet', password: 'pw' }, raw: null }),
    });
    const ref = `${url}/q/work/${ID}`;
    await expect(r.canonical(ref, 'depends[0]')).rejects.toThrow(`depends[0]: the fleet could not be read (ECONNREFUSED), so ${ref} could not be checked`);
    expect(await r.canonical(ref, 'depends[0]')).toBe(ref);
    // A good view is kept for a second: asked twice in all.
    expect(await r.canonical(ref, 'depends[0]')).toBe(ref);
    expect(asked).toBe(2);
  });
});
