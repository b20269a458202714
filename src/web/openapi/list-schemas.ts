// OpenAPI schemas of the message list: its query parameters, shared by the queue page, messages.json and bulk's "all matching".
import type { FastifySchema } from 'fastify';
import {
  ACTION_REFUSALS,
  FORM_TYPES,
  JSON_REFUSALS,
  type Json,
  PARTIAL,
  Q,
  TAGS,
  X_FORMAT_HTML,
  answer,
  formBody,
  pathParams,
  query,
  seeOther,
} from './shapes.js';

const DATE = 'UTC `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS]`';

/** Every list parameter; each is checked by the handler, a bad one answers 400 naming it, what it expects and what it received. */
export const LIST_QUERY: Record<string, Json> = {
  state: {
    type: 'string',
    enum: ['all', 'prep', 'que', 'run', 'done', 'err', 'relayed', 'acked'],
    description: '`err`: unacknowledged errors; `acked`: acknowledged ones (`err/.<id>`); all states when absent',
  },
  filter: { type: 'string', maxLength: 1000, description: 'Text any field of the message contains (ids and times left out)' },
  from: { type: 'string', description: `Created at or after: ${DATE}` },
  to: { type: 'string', description: `Created before: ${DATE}; a bare date means the end of that day` },
  sort: { type: 'string', enum: ['created', 'due', 'finished'], default: 'created' },
  order: { type: 'string', enum: ['desc', 'asc'], default: 'desc' },
  offset: { type: 'integer', minimum: 0, maximum: 10_000_000, default: 0 },
  limit: { type: 'integer', enum: [25, 50, 100, 500], default: 50 },
};

const ROW = {
  type: 'object',
  properties: {
    msg_id: { type: 'string' },
    state: { type: 'string' },
    acked: { type: 'boolean' },
    created: { type: ['integer', 'null'], description: 'Epoch ms, from the id' },
    due: { type: ['integer', 'null'], description: 'Epoch seconds' },
    count: { type: ['integer', 'null'], description: "The message's `count` field" },
    attempts: { type: 'integer', description: 'The runs it had (its history), a running one included' },
    param1: { type: ['string', 'null'] },
    status: { type: 'string', description: '`<state> - <status text>`' },
    duration_ms: { type: ['number', 'null'], description: "The last run's wall time (a running one's so far)" },
    total_ms: { type: ['number', 'null'], description: "All its runs' wall time together (a running one's so far)" },
    finished: { type: ['number', 'null'], description: 'Epoch ms it finished' },
  },
};

export const listSchemas = {
  messagesJson: {
    summary: "One page of a queue's messages, filtered and sorted on the server",
    description:
      "The queue page's list as JSON: `{total, offset, limit, messages}`; the total is also in `X-Total-Count`. Answered while the queue is DOWN. The first listing after a queue starts waits up to 7 s while the queue reads its messages (docs/observability.md), then answers 503.",
    tags: [TAGS.observability],
    params: pathParams({ q: Q }),
    querystring: query(LIST_QUERY),
    response: {
      200: answer('The page', {
        json: {
          type: 'object',
          properties: { total: { type: 'integer' }, offset: { type: 'integer' }, limit: { type: 'integer' }, messages: { type: 'array', items: ROW } },
        },
      }),
      400: JSON_REFUSALS[400],
      404: JSON_REFUSALS[404],
      503: answer('The queue is still reading its messages for the list (its first listing since it started) after 7 s; `Retry-After: 2`', {
        json: { type: 'array' },
      }),
    },
  } satisfies FastifySchema,
  bulk: {
    summary: 'Retry, delete, acknowledge or move many messages (a confirmation first)',
    description:
      'The selected `ids[]` (scope `selected`), or every message matching the list filter (`state`, `filter`, `from`, `to`; scope `all`) that the action applies to. HTML: without `confirm=1` a page saying how many messages will change (counted by the queue now) with a form to confirm; with it the job starts in the queue process and the answer is a 303 to its page (`GET /q/<q>/bulk?job=`). `x_format=json`: `dry_run=1` answers `{op, count}`, otherwise the job is started at once and answered.',
    tags: [TAGS.lifecycle],
    params: pathParams({ q: Q }),
    consumes: FORM_TYPES,
    body: formBody({
      op: { type: 'string', enum: ['retry', 'delete', 'ack', 'move'] },
      scope: { type: 'string', enum: ['selected', 'all'] },
      'ids[]': { type: 'array', items: { type: 'string' }, description: 'Message ids (an acknowledged error with its leading dot)' },
      dest: { type: 'string', description: 'move: the queue to move to' },
      state: LIST_QUERY.state,
      filter: LIST_QUERY.filter,
      from: LIST_QUERY.from,
      to: LIST_QUERY.to,
      confirm: { type: 'string', enum: ['1'] },
      dry_run: {
        type: ['string', 'boolean'],
        enum: ['1', 'true', 'on', '0', 'false', 'off', '', true, false],
        description: 'x_format=json: true only counts the messages; false (or absent) starts the job. Any other value is refused',
      },
      x_format: X_FORMAT_HTML,
    }),
    response: {
      200: answer('The confirmation page, or (x_format=json) the count or the job', { html: true, json: { type: 'array' } }),
      303: seeOther("the job's page"),
      ...ACTION_REFUSALS,
    },
  } satisfies FastifySchema,
  bulkPage: {
    summary: "A bulk action's progress and summary, or the queue's recent bulk actions",
    description:
      "With `job`: the job (changed, skipped by reason with example ids), following the queue's `bulk` events while it runs. Without: the jobs the queue process remembers (the last 20; a restarted queue remembers none).",
    tags: [TAGS.pages],
    params: pathParams({ q: Q }),
    querystring: query({ job: { type: 'string' }, x_format: { type: 'string', enum: ['html', 'json'], default: 'html' } }),
    response: {
      200: answer('The page, or (x_format=json) the job (running, or finished with every message changed) or the list', {
        html: true,
        json: { type: 'object' },
      }),
      404: answer('No such job', { html: true, json: { type: 'array' } }),
      409: answer(
        'x_format=json: a finished job that skipped messages, with the status of its first skip reason (409, 404, 507…): `["fail", text, report]`, the job in `report.job`',
        { json: PARTIAL },
      ),
    },
  } satisfies FastifySchema,
};
