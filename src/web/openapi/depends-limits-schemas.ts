// OpenAPI schemas of the dependency and limit routes (api/depends-limits-api.ts, api/fleet-deps-api.ts, rq-beyond §B8, §B12): undepend, dependencies between fleet hosts and /limits.json.
import type { FastifySchema } from 'fastify';
import {
  ACTION_REFUSALS,
  BACK,
  FAIL,
  FORM_TYPES,
  ID,
  JSON_REFUSALS,
  Q,
  STRING_LIST,
  TAGS,
  X_FORMAT_HTML,
  answer,
  formBody,
  ok,
  openObject,
  pathParams,
  query,
  seeOther,
} from './shapes.js';

const REF = { type: 'string', description: '`<queue>/<id>`', example: 'b/20261125.2327.52.595.2254016' };

const FLEET_REF = {
  type: 'string',
  description: "The full id of a message of another host of this host's fleet that is up: `<its advertised url>/q/<queue>/<id>`",
  example: 'http://10.0.0.6:3333/q/report/20261125.2327.52.595.2254016',
};

const KEY_STATUS = {
  type: 'object',
  additionalProperties: true,
  properties: {
    concurrency: { type: 'integer' },
    source: { type: 'string', enum: ['config', 'message'], description: "`config/limits.json`, or a message's `limit_concurrency`" },
    holders: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          ref: REF,
          queue: { type: 'string' },
          since: { type: 'integer', description: 'Epoch ms' },
          granted_at: { type: 'integer', description: 'Epoch ms' },
          orphaned: { type: 'boolean', description: 'While the queue that ran it is dead and its scripts may still run' },
        },
      },
    },
    waiting: {
      type: 'array',
      items: {
        type: 'object',
        properties: { ref: REF, queue: { type: 'string' }, since: { type: 'integer' }, position: { type: 'integer', description: '1-based' } },
      },
    },
  },
};

export const dependsLimitsSchemas = {
  undepend: {
    summary: 'Stop waiting on dependencies (R)',
    description:
      'Give `depends` (refs) or `all`, not both. Checked before the queue is asked, with its texts. HTML: the flash `Still waiting on <refs>` or ' +
      '`No longer waiting on dependencies` and 303 to `back` or the message page.',
    tags: [TAGS.depends],
    params: pathParams({ q: Q, id: ID }),
    consumes: FORM_TYPES,
    body: formBody({
      depends: { ...STRING_LIST, description: 'Refs: comma-separated, `depends[]=a&depends[]=b`, or a JSON array (1-1000)' },
      all: { type: 'string', description: '`true`, `1`, `on`…' },
      x_format: X_FORMAT_HTML,
      back: BACK,
    }),
    response: {
      200: answer('The refs still awaited (x_format=json)', { json: ok({ ...STRING_LIST, items: REF }, ['parts/20261125.2327.52.541.2253790']) }),
      303: seeOther('`back` or the message page'),
      ...ACTION_REFUSALS,
    },
  },
  dependents: {
    summary: 'Between fleet hosts: a message of another host waits on this one (add_dependent)',
    description:
      "Sent by another host's queue for a message whose `depends` names this message's full id (docs/fleet.md). Idempotent. The message is told once " +
      'this one ends, durably, and again until it answers. Answered in JSON; every refusal carries its catalogue code (`["fail", text, code]`).',
    tags: [TAGS.depends],
    params: pathParams({ q: Q, id: ID }),
    body: formBody({ dependent: FLEET_REF }),
    response: {
      200: answer('Where this message is now', { json: ok(openObject({ state: { type: 'string' }, outcome: { type: 'string' } }), { state: 'run' }) }),
      ...JSON_REFUSALS,
    },
  },
  resolved: {
    summary: 'Between fleet hosts: a dependency on another host ended (dependency_resolved)',
    description:
      'Sent by the host of a dependency once its end is durable, and again until answered; a repeat is `ignored`. Answered in JSON, refusals with their code.',
    tags: [TAGS.depends],
    params: pathParams({ q: Q, id: ID }),
    body: formBody({
      dependency: FLEET_REF,
      state: { type: 'string', enum: ['done', 'relayed', 'err', 'deleted'] },
      outcome: { type: 'string', description: 'The outcome of an err one, such as `failed`' },
    }),
    response: {
      200: answer('`resolved`, or `ignored` when the message no longer waits for it', {
        json: ok({ type: 'string', enum: ['resolved', 'ignored'] }, 'resolved'),
      }),
      ...JSON_REFUSALS,
    },
  },
  limitsJson: {
    summary: "rq-mgr's concurrency-limit table",
    description: 'A key is listed while it has holders or waiters. `Cache-Control: no-store`.',
    tags: [TAGS.depends],
    querystring: query({ key: { type: 'string', description: 'One key only (`{}` when it is not in use); 1-256 characters without control characters' } }),
    response: {
      200: answer('key → its status', { json: { type: 'object', additionalProperties: KEY_STATUS } }),
      400: answer('Not a key', { json: FAIL }),
      503: answer('rq-mgr did not answer limit_status', { json: FAIL }),
    },
  },
} satisfies Record<string, FastifySchema>;
