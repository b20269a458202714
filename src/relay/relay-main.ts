// The relay queue's script (scripts/relay/run): delivers one message to the host and queue named by its http dest.
import { RqError } from '../errors.js';
import { resendDelay, backoffScale, resendText } from '../script-kit/resend-delay.js';
import { ScriptPipe, pipeFds } from '../script-kit/pipe.js';
import { scriptLog } from '../script-kit/log.js';
import { HttpClient } from '../script-kit/http-client.js';
import { envTraceContext } from '../script-kit/trace-env.js';
import { rootPaths } from '../config/paths.js';
import { MgrClient } from '../ipc/mgr-client.js';
import { isFleetDest, poolQueue } from '../message/fleet-dest.js';
import { scriptRoot } from '../script-kit/root.js';
import type { ScriptLog } from '../script-kit/log.js';
import { type RelayJob, type RelayOutcome, relayMessage } from './relay.js';
import { relayLoop } from './relay-loop.js';
import { poolJob, poolRoute } from './pool-route.js';
import { commitSent } from './pool-binding.js';
import { relayTarget } from '../message/relay-target.js';

/** Classic soft-fail back-off: count² × 10 s (0, 10, 40, 90, …), capped, until the queue's max_count. */
const RELAY_BACKOFF_UNIT_S = 10;

/** Attempts one run makes for a pool message: a host that fails before any commit went to it is followed at once by another, not after the back-off. */
const ATTEMPTS_A_RUN = 3;

/** An http dest's job; for a pool, the job to the host chosen now (with the fleet's credentials for it, and its name), or the outcome when no host takes it. */
async function jobFor(
  dest: string,
  env: NodeJS.ProcessEnv,
  log: ScriptLog,
  pipe: ScriptPipe,
  failed: ReadonlySet<string>,
): Promise<(RelayJob & { authorization?: string; poolHost?: string }) | RelayOutcome> {
  const jobDir = jobDirOf(env);
  if (!isFleetDest(dest)) return { jobDir, target: relayTarget(dest) };
  const queue = poolQueue(dest);
  const mgr = new MgrClient(rootPaths(scriptRoot(env)).mgrSock);
  const r = await poolRoute(jobDir, queue, { fleet: () => mgr.fleet(), log, failed });
  if (r.kind !== 'host') return { kind: r.kind === 'wait' ? 'retry' : 'fail', reason: r.reason };
  pipe.send('run', `pool ${queue}: ${r.host}`);
  return { ...(await poolJob(jobDir, r, () => mgr.fleetCredential(), log, queue)), poolHost: r.host };
}

const jobDirOf = (env: NodeJS.ProcessEnv): string => env.RQ_MSG_DIR ?? process.cwd();
/** Earlier attempts of this message (its count of resends). */
const countOf = (env: NodeJS.ProcessEnv): number => Number(env.RQ_COUNT ?? '0') || 0;

/** One delivery: its outcome, and the pool host it went to (none for an http dest, or when no host was chosen). */
async function attempt(
  dest: string,
  env: NodeJS.ProcessEnv,
  log: ScriptLog,
  pipe: ScriptPipe,
  failed: ReadonlySet<string>,
): Promise<{ outcome: RelayOutcome; poolHost?: string }> {
  let http: HttpClient | null = null;
  try {
    const job = await jobFor(dest, env, log, pipe, failed);
    if ('kind' in job) return { outcome: job };
    http = new HttpClient(job.authorization ? { headers: { authorization: job.authorization } } : {});
    // The classic relay's own line, alone, as the classic tests and log readers grep for it.
    if (env.RQ_FORCE_REMOTE === '1') log('FORCE REMOTE');
    log(`relaying ${env.RQ_FULL_MSG_ID ?? env.RQ_MSG_ID ?? ''} to ${job.target.base}/q/${job.target.queue} (attempt ${countOf(env) + 1})`);
    const trace = envTraceContext(env, (problem) => log(`${problem}: the far copy is sent without it`));
    return { outcome: await relayMessage({ ...job, trace }, { http, log, progress: (text) => pipe.send('run', text) }), poolHost: job.poolHost };
  } catch (err) {
    // A bad dest never gets better; anything else (disk, a far host misbehaving) may.
    const invalid = err instanceof RqError && err.code === 'RQ_ERR_INVALID_FIELD';
    return { outcome: invalid ? { kind: 'fail', reason: err.message } : { kind: 'retry', reason: (err as Error).message } };
  } finally {
    http?.close();
  }
}

async function main(env: NodeJS.ProcessEnv): Promise<number> {
  const pipe = new ScriptPipe(pipeFds(env));
  const log = scriptLog();
  const dest = env.RQ_DEST ?? '';
  const count = countOf(env);

  const loop = relayLoop(dest, env.RQ_ORIG_MSG_ID ?? '', env.RQ_DEST_QUEUE ?? '');
  if (loop) {
    log(`${loop} (dest ${dest}, orig_msg_id ${env.RQ_ORIG_MSG_ID ?? ''})`);
    pipe.send('err', loop);
    return 0;
  }
  const failed = new Set<string>();
  let { outcome, poolHost } = await attempt(dest, env, log, pipe, failed);
  // A pool host listed up may have just died (its lease outlives it by up to a TTL): before any commit went there, the
  // message is free to go to another host now (its copy there, if the prep made one, is never committed).
  for (let tries = 1; outcome.kind === 'retry' && poolHost !== undefined && tries < ATTEMPTS_A_RUN && !(await commitSent(jobDirOf(env))); tries++) {
    failed.add(poolHost);
    log(`pool: ${poolHost} failed before any commit went there (${outcome.reason}); trying another host now`);
    const next = await attempt(dest, env, log, pipe, failed);
    // No other host takes it: the first failure is the reason it waits.
    if (next.outcome.kind === 'retry' && next.poolHost === undefined) break;
    ({ outcome, poolHost } = next);
  }

  switch (outcome.kind) {
    case 'relayed':
      log(`relayed ${outcome.fullId}`);
      pipe.send('relayed', outcome.fullId);
      break;
    case 'retry': {
      const delay = resendDelay(count, RELAY_BACKOFF_UNIT_S, backoffScale(env));
      log(`soft fail, resend in ${delay} s: ${outcome.reason}`);
      pipe.send('resend', resendText(delay, outcome.reason));
      break;
    }
    case 'fail':
      log(`failed: ${outcome.reason}`);
      pipe.send('err', outcome.reason);
      break;
  }
  return 0;
}

main(process.env).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`relay: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
