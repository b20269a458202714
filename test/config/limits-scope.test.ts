// config/limits.json's object form: {"concurrency": N, "scope": "fleet"|"host"}, the scope each key takes, the refusals naming the key and field, and a fleet scope refused without a fleet.
import { describe, expect, it } from 'vitest';
import { checkFleetScopes, configuredConcurrency, configuredScope, parseLimits } from '../../src/config/limits-config.js';

describe('the scope of a limit key', () => {
  it('the plain number is this host; the object form may share the slots with the fleet, exact or glob', () => {
    const t = parseLimits({ deploy: { concurrency: 2, scope: 'fleet' }, 'api:*': { concurrency: 3, scope: 'fleet' }, local: { concurrency: 4 }, n: 5 });
    expect([configuredConcurrency(t, 'deploy'), configuredScope(t, 'deploy')]).toEqual([2, 'fleet']);
    expect([configuredConcurrency(t, 'api:acme'), configuredScope(t, 'api:acme')]).toEqual([3, 'fleet']);
    expect([configuredConcurrency(t, 'local'), configuredScope(t, 'local')]).toEqual([4, 'host']);
    expect([configuredConcurrency(t, 'n'), configuredScope(t, 'n')]).toEqual([5, 'host']);
    expect(configuredScope(t, 'unknown')).toBe('host');
  });

  it.each([
    [{ deploy: { concurrency: 0, scope: 'fleet' } }, 'config/limits.json: "deploy".concurrency: expected a whole number 1-10000, received 0'],
    [{ deploy: { scope: 'fleet' } }, 'config/limits.json: "deploy".concurrency: expected a whole number 1-10000'],
    [{ deploy: { concurrency: 2, scope: 'world' } }, 'config/limits.json: "deploy".scope: expected "fleet" or "host", received "world"'],
    [{ deploy: { concurrency: 2, scop: 'fleet' } }, 'config/limits.json: "deploy".scop: expected no such field (concurrency and scope only)'],
    [
      { deploy: { concurrency: '2', scope: 'fleet' } },
      'config/limits.json: "deploy".concurrency: expected a whole number 1-10000 (a JSON number, not text), received "2"',
    ],
    [{ plain: '3' }, 'config/limits.json: "plain": expected a whole number 1-10000 (a JSON number, not text), received "3"'],
    [{ deploy: [2] }, 'config/limits.json: "deploy": expected a concurrency, or {"concurrency": N, "scope": "fleet" or "host"}'],
  ])('refuses %j', (raw, text) => {
    expect(() => parseLimits(raw)).toThrow(text);
  });

  it('a fleet scope without a fleet in config.json is refused, naming the key', () => {
    const t = parseLimits({ local: 2, deploy: { concurrency: 2, scope: 'fleet' } });
    expect(() => checkFleetScopes(t, false)).toThrow(
      'config/limits.json: "deploy".scope: expected a fleet in config/config.json for "fleet" (or "host"), received "fleet"',
    );
    expect(checkFleetScopes(t, true)).toBe(t);
    expect(checkFleetScopes(parseLimits({ local: { concurrency: 2, scope: 'host' } }), false).fleet.size).toBe(0);
  });
});
