// OpenAPI schemas of the lifecycle routes (api/lifecycle-api.ts): cancel, requeue, reschedule, priority, requeue_errs, running, waiting, history.
import type { FastifySchema } from 'fastify';
import {
  ACTION_REFUSALS,
  BACK,
  FORM_TYPES,
  ID,
  JSON_REFUSALS,
  type Json,
  PARTIAL_FAILURE,
  Q,
  STRING_LIST,
  TAGS,
  X_FORMAT_HTML,
  answer,
  formBody,
  listOf,
  ok,
  pathParams,
  query,
  seeOther,
} from './shapes.js';

const MSG_PARAMS = pathParams({ q: Q, id: ID });
const DUE = { type: 'string', description: 'Epoch seconds to run at, 0 to 253402300799 (the end of year 9999)' };
const DELAY = { type: 'string', description: 'Seconds from now to run at' };

/** One message action: JSON the queue's reply with its status; HTML a flash and 303 to `back` or the message page. */
function messageAction(summary: string, description: string, fields: Record<string, Json>, value: Json, example: unknown): FastifySchema {
  return {
    summary,
    description: `${description} The actor recorded is \`web:<basic-auth user or client ip>\`. HTML: a flash and 303; a refusal is the classic \`<status> - Couldn't … <reply>.\` text.`,
    tags: [TAGS.lifecycle],
    params: MSG_PARAMS,
    consumes: FORM_TYPES,
    body: formBody({ ...fields, x_format: X_FORMAT_HTML, back: BACK }),
    response: {
      200: answer("The queue's reply (x_format=json)", { json: ok(value, example) }),
      303: seeOther('`back` or the message page'),
      ...ACTION_REFUSALS,
    },
  };
}

const RUNNING = listOf({
  msg_id: { type: 'string' },
  pid: { type: 'integer' },
  started_at: { type: 'string', format: 'date-time' },
  last_beat: { type: 'string', format: 'date-time', description: 'The last sign of life' },
  silent_s: { type: 'number' },
  deadline: { type: 'string', format: 'date-time', nullable: true },
  heartbeat_timeout: { type: 'number', nullable: true },
  attempt: { type: 'integer' },
  limit: { type: 'string', description: 'The limit key whose slot the run holds' },
});

const WAITING = listOf({
  msg_id: { type: 'string' },
  reason: { type: 'string', enum: ['delayed', 'coalesced', 'dependencies', 'limit'] },
  due: { type: 'number' },
  into: { type: 'string' },
  waiting_on: STRING_LIST,
  key: { type: 'string' },
  position: { type: 'integer', nullable: true },
});

const HISTORY = listOf(
  {
    at: { type: 'string', format: 'date-time' },
    from: { type: 'string', nullable: true },
    to: { type: 'string' },
    event: { type: 'string' },
    actor: { type: 'string' },
    reason: { type: 'string' },
  },
  'Oldest first; `history.1` (past 1 MiB) included',
  'A move (`from`, `to`) or an `event`, with details such as `pid`, `attempt`, `exit`, `failure`, `retry`, `delay_s`, `outcome`',
);

export const lifecycleSchemas = {
  cancel: messageAction(
    'Cancel a message',
    'From prep, que or run (TERM, then KILL after a grace); `purge` removes it instead of keeping it in err.',
    { reason: { type: 'string' }, purge: { type: 'string', description: '`true`, `1`, `on`…' } },
    { type: 'string' },
    'msg cancelled',
  ),
  requeue: messageAction(
    'Send an err message back to the que',
    'It keeps its id; `reset` also zeroes its failures and interrupts.',
    { reset: { type: 'string' }, due: DUE, delay: DELAY },
    { type: 'string' },
    'msg requeued',
  ),
  priority: messageAction('Set the priority of a waiting message', 'Lower runs first.', { priority: { type: 'string', example: '2' } }, { type: 'number' }, 2),
  reschedule: messageAction('Move the due of a waiting message', 'The reply is the new due.', { due: DUE, delay: DELAY }, { type: 'number' }, 1795640711.674),
  requeueErrs: {
    summary: "Requeue the queue's err messages (R)",
    description:
      'Every unacknowledged err message (of `outcome`, at most `limit`), oldest first. HTML: the flash `<n> messages requeued` and 303 to `back` or the queue page.',
    tags: [TAGS.lifecycle],
    params: pathParams({ q: Q }),
    consumes: FORM_TYPES,
    body: formBody({
      outcome: { type: 'string', example: 'failed' },
      limit: { type: 'string', description: '1-1000000' },
      x_format: X_FORMAT_HTML,
      back: BACK,
    }),
    response: {
      200: answer('How many were requeued (x_format=json)', { json: ok({ type: 'integer' }, 3) }),
      303: seeOther('`back` or the queue page'),
      ...ACTION_REFUSALS,
      507: PARTIAL_FAILURE,
    },
  },
  runningJson: {
    summary: 'What the queue runs now (R)',
    description: 'As `rq running` prints it. Answered while the queue is DOWN.',
    tags: [TAGS.lifecycle],
    params: pathParams({ q: Q }),
    response: { 200: answer('One entry per run', { json: RUNNING }), ...JSON_REFUSALS },
  },
  waitingJson: {
    summary: 'Queued messages that are not ready, and why (R)',
    description: 'As `rq waiting` prints them. Answered while the queue is DOWN.',
    tags: [TAGS.lifecycle],
    params: pathParams({ q: Q }),
    querystring: query({
      reason: { type: 'string', enum: ['delayed', 'coalesced', 'dependencies', 'limit'] },
      limit: { type: 'integer', minimum: 1, maximum: 10000, default: 1000 },
    }),
    response: { 200: answer('One entry per message', { json: WAITING }), ...JSON_REFUSALS },
  },
  historyJson: {
    summary: "A message's history (R)",
    tags: [TAGS.lifecycle],
    params: MSG_PARAMS,
    response: { 200: answer('Every history line; the create line is implied by the id', { json: HISTORY }), ...JSON_REFUSALS },
  },
} satisfies Record<string, FastifySchema>;
