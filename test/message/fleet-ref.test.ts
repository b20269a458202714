// fleetRefOf: a full id of another fleet host's message, matched against the hosts' advertised URLs and put in its one spelling.
import { describe, expect, it } from 'vitest';
import { fleetRefOf, isUrlRef } from '../../src/message/fleet-ref.js';
import { readDepends } from '../../src/message/depends.js';

const ID = '20261121.1643.46.613.2164022';
const HOSTS = [
  { host: 'b', url: 'http://10.0.0.6:3333' },
  { host: 'c', url: 'https://c.example/rq/' },
];

describe('fleetRefOf', () => {
  it('names the host and keeps one spelling: the advertised URL without its slash, no trailing slash', () => {
    expect(fleetRefOf(`http://10.0.0.6:3333/q/parts/${ID}`, HOSTS)).toEqual({ host: 'b', ref: `http://10.0.0.6:3333/q/parts/${ID}` });
    expect(fleetRefOf(`http://10.0.0.6:3333/q/parts/${ID}/`, HOSTS)).toEqual({ host: 'b', ref: `http://10.0.0.6:3333/q/parts/${ID}` });
    expect(fleetRefOf(`https://c.example/rq/q/parts/${ID}`, HOSTS)).toEqual({ host: 'c', ref: `https://c.example/rq/q/parts/${ID}` });
  });

  it('is null for a URL of no fleet host, another path under one, or no message id', () => {
    for (const text of [
      `http://10.0.0.7:3333/q/parts/${ID}`,
      `http://10.0.0.6:3334/q/parts/${ID}`,
      `https://c.example/q/parts/${ID}`,
      `https://c.example/rq/other/q/parts/${ID}`,
      `http://10.0.0.6:3333/q/parts/.${ID}`,
      `http://10.0.0.6:3333/q/parts/x`,
      `http://10.0.0.6:3333/q/bad name/${ID}`,
      `http://10.0.0.6:3333.evil.example/q/parts/${ID}`,
      `http://10.0.0.6:3333/q/parts/${ID}?x=1`,
    ])
      expect(fleetRefOf(text, HOSTS), text).toBeNull();
  });

  it('isUrlRef tells a full id from <queue>/<id>', () => {
    expect(isUrlRef(`http://h/q/a/${ID}`)).toBe(true);
    expect(isUrlRef(`HTTPS://h/q/a/${ID}`)).toBe(true);
    expect(isUrlRef(`a/${ID}`)).toBe(false);
  });
});

describe('readDepends in a fleet', () => {
  const ctx = { hostUrl: 'http://10.0.0.5:3333/', queue: 'report' };
  it("keeps another host's full id as given, for the queue to check against the fleet; this host's becomes <queue>/<id>", () => {
    const far = `http://10.0.0.6:3333/q/parts/${ID}`;
    expect(readDepends([far, `http://10.0.0.5:3333/q/parts/${ID}`], { ...ctx, fleet: true })).toEqual([far, `parts/${ID}`]);
    expect(() => readDepends([far], ctx)).toThrow(
      `depends[0]: only messages of this host can be depended on (or of another host of its fleet; config.json names none), received ${far}`,
    );
  });
});
