// The pieces every route's OpenAPI schema is made of: path parameters, the x_format switch, the classic replies.
import type {} from '@fastify/swagger';

export type Json = Record<string, unknown>;

/** Operation groups of the document, in the order the UI lists them. */
export const TAGS = {
  status: 'status',
  messages: 'messages',
  lifecycle: 'lifecycle',
  tags: 'tags',
  depends: 'dependencies and limits',
  files: 'attachments and logs',
  admin: 'queue administration',
  observability: 'statistics, metrics, events and search',
  pages: 'HTML pages',
} as const;

export const TAG_DESCRIPTIONS: Record<(typeof TAGS)[keyof typeof TAGS], string> = {
  status: 'Queue lists, queue status, health and what the dashboard redraws',
  messages: 'Create, read, commit, delete, clone and run messages (spec §9.3, §9.6)',
  lifecycle: 'Cancel, requeue, reschedule and re-prioritise; history, running and waiting (rq-beyond §B1.11)',
  tags: 'Tag messages and look them up, in one queue or across all (rq-beyond §B9)',
  'dependencies and limits': 'Stop waiting on dependencies; the concurrency-limit table (rq-beyond §B8, §B12)',
  'attachments and logs': 'Upload, delete and download attachments; job logs and their live tail',
  'queue administration': 'Pause, resume, down, up, restart, acknowledge errors, create and delete queues (form posts, answered with 303)',
  'statistics, metrics, events and search':
    'Per-queue statistics and failure groups, Prometheus metrics, the live event stream, search across states (rq-beyond §B15, §B16; docs/observability.md)',
  'HTML pages': 'The operator UI; documented so that the table of routes is complete',
};

// ── Path and query parameters ─────────────────────────────────────────────────

export const Q = { type: 'string', description: 'A queue name (letters, digits, `_`, `-`)', example: 'test' };
export const ID = { type: 'string', description: 'A short message id; an acknowledged error keeps its leading dot', example: '20261121.1643.46.613.2164022' };
export const TAG = { type: 'string', description: '1-64 characters from `A-Z a-z 0-9 . _ : @ + -`, starting with a letter or digit', example: 'nightly' };
export const FILE = { type: 'string', description: 'A plain file name of `job/` (no separators, no leading dot)', example: 'stdio.log' };
export const NAME = { type: 'string', description: 'An attachment name (no separators, no leading dot)', example: 'a.txt' };

/** A `params` or `querystring` schema; path parameters are all required. */
export function pathParams(props: Record<string, Json>): Json {
  return { type: 'object', required: Object.keys(props), properties: props };
}

export function query(props: Record<string, Json>): Json {
  return { type: 'object', properties: props };
}

export const X_FORMAT_HTML = {
  type: 'string',
  enum: ['html', 'json'],
  default: 'html',
  description: "`json`: answer with the queue's reply and its status; `html`: a flash and 303",
};
export const BACK = { type: 'string', description: 'Where the 303 leads: a path or URL of this server (anything else is ignored)' };

/** Query parameters, form fields and JSON keys are merged (the body wins), so each action takes any of the three. */
export const FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data', 'application/json'];

/** An action's body: the named fields, nothing required by the schema (the handler names what is missing). */
export function formBody(props: Record<string, Json>): Json {
  return { type: 'object', properties: props, additionalProperties: true };
}

// ── Reply bodies ──────────────────────────────────────────────────────────────

/** OpenAPI 3.0 has no tuples: a two-element array whose first element is the word. */
function pair(word: string, value: Json, example: unknown[]): Json {
  return { type: 'array', minItems: 2, maxItems: 2, items: { anyOf: [{ type: 'string', enum: [word] }, value] }, example };
}

export const FAIL = {
  ...pair('fail', { type: 'string' }, ['fail', 'msg not found']),
  description: '`["fail", "<text>"]`: the refusal, with the catalogue status of the reply',
};

/** `["fail", text, report]`: an operation over many messages that failed on some (docs/http-api.md, Partial failures). */
export const PARTIAL: Json = {
  type: 'array',
  minItems: 3,
  maxItems: 3,
  items: { anyOf: [{ type: 'string' }, { type: 'object', additionalProperties: true }] },
  example: [
    'fail',
    '1 of 2 messages were not created (messages[1]: create message failed: ENOSPC: no space left on device, write)',
    {
      total: 2,
      done: 1,
      failed: 1,
      failures: [{ index: 1, reason: 'create message failed: ENOSPC: no space left on device, write' }],
      ids: [{ index: 0, id: 'http://127.0.0.1:3333/q/test/20261201.2148.52.004.2146881' }],
    },
  ],
  description:
    '`["fail", "<f> of <n> messages were not <verb> (…)", {total, done, failed, failures: [{index | id, reason}], failures_cut?, ids?}]`, with the status of the first failure',
};

/** The answer of an operation over many messages that failed on some: never 2xx, the first failure's status (507 a full disk). */
export const PARTIAL_FAILURE = answer(
  'Done in part (a full disk, say): the status of the first failure, `["fail", text, report]` naming each message that failed',
  { json: PARTIAL, text: true },
);

export function ok(value: Json, example: unknown): Json {
  return { ...pair('ok', value, ['ok', example]), description: '`["ok", <value>]`: the queue\'s reply' };
}

export const STRING_LIST = { type: 'array', items: { type: 'string' } };

/** An object that may carry more than the properties listed (replies grow; a client keeps what it knows). */
export function openObject(properties: Record<string, Json>, description?: string): Json {
  return { type: 'object', additionalProperties: true, ...(description ? { description } : {}), properties };
}

/** A list of open objects. */
export function listOf(properties: Record<string, Json>, description?: string, itemDescription?: string): Json {
  return { type: 'array', ...(description ? { description } : {}), items: openObject(properties, itemDescription) };
}
export const ANY_OBJECT = { type: 'object', additionalProperties: true };

// ── Responses ─────────────────────────────────────────────────────────────────

type Media = { json?: Json; text?: boolean; html?: boolean; events?: boolean; bytes?: boolean };

/** One response, in the media types the route answers it with. */
export function answer(description: string, media: Media): Json {
  const content: Json = {};
  if (media.json) content['application/json'] = { schema: media.json };
  if (media.text) content['text/plain'] = { schema: { type: 'string' } };
  if (media.html) content['text/html'] = { schema: { type: 'string' } };
  if (media.events) content['text/event-stream'] = { schema: { type: 'string' } };
  if (media.bytes) content['application/octet-stream'] = { schema: { type: 'string', format: 'binary' } };
  return { description, content };
}

/** A 303 See Other: the classic answer of a form post, with a flash for the next page. */
export function seeOther(where: string): Json {
  return {
    type: 'null',
    description: `303 to ${where}, with a flash for the next page`,
    headers: { Location: { type: 'string', description: 'An absolute URL of this server' } },
  };
}

/** The refusals of a JSON route: `["fail", …]` with the catalogue status. */
export const JSON_REFUSALS = {
  400: answer('A bad parameter, named with what was expected and received', { json: FAIL }),
  404: answer('Unknown queue or message', { json: FAIL, html: true }),
  503: answer('rq-mgr or the queue process did not answer', { json: FAIL }),
};

/** The refusals of an action answered as JSON (`x_format=json`) or as the classic text (html). */
export const ACTION_REFUSALS = {
  400: answer('A bad parameter, or a refusal of no known code', { json: FAIL, text: true }),
  404: answer('Unknown queue or message', { json: FAIL, html: true }),
  409: answer('The message is in the wrong state', { json: FAIL, text: true }),
  503: answer('The queue is DOWN or did not answer', { json: FAIL, text: true }),
};
