// OpenAPI schemas of the message routes (api/message-api.ts): new_message, delete/destroy/commit, clone, run_now, <id>.json, state.json.
import type { FastifySchema } from 'fastify';
import { INVALID_METHOD } from '../api/message-api.js';
import {
  ACTION_REFUSALS,
  BACK,
  FAIL,
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
  ok,
  pathParams,
  seeOther,
} from './shapes.js';

const FULL_ID = {
  type: 'string',
  description: "The full id: this server's URL of the message",
  example: 'http://127.0.0.1:3333/q/test/20261121.1644.25.608.2171098',
};

const WAITING = {
  type: 'object',
  description: 'Why a `que` message is not running yet (derived, never stored)',
  properties: {
    reason: { type: 'string', enum: ['ready', 'delayed', 'coalesced', 'dependencies', 'limit'] },
    due: { type: 'number' },
    into: { type: 'string' },
    waiting_on: STRING_LIST,
    key: { type: 'string' },
    position: { type: 'integer', nullable: true },
  },
};

const MESSAGE = {
  type: 'object',
  additionalProperties: true,
  description: 'Every field the message stores, plus `state`, `status` and the derived `waiting`, `depends_done`, `dependents`, `_attachments`',
  properties: {
    msg_id: { type: 'string' },
    dest: { type: 'string' },
    orig_msg_id: { type: 'string' },
    count: { type: 'integer' },
    max_count: { type: 'integer' },
    param1: { type: 'string' },
    due: { type: 'number' },
    path: { type: 'string' },
    state: { type: 'string', enum: ['prep', 'que', 'run', 'done', 'relayed', 'err'] },
    status: { type: 'string', example: 'done - done sleeping' },
    waiting: WAITING,
    depends_done: { type: 'object', additionalProperties: { type: 'string' }, description: 'ref → `done` or `err:<outcome>`' },
    dependents: STRING_LIST,
    _attachments: {
      type: 'object',
      additionalProperties: { type: 'object', properties: { md5: { type: 'string' }, size: { type: 'integer' }, path: { type: 'string' } } },
    },
  },
};

const MESG = {
  type: 'string',
  description:
    'x_format=json: a JSON object text (`{"dest":"test","param1":"hello"}`), or an object in a JSON body. x_format=html: `mesg[dest]`, `mesg[param1]`, … fields. ' +
    'Fields: dest, param1-4, src, count, max_count, post_run_webhook, tags, priority, max_age, expire_at, max_retries, backoff_base, min_retry_delay, max_retry_delay, ' +
    'retry_jitter, timeout, heartbeat_timeout, memory_max, memory_high, cpu_max, pids_max, io_weight, depends, depends_fail, limit, limit_concurrency, traceparent, tracestate, ' +
    'idempotency_key; `_method` commit (default), ' +
    'prep or single_que.',
  example: '{"dest":"test","param1":"hello"}',
};

/** W3C Trace Context: the trace a message joins when its fields name none (a body's traceparent or tracestate wins whole). */
const TRACE_HEADERS = {
  traceparent: {
    type: 'string',
    description:
      'W3C traceparent (`00-<32 hex>-<16 hex>-<2 hex>`), stored as the `traceparent` of a message that has none, and given to its script as TRACEPARENT',
    example: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  },
  tracestate: {
    type: 'string',
    description: 'W3C tracestate, taken only with a traceparent header; the script gets it as TRACESTATE',
    example: 'congo=t61rcWkgMzE',
  },
};

const MSG_PARAMS = pathParams({ q: Q, id: ID });

const classicAction = (summary: string, description: string, where: string, json: Json): FastifySchema => ({
  summary,
  description: `${description} A JSON client (\`x_format=json\` in the query or the body, or \`Accept: application/json\`) gets the queue's reply instead.`,
  tags: [TAGS.messages],
  params: MSG_PARAMS,
  response: {
    200: answer("The queue's reply, to a JSON client", { json }),
    303: seeOther(where),
    404: answer('Unknown queue or message', { html: true }),
    409: answer('`409 - Couldn\'t … message. ["fail", "msg not in runnable state"].`', { text: true }),
    500: answer('The queue did not answer', { text: true }),
  },
});

export const messageSchemas = {
  newMessage: {
    summary: 'Create a message (R)',
    description:
      'The message goes to the queue of the URL. JSON answers carry the catalogue status of a refusal; `202` with `Idempotency-Key` when the queue took the ' +
      'request but its reply was lost: send the same create again with that key to learn the id. `x_format=html` answers the result page, or 303 to `back`; ' +
      'a browser form (Sec-Fetch-Mode navigate) without `back` gets 303 to the new message page, or back to the form with the refusal as a flash (Post/Redirect/Get). ' +
      'The form sends multipart: `due_at` (a datetime-local text) with `due_tz` (minutes behind UTC) becomes `due`, and `filedata` files are attached ' +
      'before the message is queued (made in prep, attached, then committed unless the mode is prep). ' +
      'An `application/json` body without a `mesg` key is the message itself, `_method` included (brightroll), answered in JSON.',
    tags: [TAGS.messages],
    params: pathParams({ q: Q }),
    headers: {
      type: 'object',
      properties: { 'idempotency-key': { type: 'string', description: 'Used when `mesg` has no idempotency_key' }, ...TRACE_HEADERS },
    },
    consumes: FORM_TYPES,
    body: formBody({
      mesg: MESG,
      x_format: { type: 'string', enum: ['json', 'html'], default: 'json' },
      back: BACK,
      due_at: {
        type: 'string',
        description: 'Due time as `YYYY-MM-DDTHH:MM[:SS]` wall-clock time (what `<input type="datetime-local">` sends); sets `due`',
        example: '2026-11-21T20:00',
      },
      due_tz: { type: 'string', description: 'Minutes behind UTC of `due_at` (JavaScript getTimezoneOffset), -840 to 840; absent: UTC', example: '-60' },
      filedata: {
        type: 'array',
        items: { type: 'string', format: 'binary' },
        description: 'Attachments (multipart, up to 20), only with the mode commit or prep',
      },
    }),
    response: {
      200: answer('Created (or the message an idempotency key names)', { json: ok(FULL_ID, FULL_ID.example), html: true }),
      202: answer('Accepted, outcome unknown: `["accepted",{"idempotency_key","text"}]`', {
        json: {
          type: 'array',
          items: {
            anyOf: [
              { type: 'string', enum: ['accepted'] },
              { type: 'object', properties: { idempotency_key: { type: 'string' }, text: { type: 'string' } } },
            ],
          },
        },
        text: true,
      }),
      303: seeOther('`back` (x_format=html), or for a browser form the new message page (or the form again, with the refusal as a flash)'),
      400: answer(`\`mesg\` is not a JSON object, a field is invalid (\`due_at\`, \`due_tz\`, files with single_que), or \`${INVALID_METHOD}\``, {
        json: FAIL,
        text: true,
        html: true,
      }),
      413: answer('An attachment is larger than max_upload_bytes', { json: FAIL, text: true }),
      404: ACTION_REFUSALS[404],
      503: answer('`503 - Service Unavailable - Operationally Down`, or the queue did not answer (nothing was created)', { json: FAIL, text: true }),
    },
  },
  newMessages: {
    summary: 'Create many messages at once',

    description:
      'The body is a JSON array of message objects (`application/json`) or one message object per line (`application/x-ndjson`, `application/jsonl`; blank lines skipped), ' +
      'up to 10,000 messages, each sent to the queue of the URL (`dest` may be left out, or name that queue; in the `relay` queue each message names where the relay takes it, ' +
      'an `http(s)://host[:port][/root]/q/<queue>` URL or `fleet:<queue>`, and one without such a dest refuses the batch). The queue checks every message before it makes any: ' +
      'one bad message refuses the whole batch with `400 ["fail", "messages[<index>]: <what is wrong>"]` and nothing is created. Otherwise the messages are made ' +
      'together under one journal fsync and the answer has one reply per message, in order. No idempotency key is added: put `idempotency_key` in each message ' +
      'to make a batch safe to send again after a lost reply (`504`). A batch made only in part (the disk filled midway) is never a 200: the status of the first ' +
      'failure (507 for a full disk) with `["fail", text, {total, done, failed, failures: [{index, reason}], ids: [{index, id}]}]`.',

    tags: [TAGS.messages],
    params: pathParams({ q: Q }),
    headers: { type: 'object', properties: TRACE_HEADERS },
    consumes: ['application/json', 'application/x-ndjson', 'application/jsonl'],
    body: { type: 'array', maxItems: 10_000, items: { type: 'object', additionalProperties: true } },
    response: {
      200: answer('Every message created: `["ok", [["ok", "<full id>"], …]]`', { json: { type: 'array' } }),

      400: answer('The body is not an array of message objects, a line is not JSON, or a message is refused (`messages[<index>]: …`): nothing was created', {
        json: FAIL,
      }),
      404: ACTION_REFUSALS[404],
      503: answer('The queue is DOWN, or did not answer (nothing was created)', { json: FAIL }),
      504: answer('The queue took the batch but did not answer in time: some messages may exist', { json: FAIL }),
      507: PARTIAL_FAILURE,
    },
  },
  messageAction: {
    summary: 'Delete, destroy, commit or cancel a message (R)',
    description: `\`_method\` delete | destroy | commit | cancel (then as \`/cancel\`). HTML answers a flash and 303; anything else is \`${INVALID_METHOD}\`.`,
    tags: [TAGS.messages],
    params: MSG_PARAMS,
    consumes: FORM_TYPES,
    body: formBody({
      _method: { type: 'string', enum: ['delete', 'destroy', 'commit', 'cancel'] },
      x_format: X_FORMAT_HTML,
      reason: { type: 'string' },
      purge: { type: 'string' },
    }),
    response: {
      200: answer("The queue's reply (x_format=json)", { json: ok({ type: 'string' }, 'msg commited') }),
      303: seeOther('the queue page (deleted, destroyed) or the message page'),
      ...ACTION_REFUSALS,
    },
  },
  clone: classicAction('Clone a message (R)', 'Flash `Message cloned successfully`, 303 to the queue page.', 'the queue page', ok(FULL_ID, FULL_ID.example)),
  runNow: classicAction(
    'Run a message now (R)',
    'Flash `Message in run successfully`, 303 to the message page.',
    'the message page',
    ok({ type: 'string' }, 'msg sent to front of run queue'),
  ),
  messageSegment: {
    summary: 'A message: its page, or `<id>.json` (R)',
    description: 'The segment is `<id>` (the HTML message page) or `<id>.json` (every field as JSON).',
    tags: [TAGS.messages],
    params: pathParams({ q: Q, id: { ...ID, description: '`<id>` or `<id>.json`', example: '20261121.1643.46.613.2164022.json' } }),
    response: { 200: answer('The message', { json: MESSAGE, html: true }), ...JSON_REFUSALS },
  },
  stateJson: {
    summary: "A message's state (R)",
    tags: [TAGS.messages],
    params: MSG_PARAMS,
    response: { 200: answer('`[<state>]`', { json: { ...STRING_LIST, example: ['done'] } }), ...JSON_REFUSALS },
  },
} satisfies Record<string, FastifySchema>;
