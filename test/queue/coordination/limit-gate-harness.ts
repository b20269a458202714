// LimitGate's test harness: a gate against a scripted rq-mgr that records every call, and the fakes it parks in.
import { afterEach, vi } from 'vitest';
import type { QueueConfig } from '../../../src/config/queue-config.js';
import type { AcquireAnswer, LimitRequest, MgrClient } from '../../../src/ipc/mgr-client.js';
import { silentLogger } from '../../../src/log.js';
import type { Message } from '../../../src/message/message.js';
import { LimitGate, type LimitGateDeps } from '../../../src/queue/coordination/limit-gate.js';

export const ID = (n: number) => `20261121.1643.46.613.${n}`;
export const ok = { ok: true as const, value: undefined };
export const nope = { ok: false as const, code: 'RQ_ERR_USAGE', text: 'no' };

type Reply<T> = T | Error | Promise<T>;

export interface Harness {
  gate: LimitGate;
  calls: string[];
  acquires: LimitRequest[];
  resets: { queue: string; acquire: LimitRequest[] }[];
  notes: [string, Record<string, unknown>][];
  refused: [string, string][];
  /** The index the gate parks in and lets go through (release, or enqueue after unpark). */
  index: { park: ReturnType<typeof vi.fn>; unpark: ReturnType<typeof vi.fn>; enqueue: ReturnType<typeof vi.fn>; release: ReturnType<typeof vi.fn> };
  /** Messages put back in the que's order, in order. */
  requeued: () => string[];
  pumps: () => number;
  /** What the next calls answer, in order; the last one stays. */
  answers: { define: Reply<unknown>[]; acquire: Reply<AcquireAnswer>[]; release: Reply<unknown>[]; reset: Reply<unknown>[] };
  config: Partial<QueueConfig>;
  present: { yes: boolean };
}

/** Gates made by the test file that imports this: closed after each of its tests, with real timers back. */
let open: LimitGate[] = [];
afterEach(() => {
  for (const g of open) g.close();
  open = [];
  vi.useRealTimers();
});

function next<T>(list: Reply<T>[]): Promise<T> {
  const r = list.length > 1 ? list.shift()! : list[0];
  return r instanceof Error ? Promise.reject(r) : Promise.resolve(r);
}

export function harness(config: Partial<QueueConfig> = {}): Harness {
  const h = {
    calls: [] as string[],
    acquires: [] as LimitRequest[],
    resets: [] as { queue: string; acquire: LimitRequest[] }[],
    notes: [] as [string, Record<string, unknown>][],
    refused: [] as [string, string][],
    index: { park: vi.fn(), unpark: vi.fn(), enqueue: vi.fn(), release: vi.fn() },
    answers: { define: [ok], acquire: [{ granted: true }], release: [ok], reset: [{ ok: true, value: { freed: 0, results: {} } }] } as Harness['answers'],
    config: { name: 'q', ...config },
    present: { yes: true },
  };
  let pumps = 0;
  const mgr = {
    limitDefine: (key: string, concurrency?: number) => {
      h.calls.push(`define ${key} ${concurrency}`);
      return next(h.answers.define);
    },
    limitAcquire: (req: LimitRequest) => {
      h.calls.push(`acquire ${req.holder}`);
      h.acquires.push(req);
      return next(h.answers.acquire);
    },
    limitRelease: (key: string, holder: string) => {
      h.calls.push(`release ${key} ${holder}`);
      return next(h.answers.release);
    },
    limitReset: (queue: string, acquire: LimitRequest[]) => {
      h.calls.push(`reset ${queue} ${acquire.length}`);
      h.resets.push({ queue, acquire });
      return next(h.answers.reset);
    },
  } as unknown as MgrClient;
  const requeued: string[] = [];
  h.index.enqueue.mockImplementation((m: Message) => requeued.push(m.msg_id));
  h.index.release.mockImplementation((m: Message) => requeued.push(m.msg_id));
  const gate = new LimitGate({
    config: () => h.config as QueueConfig,
    mgr,
    // Both names of the parking dependency, the index's and the transitions module's.
    index: h.index,
    moves: h.index,
    log: silentLogger(),
    pump: () => pumps++,
    mgrPresent: () => h.present.yes,
    note: (id: string, entry: Record<string, unknown>) => h.notes.push([id, entry]),
    refused: (msg: Message, text: string) => h.refused.push([msg.msg_id, text]),
  } as unknown as LimitGateDeps);
  open.push(gate);
  return { ...h, gate, pumps: () => pumps, requeued: () => requeued };
}

export const msg = (n: number, fields: Record<string, unknown> = {}) => ({ msg_id: ID(n), ...fields }) as unknown as Message;
/** Lets every pending promise chain run (no timers). */
export const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise<void>((r) => setImmediate(r));
};
