// Dependencies between hosts of a fleet (docs/fleet.md): POST /q/<q>/<id>/dependents registers another host's message as waiting on this one, POST /q/<q>/<id>/resolved tells a message here that its dependency on another host ended.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError, invalidField, statusOf } from '../../errors.js';
import { type Answer, refusalError } from '../../ipc/answer.js';
import { fleetRefOf } from '../../message/fleet-ref.js';
import { FINISHED_STATES } from '../../message/states.js';
import { fleetAnswer } from '../fleet-answer.js';
import { pathParam } from '../request-params.js';
import type { WebContext } from '../web-context.js';

/** An err outcome as rq writes them (`failed`, `exhausted`, `dependency_failed`…). */
const OUTCOME_RE = /^[a-z_]{1,40}$/;
const ENDED: readonly string[] = [...FINISHED_STATES, 'deleted'];

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

  /** Every refusal as `["fail", text, code]`, a missing queue too: the asking host acts on the code. */
  const withCodes =
    (route: (req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>) =>
    async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      try {
        return await route(req, reply);
      } catch (err) {
        if (!(err instanceof RqError)) throw err;
        return ctx.json(reply, ['fail', err.message, err.code], statusOf(err.code));
      }
    };

  return {
    /** POST /q/<q>/<id>/dependents `{dependent}`: add_dependent; `["ok", {"state", "outcome"?}]`, where the message is now. */
    dependents: withCodes(async (req, reply) => {
      const { q, id, p } = await target(req);
      const dependent = await fleetRef('dependent', p.dependent);
      return coded(reply, await ctx.queue(q).addDependent(id, dependent));
    }),

    /** POST /q/<q>/<id>/resolved `{dependency, state, outcome?}`: dependency_resolved; `["ok", "resolved" | "ignored"]`. */
    resolved: withCodes(async (req, reply) => {
      const { q, id, p } = await target(req);
      const dependency = await fleetRef('dependency', p.dependency);
      const state = p.state;
      if (typeof state !== 'string' || !ENDED.includes(state)) throw invalidField('state', `one of ${ENDED.join(', ')}`, state);
      const outcome = p.outcome;
      if (outcome !== undefined && (typeof outcome !== 'string' || !OUTCOME_RE.test(outcome)))
        throw invalidField('outcome', 'an outcome word such as failed or exhausted (1-40 of a-z and _)', outcome);
      return coded(reply, await ctx.queue(q).dependencyResolved({ msg_id: id, dependency, state, ...(outcome ? { outcome } : {}) }));
    }),
  };
}
