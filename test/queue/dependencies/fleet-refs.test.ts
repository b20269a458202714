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

beforeEach(async () => {
  seen = [];
  server = http.createServer((req, res) => {
    seen.push(req.headers.authorization ?? null);
    req.resume();
    req.on('end', () => {
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

/** FleetRefs with host b at `url` in the state given, and etcd answering rq-mgr or not. */
function refs(b: 'up' | 'gone' | 'absent', reachable = true): FleetRefs {
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
    credential: () => Promise.resolve({ ok: true, value: { user: 'rq-fleet', password: 'pw' }, raw: null }),
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
});
