// OpenAPI schemas of the observability routes (docs/observability.md): search (brightroll), and, as they land, statistics, metrics and events.
import type { FastifySchema } from 'fastify';
import { JSON_REFUSALS, type Json, Q, TAGS, answer, listOf, pathParams, query } from './shapes.js';

const SEARCHED = listOf(
  { msg_id: { type: 'string' }, state: { type: 'string' }, acked: { type: 'boolean' } },
  "Newest first: each message's short fields (values over 256 characters cut), its `state` and `msg_id`; the total is in `X-Total-Count`",
);

const DISTRIBUTION = {
  type: 'object',
  additionalProperties: true,
  description: 'Seconds: count, mean, variance (sample), min, max, qless histogram {s, m, h, d}, and p50/p95/p99 read off it (null when it has no bins)',
  properties: {
    count: { type: 'integer' },
    mean: { type: 'number' },
    variance: { type: 'number' },
    p50: { type: ['number', 'null'] },
    p95: { type: ['number', 'null'] },
    p99: { type: ['number', 'null'] },
  },
};

const DAY = {
  type: 'object',
  additionalProperties: true,
  description: "rq-beyond §B15.3: the day's counters, outcomes, wait and run distributions, hourly done/err; `live` only for today",
  properties: {
    queue: { type: 'string' },
    date: { type: 'string', example: '20261126' },
    created: { type: 'integer' },
    done: { type: 'integer' },
    err: { type: 'integer' },
    wait: DISTRIBUTION,
    run: DISTRIBUTION,
    live: { type: 'object', additionalProperties: true },
  },
};

const GROUPS = {
  type: 'object',
  additionalProperties: true,
  description: '`{"groups": {"<group>": n}}`, or with `group` `{"group", "total", "messages": [{msg_id, outcome, failure, text, at, url}]}`',
};

const GROUP_QUERY = {
  group: { type: 'string', description: 'An outcome, an error class such as ValueError, or a failure kind' },
  offset: { type: 'integer', minimum: 0 },
  limit: { type: 'integer', minimum: 1, maximum: 1000, default: 25 },
};

/** An HTML page of one queue. */
function queuePage(summary: string, querystring: Record<string, Json>): FastifySchema {
  return { summary, tags: [TAGS.pages], params: pathParams({ q: Q }), querystring: query(querystring), response: { 200: answer('HTML', { html: true }) } };
}

export const observabilitySchemas = {
  metrics: {
    summary: 'Prometheus metrics of rq-mgr, every queue and the limits (text format 0.0.4)',
    description:
      'rq-beyond §B16. Each queue is asked in parallel with a 1 s timeout; one that does not answer contributes `rq_queue_up 0`. Same basic_auth as every route unless `metrics_public`.',
    tags: [TAGS.observability],
    response: { 200: answer('The exposition', { text: true }) },
  },
  events: {
    summary: 'Every move of every message, live (Server-Sent Events)',
    description:
      "One `data:` line of JSON per event `{seq, at, queue, msg_id, type, from, to, actor, reason, status, tags}` (type created, moved, started, finished, removed, status, or progress: a running message's status line, paced to one per 100 ms); `ready` once every followed queue was tried, `gap` when events may have been missed (a queue restarted, a reader fell behind), `end` at shutdown. At most `max_event_streams` open streams (503 with Retry-After beyond).",
    tags: [TAGS.observability],
    querystring: query({
      queue: { type: 'string', description: 'Queue names, comma-separated; all when absent' },
      tag: { type: 'string', description: 'Tags, comma-separated: events of messages with any of them' },
      msg_id: { type: 'string', description: 'One message' },
    }),
    response: {
      200: answer('The stream', { events: true }),
      400: JSON_REFUSALS[400],
      503: answer('Too many streams open', { text: true, json: { type: 'array' } }),
    },
  },
  statsJson: {
    summary: "A queue's statistics for one UTC day",
    description: 'Read-only; answered while the queue is DOWN. Stored days from `stats/<YYYYMMDD>.json`.',
    tags: [TAGS.observability],
    params: pathParams({ q: Q }),
    querystring: query({ date: { type: 'string', pattern: '^\\d{8}$', description: 'YYYYMMDD, UTC; today when absent' } }),
    response: { 200: answer('The day', { json: DAY }), ...JSON_REFUSALS },
  },
  failedJson: {
    summary: "Failure groups of the err messages, or one group's messages",
    tags: [TAGS.observability],
    params: pathParams({ q: Q }),
    querystring: query(GROUP_QUERY),
    response: { 200: answer('Groups, or a page of a group', { json: GROUPS }), ...JSON_REFUSALS },
  },
  statsPage: queuePage('The statistics page (counters, charts, failure groups)', { date: { type: 'string', description: 'YYYYMMDD or YYYY-MM-DD' } }),
  failedPage: queuePage("Failure groups, or one group's messages, as a page", GROUP_QUERY),
  search: {
    summary: "Search one queue's messages in every state (brightroll /search)",
    description:
      "`query[<field>]=<text>` (up to 8, all must match) contains — or, with `exact`, equals — the field; `text` must be contained in any field. Answered from the queue's search index (read from every message at the first search and at each later start, then kept by its events). `x_format=html` renders the results page.",
    tags: [TAGS.observability],
    querystring: query({
      name: { type: 'string', description: 'The queue' },
      text: { type: 'string', maxLength: 1000 },
      exact: { type: 'string', enum: ['1', 'true', '0', 'false'] },
      state: { type: 'string', enum: ['prep', 'que', 'run', 'done', 'relayed', 'err'] },
      offset: { type: 'integer', minimum: 0, default: 0 },
      limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
      x_format: { type: 'string', enum: ['json', 'html'], default: 'json' },
    }),
    response: { 200: answer('The matching messages', { json: SEARCHED, html: true }), ...JSON_REFUSALS },
  },
} satisfies Record<string, FastifySchema>;
