// Where a pool message goes on this attempt (docs/fleet.md, Pools): the host it is bound to while a commit sent there may have landed, else the host with the most free capacity now.
import type { Answer } from '../ipc/answer.js';
import { type FleetView, type PeerCredential, basicAuthorization, blindness, trustedHosts } from '../ipc/fleet-reply.js';
import type { ScriptLog } from '../script-kit/log.js';
import { type PoolBinding, commitSent, forgetBinding, markCommitSent, readBinding, writeBinding } from './pool-binding.js';
import { choosePoolHost, poolHosts } from './pool-choice.js';
import { readRelayId } from './relay-id.js';
import { type RelayTarget, queueUrl } from '../message/relay-target.js';
import type { RelayJob } from './relay.js';

export type PoolRoute =
  | {
      kind: 'host';
      host: string;
      /** The host is up in the fleet at that URL now: only then is it given the fleet's credentials (a host that left, or an address reused, is not). */
      member: boolean;
      target: RelayTarget;
      /** The far copy's dest: the chosen queue's URL, as an http relay's copy carries its own. */
      dest: string;
      beforeCommit: () => Promise<void>;
    }
  /** No host takes it now (or rq-mgr did not answer): the message waits in the relay queue and tries again. */
  | { kind: 'wait'; reason: string }
  /** This host is in no fleet (any more): waiting will not change that. */
  | { kind: 'fail'; reason: string };

export interface PoolDeps {
  /** rq-mgr's view of the fleet (its `fleet` command). */
  fleet: () => Promise<Answer<FleetView>>;
  log: ScriptLog;
  random?: () => number;
  /** Hosts this run of the relay already tried and that failed before any commit went to them: passed over (with only them taking the queue, the attempt waits). */
  failed?: ReadonlySet<string>;
}

function route(jobDir: string, queue: string, b: PoolBinding, member: boolean): PoolRoute {
  const target = { base: b.url.replace(/\/+$/, ''), queue };
  return { kind: 'host', host: b.host, member, target, dest: queueUrl(target.base, queue), beforeCommit: () => markCommitSent(jobDir) };
}

/** Is `b`'s host up in the fleet at its bound URL, as rq-mgr sees it now (false when rq-mgr cannot say, or etcd does not answer it)? */
async function upAt(b: PoolBinding, fleet: PoolDeps['fleet']): Promise<boolean> {
  const view = await fleet().catch(() => null);
  return view?.ok === true && trustedHosts(view.value).some((h) => h.host === b.host && h.url === b.url);
}

/**
 * The relay job for a route to a host: a host up in the fleet gets the message with the fleet's
 * credentials (asked of rq-mgr by `credential`); one that is not is only asked whether the copy a
 * commit went to landed, without them.
 */
export async function poolJob(
  jobDir: string,
  r: Extract<PoolRoute, { kind: 'host' }>,
  credential: () => Promise<Answer<PeerCredential>>,
  log: ScriptLog,
  queue: string,
): Promise<RelayJob & { authorization?: string }> {
  const job: RelayJob = { jobDir, target: r.target, dest: r.dest, beforeCommit: r.beforeCommit };
  if (!r.member) return { ...job, askOnly: `${r.host} is not up in the fleet now` };
  // A host of the fleet with basic_auth lets the others in by the fleet's secret; without it, a host that has none still takes the message.
  const c = await credential().catch((err: Error) => ({ ok: false as const, text: err.message }));
  if (!c.ok) log(`pool ${queue}: sent without the fleet's credentials (${c.text})`);
  return c.ok ? { ...job, authorization: basicAuthorization(c.value) } : job;
}

/**
 * The two-phase relay is idempotent per far host: its relay_id names a copy there. So once a commit
 * went to a host unanswered, the message stays with that host (the relay's state check settles it)
 * however long it is gone. Before that, a host that no longer takes the queue, or that failed this
 * run, is left for another: its prep copy, if it made one, is never committed, so it never runs.
 */
export async function poolRoute(jobDir: string, queue: string, d: PoolDeps): Promise<PoolRoute> {
  const bound = await readBinding(jobDir);
  if (bound && (await readRelayId(jobDir)) !== null && (await commitSent(jobDir))) {
    d.log(`pool ${queue}: a commit went to ${bound.host} unanswered; staying with it until it says whether it landed`);
    return route(jobDir, queue, bound, await upAt(bound, d.fleet));
  }
  let view: Answer<FleetView>;
  try {
    view = await d.fleet();
  } catch (err) {
    return { kind: 'wait', reason: `rq-mgr did not answer with the fleet: ${(err as Error).message}` };
  }
  if (!view.ok) return view.code === 'RQ_ERR_NO_FLEET' ? { kind: 'fail', reason: view.text } : { kind: 'wait', reason: `the fleet: ${view.text}` };
  const all = poolHosts(view.value, queue);
  // A host still listed up may be one that has just died (its lease outlives it): one that failed this run is passed over.
  const hosts = all.filter((h) => !d.failed?.has(h.host));
  if (bound) {
    if (hosts.some((h) => h.host === bound.host && h.url === bound.url)) return route(jobDir, queue, bound, true);
    // One that failed this run was said by the relay, with why.
    if (!d.failed?.has(bound.host))
      d.log(`pool ${queue}: ${bound.host} no longer takes it (gone, or its queue not UP) and no commit went there; choosing again`);
    await forgetBinding(jobDir);
  }
  const pick = choosePoolHost(hosts, d.random);
  if (!pick) {
    // A host that has not read the fleet from etcd says so: the hosts it lacks may be there.
    const blind = blindness(view.value);
    const none = `no ${all.length > 0 ? 'other ' : ''}host of fleet ${view.value.fleet} has queue ${queue} UP`;
    return { kind: 'wait', reason: blind ? `${none} as this host sees it (${blind})` : none };
  }
  await writeBinding(jobDir, pick);
  d.log(`pool ${queue}: chose ${pick.host} (${pick.url}), ${pick.free} free of ${pick.figures.workers} workers, of ${all.length} hosts taking it`);
  return route(jobDir, queue, pick, true);
}
