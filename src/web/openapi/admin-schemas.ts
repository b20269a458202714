// OpenAPI schemas of the operator's form posts on queues (api/admin-api.ts): adminoper, restart, ack_errs, new_queue (+ _link), delete_queue.
import type { FastifySchema } from 'fastify';
import { NEW_QUEUE_FORBIDDEN } from '../api/admin-api.js';
import { BACK, FAIL, FORM_TYPES, JSON_REFUSALS, type Json, Q, TAGS, answer, formBody, ok, pathParams, seeOther } from './shapes.js';

/** These answer the classic texts only: no JSON form. */
const couldNot = (what: string): Json =>
  answer(`\`<status> - Couldn't ${what}. <reply>.\`, or \`500 - … Internal error.\` when nobody answers`, { text: true });

function queueAction(summary: string, description: string, fields: Record<string, Json>, what: string, json: Json): FastifySchema {
  return {
    summary,
    description: `${description} A JSON client (\`x_format=json\`, or \`Accept: application/json\`) gets \`["ok", …]\` instead of the 303.`,
    tags: [TAGS.admin],
    params: pathParams({ q: Q }),
    consumes: FORM_TYPES,
    body: formBody({ ...fields, back: BACK }),
    response: {
      200: answer('What was done, to a JSON client', { json }),
      303: seeOther('`back` or the queue page'),
      404: answer('Unknown queue', { html: true }),
      500: couldNot(what),
    },
  };
}

const QUEUE_FIELDS = {
  'queue[name]': { type: 'string' },
  'queue[script]': { type: 'string', description: 'A file inside one of `script_dirs`' },
  'queue[num_workers]': { type: 'string' },
  'queue[exec_prefix]': { type: 'string', description: 'Refused unless the config sets `allow_exec_prefix`' },
  'queue[coalesce_params][]': { type: 'array', items: { type: 'string' } },
  'queue[blocking_params][]': { type: 'array', items: { type: 'string' } },
};

/** A name this root's socket paths cannot hold (docs/operations.md, "How long a queue name may be"). */
const tooLong = (field: string) =>
  answer(
    `\`400 - ${field}: expected at most <n> characters for this root (socket path queues/<q>/events.sock must fit in 107 bytes), received <m> characters\``,
    { text: true },
  );

/** To a JSON client (`x_format=json`, a JSON body, `Accept: application/json`) the queue forms answer rq-mgr's reply instead of the 303. */
const toJsonClient = (text: string) => answer(`To a JSON client: \`["ok", "${text}"]\` instead of the 303`, { json: ok({ type: 'string' }, text) });

const forbidden = answer(`\`${NEW_QUEUE_FORBIDDEN}\` (allow_new_queue is off), or a file outside \`script_dirs\``, { text: true });

export const adminSchemas = {
  adminoper: queueAction(
    'Pause, resume, down or up a queue',
    'Exactly one of `pause`, `resume`, `down`, `up` (any non-empty value); none, or all four, is `400 - Invalid adminoper param: …`. Flash `Queue <q> paused` (`resumed`, `stopped`, `started`).',
    { pause: { type: 'string' }, resume: { type: 'string' }, down: { type: 'string' }, up: { type: 'string' } },
    '<action> queue',
    ok({ type: 'string' }, 'queue test paused'),
  ),
  restart: queueAction(
    'Restart a queue process',
    'Waits for the old process to stop. Flash `Queue <q> restarted`.',
    {},
    'restart queue',
    ok({ type: 'string' }, 'queue test restarted'),
  ),
  ackErrs: queueAction(
    'Acknowledge every error of a queue (R)',
    'Renames every `err/<id>` to `err/.<id>`. Flash `Successfully acknowledged errors`.',
    {},
    'ack errs queue',
    ok({ type: 'integer', description: 'How many were acknowledged' }, 3),
  ),
  newQueue: {
    summary: 'Create a queue',
    description: 'Only with `"allow_new_queue": true`. The next page shows `We got … from form, and … from QueueMgr`.',
    tags: [TAGS.admin],
    consumes: FORM_TYPES,
    body: formBody(QUEUE_FIELDS),
    response: {
      200: toJsonClient('queue created - awesome'),
      303: seeOther("the new queue's page"),
      400: tooLong('queue[name]'),
      403: forbidden,
      409: answer('To a JSON client: the queue exists already', { json: FAIL }),
      503: JSON_REFUSALS[503],
    },
  },
  newQueueLink: {
    summary: 'Create a queue whose config.json links to a file',
    description: 'Only with `"allow_new_queue": true`; the file, and the script it names, must be inside `script_dirs`.',
    tags: [TAGS.admin],
    consumes: FORM_TYPES,
    body: formBody({ 'queue[json_path]': { type: 'string' } }),
    response: {
      200: toJsonClient('queue created - awesome'),
      303: seeOther("the new queue's page"),
      400: tooLong('name of <json_path>'),
      403: forbidden,
      404: answer("`Couldn't parse json file (<path>).`", { html: true }),
    },
  },
  deleteQueue: {
    summary: 'Delete a queue',
    description: 'Its directory moves to `queues/.trash/`.',
    tags: [TAGS.admin],
    consumes: FORM_TYPES,
    body: formBody({ queue_name: { type: 'string' } }),
    response: {
      200: toJsonClient('started deleting queue'),
      303: seeOther('the dashboard'),
      400: answer('No `queue_name`', { text: true, json: FAIL }),
      404: answer('To a JSON client: `["fail", "no such queue"]`', { json: FAIL }),
      503: JSON_REFUSALS[503],
    },
  },
} satisfies Record<string, FastifySchema>;
