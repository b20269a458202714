// rq-mgr's side of concurrency limits (rq-beyond §B12.2): the arbiter, config/limits.json and its watch, queue deaths, the reconciliation sweep, the socket commands.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { checkFleetScopes, loadLimits } from '../config/limits-config.js';
import type { FleetSlots } from '../fleet/fleet-limits.js';
import { queuePaths, rootPaths } from '../config/paths.js';
import { RqError, invalidField, isRqError } from '../errors.js';
import { QueueClient } from '../ipc/queue-client.js';
import { refusalOf } from '../ipc/reply-codes.js';
import { checkExpandedKey, readLimitConcurrency } from '../message/limit-key.js';
import { isMsgId, isValidQueueName } from '../message/names.js';
import { killStaleScript } from '../queue/launch/stale-scripts.js';
import { LimitArbiter } from './limit-arbiter.js';
import type { LimitCommand } from './mgr-commands.js';

export const SETTLE_MS = 2000;
/** Settling waits this long at most for a queue that has not reported. */
export const SETTLE_MAX_MS = 15_000;
export const SWEEP_EVERY_MS = 60_000;
/** Only holders granted this long ago are asked about: a fresh grant may not have reached its queue's memory yet. */
export const SWEEP_MIN_AGE_MS = 5000;

export interface LimitsServiceDeps {
  root: string;
  log: Logger;
  now?: () => number;
  settleMs?: number;
  sweepEveryMs?: number;
  /** The fleet's slots, when config.json names a fleet: a key of `"scope": "fleet"` is refused without. */
  fleet?: FleetSlots;
}

/** How a queue process ended, as the supervisor saw it. */
export type QueueExit = 'restarting' | 'stopped' | 'abandoned';

type Args = Record<string, unknown>;

/** The waiters one limit_reset may bring (a queue sends any more one by one). */
const MAX_RESET_ACQUIRES = 10_000;

function jsonArgs(arg: string): Args {
  let v: unknown;
  try {
    v = arg.trim() === '' ? {} : JSON.parse(arg);
  } catch (err) {
    throw RqError.of('RQ_ERR_INVALID_JSON', `invalid JSON argument: ${(err as Error).message}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalidField('argument', 'a JSON object', v);
  return v as Args;
}

function keyArg(a: Args): string {
  if (typeof a.key !== 'string') throw invalidField('key', 'a limit key', a.key);
  return checkExpandedKey(a.key, invalidField, 'key');
}

/** `<queue>/<msg_id>`. */
function holderArg(a: Args): string {
  const h = a.holder;
  const slash = typeof h === 'string' ? h.indexOf('/') : -1;
  if (typeof h !== 'string' || !isValidQueueName(h.slice(0, slash)) || !isMsgId(h.slice(slash + 1)))
    throw invalidField('holder', 'a message ref <queue>/<msg_id>', h);
  return h;
}

/** The optional glob of the key's template, checked as a key is (it is only ever reported). */
function patternArg(a: Args): string | undefined {
  if (a.pattern === undefined || a.pattern === null) return undefined;
  if (typeof a.pattern !== 'string') throw invalidField('pattern', 'a limit key pattern', a.pattern);
  return checkExpandedKey(a.pattern, invalidField, 'pattern');
}

function queueArg(a: Args): string {
  if (!isValidQueueName(a.queue)) throw invalidField('queue', 'a queue name', a.queue);
  return a.queue as string;
}

export class LimitsService {
  readonly arbiter: LimitArbiter;
  private watcher: fs.FSWatcher | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  /** Why config/limits.json was not loaded at its last read, or null when it was (or is absent). */
  private notLoaded: string | null = null;
  private readonly now: () => number;

  constructor(private readonly d: LimitsServiceDeps) {
    this.now = d.now ?? Date.now;
    this.arbiter = new LimitArbiter({
      now: this.now,
      settleMs: d.settleMs ?? SETTLE_MS,
      settleMaxMs: SETTLE_MAX_MS,
      log: d.log,
      fleet: d.fleet,
      grant: (queue, msgId, key) =>
        this.client(queue)
          .limitGranted(msgId, key)
          .then(
            (a) => a.ok,
            () => null,
          ),
    });
  }

  private client(queue: string): QueueClient {
    return QueueClient.oneShot(queuePaths(this.d.root, queue).sock, { timeoutMs: 5000 });
  }

  async start(): Promise<void> {
    await this.reload();
    const file = rootPaths(this.d.root).limitsFile;
    this.watcher = fs.watch(path.dirname(file), { persistent: false }, (_ev, name) => {
      if (name === null || String(name) === path.basename(file)) void this.reload();
    });
    this.sweepTimer = setInterval(() => void this.sweep(), this.d.sweepEveryMs ?? SWEEP_EVERY_MS);
    this.sweepTimer.unref();
  }

  /** Reads config/limits.json; an invalid file is logged and the table in force kept. */
  async reload(): Promise<void> {
    try {
      this.arbiter.setConfig(checkFleetScopes(await loadLimits(rootPaths(this.d.root).limitsFile), this.d.fleet !== undefined));
      this.notLoaded = null;
    } catch (err) {
      this.notLoaded = (err as Error).message;
      this.d.log.error({ err: this.notLoaded }, 'config/limits.json not loaded; the previous limits stay in force');
    }
  }

  /** A key refused for want of a concurrency may be one the file names: the refusal says the file is not loaded, and why. */
  private told<T>(f: () => T): T {
    try {
      return f();
    } catch (err) {
      throw this.withFileFault(err);
    }
  }

  private withFileFault(err: unknown): unknown {
    if (this.notLoaded === null || !isRqError(err, 'RQ_ERR_LIMIT_NO_CONCURRENCY')) return err;
    return new RqError('RQ_ERR_LIMIT_NO_CONCURRENCY', `${err.message}; config/limits.json is not loaded, so no key it names is known (${this.notLoaded})`);
  }

  /**
   * A queue process ended. Restarting: its holders stay counted until its next incarnation's
   * limit_reset. Stopped cleanly: it waited for its scripts, so its slots are free. Abandoned (ERROR,
   * deleted): rq-mgr kills the scripts it left, as the queue's own recovery would, then frees them.
   */
  async queueExited(queue: string, how: QueueExit): Promise<void> {
    this.arbiter.queueDied(queue);
    if (how === 'restarting') return;
    if (how === 'abandoned') await this.killLeftovers(queue);
    const freed = this.arbiter.freeQueue(queue);
    if (freed) this.d.log.info({ queue, freed }, 'limit slots of a queue that is gone freed');
  }

  private async killLeftovers(queue: string): Promise<void> {
    const runDir = queuePaths(this.d.root, queue).state.run;
    for (const id of await fsp.readdir(runDir).catch(() => [] as string[])) {
      const killed = await killStaleScript(path.join(runDir, id), id);
      if (killed.length) this.d.log.warn({ queue, msg_id: id, pids: killed }, 'killed a script its queue process left running');
    }
  }

  /** §B12.2's sweep: a holder its queue no longer reports (a lost limit_release) is released. */
  async sweep(): Promise<number> {
    const before = this.now() - SWEEP_MIN_AGE_MS;
    let released = 0;
    for (const queue of this.arbiter.queuesHoldingSince(before)) {
      const held = await this.client(queue)
        .limitHeld()
        .catch(() => null);
      if (held?.ok) released += this.arbiter.reconcile(queue, held.value, before);
    }
    return released;
  }

  /** The supervisor socket's limit_* commands (rq-beyond §B1.9); the argument is JSON. */
  commands(): Record<string, LimitCommand> {
    const a = this.arbiter;
    const concurrency = (v: unknown) => (v === undefined || v === null ? undefined : readLimitConcurrency(v, invalidField, 'concurrency'));
    return {
      limit_define: (arg) => {
        const args = jsonArgs(arg);
        this.told(() => a.define(keyArg(args), concurrency(args.concurrency)));
        return ['ok'];
      },
      limit_acquire: (arg) => {
        const args = jsonArgs(arg);
        const since = args.since;
        if (typeof since !== 'number' || !Number.isFinite(since)) throw invalidField('since', 'epoch milliseconds', since);
        return this.told(() => a.acquire(keyArg(args), holderArg(args), since, concurrency(args.concurrency), patternArg(args)));
      },
      limit_release: (arg) => {
        const args = jsonArgs(arg);
        a.release(keyArg(args), holderArg(args));
        return ['ok'];
      },
      limit_reset: (arg, conn) => {
        const args = jsonArgs(arg);
        const queue = queueArg(args);
        const given = args.acquire ?? [];
        if (!Array.isArray(given) || given.length > MAX_RESET_ACQUIRES)
          throw invalidField('acquire', `an array of at most ${MAX_RESET_ACQUIRES} acquires`, given);
        const acquires = given.map((g: unknown, i) => {
          const x = (typeof g === 'object' && g !== null ? g : {}) as Args;
          if (typeof x.since !== 'number' || !Number.isFinite(x.since)) throw invalidField(`acquire[${i}].since`, 'epoch milliseconds', x.since);
          return { key: keyArg(x), holder: holderArg(x), since: x.since, concurrency: concurrency(x.concurrency), pattern: patternArg(x) };
        });
        const { freed, results } = a.reset(queue, acquires);
        // Each refused acquire is a refusal of its own: with its code when the client asked for codes.
        return [
          'ok',
          {
            freed,
            results: Object.fromEntries(
              Object.entries(results).map(([ref, r]) => [ref, r instanceof RqError ? refusalOf(conn, this.withFileFault(r) as RqError) : r]),
            ),
          },
        ];
      },
      limit_status: (arg) => {
        const args = jsonArgs(arg);
        return ['ok', a.status(args.key === undefined ? undefined : keyArg(args))];
      },
    };
  }

  close(): void {
    this.watcher?.close();
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.arbiter.close();
  }
}
