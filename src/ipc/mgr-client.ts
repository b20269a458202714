// The one typed client of rq-mgr's supervisor socket (spec §6.2): a method per command, typed answers.
import type { ErrorCode } from '../errors.js';
import { type Answer, type Refusal, answer, isAnything, isArray, isNumber, isObject, isString } from './answer.js';
import { CODES_HELLO } from './reply-codes.js';
import { mgrCommand } from './rq1.js';
import { type FleetView, type PeerCredential, isFleetView, isPeerCredential } from './fleet-reply.js';

export type AdminOp = 'up' | 'down' | 'pause' | 'resume';

export interface WorkerInfo {
  status: string;
  pid: number | null;
  uptime: number | null;
  last_exit?: string | null;
  /** Starts after the first: restarts after a death and restart_queue (absent from an older rq-mgr). */
  restarts?: number;
  /** Its process said it serves (absent from an older rq-mgr): false while one just spawned is starting. */
  ready?: boolean;
  /** Why it cannot serve, as the process itself said before it exited (a port in use), with the fix. */
  problem?: { reason: string; fix: string };
  [key: string]: unknown;
}

/** What limit_acquire answers: a slot now, a place in line, or a refusal: its text and the code it came with. */
export type AcquireAnswer = { granted: true } | { granted: false; position: number } | { refused: string; code: ErrorCode };

/** One waiter, as limit_acquire (or limit_reset) carries it: `holder` is `<queue>/<msg_id>`, `since` epoch ms. */
export interface LimitRequest {
  key: string;
  holder: string;
  since: number;
  concurrency?: number;
  /** The template the key was expanded from, as a glob (`api:*`): what /metrics reports the key under. */
  pattern?: string;
}

function acquireAnswer(r: unknown): AcquireAnswer {
  if (Array.isArray(r) && r[0] === 'granted') return { granted: true };
  if (Array.isArray(r) && r[0] === 'wait' && isNumber(r[1])) return { granted: false, position: r[1] };
  // With nothing acceptable, answer() can only refuse: a `fail` text, or `unexpected reply …`.
  const refused = answer(r, (_v): _v is never => false) as Refusal;
  return { refused: refused.text, code: refused.code };
}

/** One key of limit_status (rq-beyond §B1.9). */
export interface LimitKeyStatus {
  concurrency: number;
  source: 'config' | 'message';
  /** The glob of the template the key came from (`api:*`), when it came from one. */
  pattern?: string;
  holders: { ref: string; queue: string; since: number; granted_at: number; orphaned?: true }[];
  waiting: { ref: string; queue: string; since: number; position: number }[];
  /** A key whose slots the fleet shares (config/limits.json's `"scope": "fleet"`). */
  scope?: 'fleet';
  /** For a fleet key: why this host can take none of its slots now (etcd does not answer), or null. */
  stalled?: string | null;
  /** For a fleet key: the slots other hosts hold, as etcd said at this host's last look (made while runs of it wait here), or null. */
  held_elsewhere?: number | null;
}

/** An entry rq-mgr would have as a queue and does not (`refused_queues`): what is wrong and what to do. */
export interface RefusedEntry {
  /** The scandir/ entry's name (or the queue directory's, with `dir`). */
  entry: string;
  reason: string;
  fix: string;
  /** Its link is fine but its config.json is not: the queue, if any, runs with its last config. */
  config?: true;
  /** A directory under queues/ rq-mgr did not start, not a scandir/ entry. */
  dir?: true;
}

/** A queue creation's answer: `raw` is the classic reply either way (the web quotes it), a refusal has its code. */
export type Creation = { ok: true; raw: unknown } | Refusal;

const isWorkers = (v: unknown): v is Record<string, WorkerInfo> => isObject(v);
const isRefused = (v: unknown): v is RefusedEntry[] => isArray(v) && v.every((e) => isObject(e) && isString(e.entry) && isString(e.reason) && isString(e.fix));

export class MgrClient {
  constructor(
    private readonly sock: string,
    private readonly timeoutMs = 10_000,
  ) {}

  private send(command: string, arg = '', timeoutMs?: number): Promise<unknown> {
    // Refusals come with their catalogue codes (reply-codes.ts); an older rq-mgr refuses the hello, and its refusals come without.
    return mgrCommand(this.sock, command, arg, { timeoutMs: timeoutMs ?? this.timeoutMs, hello: CODES_HELLO });
  }

  /** True when rq-mgr answers pong; rejects (RQ_ERR_NO_REPLY) when nobody answers. */
  async ping(timeoutMs?: number): Promise<boolean> {
    const r = await this.send('ping', '', timeoutMs);
    return Array.isArray(r) && r[0] === 'pong';
  }

  async uptime(): Promise<Answer<number>> {
    return answer(await this.send('uptime'), isNumber, true);
  }

  async version(): Promise<Answer<string>> {
    return answer(await this.send('version'), isString, true);
  }

  /** The queues rq-mgr supervises, by name. */
  async queues(): Promise<string[]> {
    const r = await this.send('queues');
    return isArray(r) ? r.filter(isString) : [];
  }

  /** Worker states (an rq extension: an older supervisor refuses it). */
  async status(timeoutMs?: number): Promise<Answer<Record<string, WorkerInfo>>> {
    return answer(await this.send('status', '', timeoutMs), isWorkers);
  }

  /** Entries that are no queue, each with the reason and the fix (an rq extension: an older supervisor refuses it). */
  async refusedQueues(timeoutMs?: number): Promise<Answer<RefusedEntry[]>> {
    return answer(await this.send('refused_queues', '', timeoutMs), isRefused);
  }

  /**
   * Why `name` is no queue, as `<reason> (<fix>)`, when rq-mgr refused an entry of that name (its
   * config.json among the reasons: asked only of a name with no queue directory, so no last config
   * runs); null when it did not, or does not answer within `timeoutMs` (the caller then says what it would have).
   */
  async whyNotQueue(name: string, timeoutMs = 2000): Promise<string | null> {
    const r = await this.refusedQueues(timeoutMs).catch(() => null);
    const e = r?.ok ? r.value.find((x) => x.entry === name) : undefined;
    return e ? `${e.reason} (${e.fix})` : null;
  }

  /** The credentials for the other hosts of this host's fleet (an rq extension); refused without a fleet, or before its secret is read. */
  async fleetCredential(timeoutMs?: number): Promise<Answer<PeerCredential>> {
    return answer(await this.send('fleet_credential', '', timeoutMs), isPeerCredential);
  }

  /** Forgets a host gone from this host's fleet for good (an rq extension): `["ok", host]`; refused for a host that is up or was never seen. */
  async fleetForget(host: string, timeoutMs?: number): Promise<Answer<string>> {
    return answer(await this.send('fleet_forget', host, timeoutMs), isString);
  }

  /** The fleet this host is in (an rq extension); refused with RQ_ERR_NO_FLEET on a host without one. */
  async fleet(timeoutMs?: number): Promise<Answer<FleetView>> {
    return answer(await this.send('fleet', '', timeoutMs), isFleetView);
  }

  async admin(op: AdminOp, queue: string): Promise<Answer<unknown>> {
    return answer(await this.send(`${op}_queue`, queue), isAnything);
  }

  async restart(queue: string, timeoutMs?: number): Promise<Answer<unknown>> {
    return answer(await this.send('restart_queue', queue, timeoutMs), isAnything);
  }

  async deleteQueue(queue: string): Promise<Answer<unknown>> {
    return answer(await this.send('delete_queue', queue), isAnything);
  }

  async createQueueLink(jsonPath: string, timeoutMs?: number): Promise<Creation> {
    return this.creation('create_queue_link', jsonPath, timeoutMs);
  }

  async createQueue(json: string, timeoutMs?: number): Promise<Creation> {
    return this.creation('create_queue', json, timeoutMs);
  }

  /** The classic answers a queue creation with `["success", …]`, not `["ok", …]`; a refusal is read as any other. */
  private async creation(command: string, arg: string, timeoutMs?: number): Promise<Creation> {
    const r = await this.send(command, arg, timeoutMs);
    if (Array.isArray(r) && r[0] === 'success') return { ok: true, raw: r };
    return answer(r, (_v): _v is never => false) as Refusal;
  }

  /** rq-beyond §B12: checks (and, for a key not in config/limits.json, states) a key's concurrency before a create. */
  async limitDefine(key: string, concurrency?: number): Promise<Answer<unknown>> {
    return answer(await this.send('limit_define', JSON.stringify({ key, concurrency })), (v): v is unknown => v === undefined);
  }

  /** Parks `holder` (`<queue>/<msg_id>`) among the key's waiters: granted now, or its place in line. */
  async limitAcquire(req: LimitRequest): Promise<AcquireAnswer> {
    return acquireAnswer(await this.send('limit_acquire', JSON.stringify(req)));
  }

  async limitRelease(key: string, holder: string): Promise<Answer<unknown>> {
    return answer(await this.send('limit_release', JSON.stringify({ key, holder })), (v): v is unknown => v === undefined);
  }

  /**
   * `queue`'s leftover scripts are dead: its orphaned slots are freed and its waiters `acquire` join
   * the lines; the value is how many were freed and each waiter's answer, by holder ref.
   */
  async limitReset(queue: string, acquire: readonly LimitRequest[] = []): Promise<Answer<{ freed: number; results: Record<string, AcquireAnswer> }>> {
    const a = answer(
      await this.send('limit_reset', JSON.stringify({ queue, acquire })),
      (v): v is { freed: number; results: Record<string, unknown> } => isObject(v) && isNumber(v.freed) && isObject(v.results),
    );
    if (!a.ok) return a;
    const results = Object.fromEntries(Object.entries(a.value.results).map(([ref, r]) => [ref, acquireAnswer(r)]));
    return { ...a, value: { freed: a.value.freed, results } };
  }

  async limitStatus(key?: string, timeoutMs?: number): Promise<Answer<Record<string, LimitKeyStatus>>> {
    // JSON leaves out an undefined key: no key asks for every one.
    return answer(await this.send('limit_status', JSON.stringify({ key }), timeoutMs), isObject as (v: unknown) => v is Record<string, LimitKeyStatus>);
  }
}
