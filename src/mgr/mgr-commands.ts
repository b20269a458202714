// The supervisor socket's commands (spec §6.2): raw-text argument in, JSON reply out; refusals are catalogue errors, answered with their code to a client that asked; never throws.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { RqError } from '../errors.js';
import { parseRequest } from '../ipc/rq1.js';
import { CODES_COMMAND, type Connection, refusalOf } from '../ipc/reply-codes.js';
import { validateQueueOptions } from '../config/queue-config.js';
import { isValidQueueName } from '../message/names.js';
import { RQ_VERSION } from '../version.js';
import type { RefusedEntry } from '../ipc/mgr-client.js';
import type { FleetView, PeerCredential } from '../ipc/fleet-reply.js';
import type { Supervisor } from './supervisor.js';
import { keptByLink } from './queue-dirs.js';

/** A command: its reply, or a refusal thrown as an RqError; `conn` for replies that carry refusals of their own (limit_reset). */
type Handler = (sup: Supervisor, arg: string, conn: Connection) => Promise<unknown> | unknown;
/** A limit_* command of the limits service. */
export type LimitCommand = (arg: string, conn: Connection) => unknown;

/**
 * `create_queue_link <path>` (brightroll), or rq's `{"json_path": <path>, "script_dirs_only": true}`
 * from the web: the queue then holds its script to script_dirs at every start.
 */
async function createQueueLink(sup: Supervisor, arg: string): Promise<unknown> {
  const { file, scriptDirsOnly } = linkArg(arg);
  let raw: unknown;
  let real: string;
  try {
    real = await fs.realpath(path.resolve(sup.root, file));
    raw = JSON.parse(await fs.readFile(real, 'utf8'));
  } catch (err) {
    throw RqError.of('RQ_ERR_QUEUE_CONFIG_UNREADABLE', file, (err as Error).message);
  }
  const problem = validateQueueOptions(raw);
  if (problem) throw RqError.of('RQ_ERR_QUEUE_OPTIONS', problem);
  const name = (raw as { name: string }).name;
  if (!isValidQueueName(name)) throw RqError.of('RQ_ERR_QUEUE_NAME_CHARS');
  if (sup.workers.has(name)) throw RqError.of('RQ_ERR_QUEUE_RUNNING');
  return sup.createQueue(raw, { configLink: real, scriptDirsOnly });
}

function linkArg(arg: string): { file: string; scriptDirsOnly: boolean } {
  if (arg.trimStart().startsWith('{')) {
    try {
      const o = JSON.parse(arg) as { json_path?: unknown; script_dirs_only?: unknown };
      if (typeof o.json_path === 'string') return { file: o.json_path, scriptDirsOnly: o.script_dirs_only === true };
    } catch {
      // A path that starts with "{": taken as it is.
    }
  }
  return { file: arg, scriptDirsOnly: false };
}

/** create_queue's hash; rq's web adds `script_dirs_only: true`, kept out of the queue's config. */
function createArg(raw: unknown): { raw: unknown; scriptDirsOnly: boolean } {
  if (typeof raw !== 'object' || raw === null || !Object.hasOwn(raw, 'script_dirs_only')) return { raw, scriptDirsOnly: false };
  const { script_dirs_only: only, ...rest } = raw as Record<string, unknown>;
  return { raw: rest, scriptDirsOnly: only === true };
}

/**
 * What rq-mgr knows that should be a queue and is not: scandir entries it refused, and queue
 * directories whose names do not fit this root, each with the reason and the fix.
 */
export function refusedQueues(sup: Supervisor, scandir: { refusals: () => RefusedEntry[] }): RefusedEntry[] {
  const unfit = [...sup.unfit].map(([entry, reason]): RefusedEntry => ({
    entry,
    reason: `queues/${entry}: ${reason}`,
    fix: 'move the root to a shorter path, or the messages to a queue with a shorter name',
    dir: true,
  }));
  return [...scandir.refusals(), ...unfit];
}

/** The fleet's commands: its view (`fleet`), this host's credentials for the others (`fleet_credential`), a gone host forgotten (`fleet_forget`). */
export interface FleetCommands {
  view: () => FleetView;
  credential: () => PeerCredential;
  forget: (host: string) => Promise<void>;
}

const noFleet = (): never => {
  throw RqError.of('RQ_ERR_NO_FLEET');
};
const NO_FLEET: FleetCommands = { view: noFleet, credential: noFleet, forget: noFleet };

export function mgrCommands(
  env: string | undefined,
  limits: Record<string, LimitCommand>,
  refused: () => RefusedEntry[] = () => [],
  fleet: FleetCommands = NO_FLEET,
): Record<string, Handler> {
  return {
    ...Object.fromEntries(Object.entries(limits).map(([name, run]) => [name, (_sup: Supervisor, arg: string, conn: Connection) => run(arg, conn)])),
    ping: () => ['pong'],
    environment: () => [env ?? null],
    version: () => [RQ_VERSION],
    uptime: (sup) => [Math.floor((Date.now() - sup.startedAt) / 1000)],
    queues: (sup) => sup.queueNames(),
    up_queue: (sup, q) => sup.adminOp(q, 'UP'),
    down_queue: (sup, q) => sup.adminOp(q, 'DOWN'),
    pause_queue: (sup, q) => sup.adminOp(q, 'PAUSE'),
    resume_queue: (sup, q) => sup.adminOp(q, 'RESUME'),
    restart_queue: (sup, q) => sup.restartQueue(q),
    delete_queue: async (sup, q) => {
      if (await keptByLink(sup.root, q)) throw RqError.of('RQ_ERR_QUEUE_FROM_SCANDIR', q, q);
      return sup.deleteQueue(q);
    },
    create_queue: (sup, arg) => {
      let raw: unknown;
      try {
        raw = JSON.parse(arg);
      } catch (err) {
        throw RqError.of('RQ_ERR_QUEUE_CONFIG_REFUSED', `invalid JSON: ${(err as Error).message}`);
      }
      const made = createArg(raw);
      return sup.createQueue(made.raw, { scriptDirsOnly: made.scriptDirsOnly });
    },
    create_queue_link: (sup, arg) => createQueueLink(sup, arg),
    // rq extension: worker states for `rq-mgr status` and the web's health check.
    status: (sup) => ['ok', sup.status()],
    // rq extension: entries that are no queue and why, for `rq doctor`, a send to such a name, the web's 404.
    refused_queues: () => ['ok', refused()],
    // rq extension: the fleet this host is in, for GET /fleet.json and `rq fleet`; refused when none is configured.
    fleet: () => ['ok', fleet.view()],
    // rq extension: the credentials this host's relays and dependency calls give the other hosts' web (docs/fleet.md).
    fleet_credential: () => ['ok', fleet.credential()],
    // rq extension: a host gone for good no longer listed (`rq fleet --forget`); refused for a host that is up.
    fleet_forget: async (_sup, host) => {
      await fleet.forget(host);
      return ['ok', host];
    },
  };
}

/**
 * Answers one request on `conn`. `reply_codes` asks for codes on this connection; from then on each
 * refusal is `[head, text, code]`, before it (a classic client) the classic `[head, text]`, byte for byte.
 */
export async function handleMgrRequest(
  sup: Supervisor,
  handlers: Record<string, Handler>,
  payload: string,
  log: Logger,
  conn: Connection = { codes: false },
): Promise<string> {
  const { command, arg } = parseRequest(payload);
  if (command === CODES_COMMAND) {
    conn.codes = true;
    return JSON.stringify(['ok', 'codes']);
  }
  const handler = Object.hasOwn(handlers, command) ? handlers[command] : undefined;
  if (!handler) return JSON.stringify(refusalOf(conn, RqError.of('RQ_ERR_UNKNOWN_COMMAND', command.slice(0, 80)), 'error'));
  try {
    return JSON.stringify(await handler(sup, arg.trim(), conn));
  } catch (err) {
    // A refusal (bad input, an unknown queue, a queue not made): its text and code are the answer.
    if (err instanceof RqError) {
      if (err.status >= 500) log.warn({ err, command }, 'supervisor command refused');
      return JSON.stringify(refusalOf(conn, err));
    }
    log.error({ err, command }, 'supervisor command failed');
    return JSON.stringify(refusalOf(conn, RqError.of('RQ_ERR_INTERNAL', (err as Error).message)));
  }
}
