// Which launcher a queue gets: the native addon loads on Linux (a broken build fails, never falls back), chooseLauncher picks the gate for RQ_SPAWN=node and the native one otherwise.
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { gateLauncher } from '../../../src/queue/launch/gate-launcher.js';
import { ADDON_ABI, chooseLauncher } from '../../../src/queue/launch/native-launcher.js';
import { LINUX, addon, addonError } from './launcher-harness.js';

describe('native addon', () => {
  it.runIf(LINUX)('loads on Linux (a broken native build must fail, not fall back)', () => {
    expect(addonError).toBeUndefined();
    expect(typeof addon?.spawn).toBe('function');
    expect(typeof addon?.pipe).toBe('function');
    expect(addon?.abi).toBe(ADDON_ABI);
    // This machine's kernel watches exits through pidfds; an older one makes chooseLauncher fall back.
    expect(addon?.usable()).toBeNull();
  });
});

describe('chooseLauncher', () => {
  it('returns the gate launcher when RQ_SPAWN=node', () => {
    const log = pino({ level: 'silent' });
    const warn = vi.spyOn(log, 'warn');
    expect(chooseLauncher({ RQ_SPAWN: 'node' }, log)).toBe(gateLauncher);
    expect(warn).not.toHaveBeenCalled();
  });

  it.runIf(LINUX)('returns the native launcher otherwise on Linux, without a warning', () => {
    const log = pino({ level: 'silent' });
    const warn = vi.spyOn(log, 'warn');
    const chosen = chooseLauncher({}, log);
    expect(typeof chosen).toBe('function');
    expect(chosen).not.toBe(gateLauncher);
    expect(warn).not.toHaveBeenCalled();
  });
});
