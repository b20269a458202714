// Dependencies between hosts of a fleet (docs/fleet.md): POST /q/<q>/<id>/dependents registers another host's message as waiting on this one, POST /q/<q>/<id>/resolved tells a message here that its dependency on another host ended.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { invalidField } from '../../errors.js';
import { type Answer, refusalError } from '../../ipc/answer.js';
import { fleetRefOf } from '../../message/fleet-ref.js';
import { FINISHED_STATES } from '../../message/states.js';
import { fleetAnswer } from '../fleet-answer.js';
import { pathParam } from '../request-params.js';
import type { WebContext } from '../web-context.js';

const ENDED: readonly string[] = [...FINISHED_STATES, 'deleted'];
const OUTCOME_MAX = 200;

export function fleetDepsApi(ctx: WebContext) {
  /**
   * `field` as the full id of a message of another host of the fleet that is up: only such ids are
   * passed on, so nobody can make the queue send its notifications anywhere but to a fleet host.
   */
  async function fleetRef(field: string, v: unknown): Promise<string> {
    const a = await fleetAnswer(ctx);
    if (!a.ok) throw refusalError(a);
    const up = a.value.hosts.filter((h) => h.state === 'up' && h.host !== a.value.host);
    const r = typeof v === 'string' ? fleetRefOf(v, up) : null;
    if (!r) throw invalidField(field, `the full id of a message of another host of fleet ${a.value.fleet} that is up (<advertised url>/q/<queue>/<id>)`, v);
    return r.ref;
  }

  /** The queue's reply as JSON, a refusal with its catalogue code (`["fail", text, code]`) so the asking host can tell a missing message from a failure. */
  function coded(reply: FastifyReply, a: Answer<unknown>): FastifyReply {
    return a.ok ? ctx.json(reply, a.raw) : ctx.json(reply, ['fail', a.text, a.code], ctx.refusalStatus(a));
  }

  async function target(req: FastifyRequest): Promise<{ q: string; id: string; p: Record<string, unknown> }> {
    ctx.markJson(req);
    const p = await ctx.params(req);
    const q = await ctx.requireRoutedQueue(pathParam(req, 'q'));
    return { q, id: ctx.requireMsgId(pathParam(req, 'id')), p };
  }

  return {
    /** POST /q/<q>/<id>/dependents `{dependent}`: add_dependent; `["ok", {"state", "outcome"?}]`, where the message is now. */
    async dependents(req: FastifyRequest, reply: FastifyReply) {
      const { q, id, p } = await target(req);
      const dependent = await fleetRef('dependent', p.dependent);
      return coded(reply, await ctx.queue(q).addDependent(id, dependent));
    },

    /** POST /q/<q>/<id>/resolved `{dependency, state, outcome?}`: dependency_resolved; `["ok", "resolved" | "ignored"]`. */
    async resolved(req: FastifyRequest, reply: FastifyReply) {
      const { q, id, p } = await target(req);
      const dependency = await fleetRef('dependency', p.dependency);
      const state = p.state;
      if (typeof state !== 'string' || !ENDED.includes(state)) throw invalidField('state', `one of ${ENDED.join(', ')}`, state);
      const outcome = p.outcome;
      if (outcome !== undefined && (typeof outcome !== 'string' || outcome.length > OUTCOME_MAX))
        throw invalidField('outcome', `text of at most ${OUTCOME_MAX} characters`, outcome);
      return coded(reply, await ctx.queue(q).dependencyResolved({ msg_id: id, dependency, state, ...(outcome ? { outcome } : {}) }));
    },
  };
}
