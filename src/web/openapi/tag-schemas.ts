// OpenAPI schemas of the tag routes (api/tag-api.ts, rq-beyond §B9): tag a message, cancel_tagged, one queue's tags, lookups across queues.
import type { FastifySchema } from 'fastify';
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
  TAG,
  TAGS,
  X_FORMAT_HTML,
  answer,
  listOf,
  formBody,
  ok,
  pathParams,
  query,
  seeOther,
} from './shapes.js';

const TAG_LIST = { ...STRING_LIST, description: 'Comma-separated, an array (`add[]=a&add[]=b`), or a JSON array' };

const ENTRY = {
  msg_id: { type: 'string' },
  state: { type: 'string' },
  status: { type: 'string' },
  due: { type: 'number' },
  priority: { type: 'integer' },
  tagged_at: { type: 'string', format: 'date-time' },
};

const QUEUE_PAGE = {
  type: 'object',
  additionalProperties: true,
  properties: {
    total: { type: 'integer', description: 'Messages with the tag (in `state`, when given)' },
    messages: listOf(ENTRY, 'Most recently tagged first'),
    gone: { ...STRING_LIST, description: "Ids found deleted behind the queue's back" },
  },
};

const EVERYWHERE_MESSAGES = listOf({ ...ENTRY, queue: { type: 'string' } });

const EVERYWHERE = {
  type: 'object',
  additionalProperties: true,
  properties: {
    total: { type: 'integer' },
    messages: EVERYWHERE_MESSAGES,
    gone: { ...STRING_LIST, description: '`<queue>/<id>` refs found deleted' },
    unavailable: { ...STRING_LIST, description: 'Queues left out: not running, no answer within 3 s, or refused' },
  },
};

const TRACKED = {
  type: 'object',
  additionalProperties: true,
  properties: {
    messages: EVERYWHERE_MESSAGES,
    expired: { ...STRING_LIST, description: 'The gone refs' },
    total: { type: 'integer' },
    unavailable: STRING_LIST,
  },
};

function pageQuery(across: boolean): Json {
  return query({
    state: { type: 'string', enum: ['prep', 'que', 'run', 'done', 'relayed', 'err'] },
    offset: { type: 'integer', minimum: 0, description: across ? 'offset + limit at most 1000 across queues' : '0-10000000' },
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 25 },
    x_format: { type: 'string', enum: ['html'], description: 'The HTML view of a tag that itself ends in `.json`' },
  });
}

const TAG_SEGMENT = { ...TAG, description: '`<tag>` (the HTML view) or `<tag>.json`', example: 'nightly.json' };

export const tagSchemas = {
  tagMessage: {
    summary: 'Add and remove tags of a message (R)',
    description:
      'Adding a tag the message has, or removing one it lacks, is a no-op. HTML: the flash `Tags updated: a, b` and 303 to `back` or the message page.',
    tags: [TAGS.tags],
    params: pathParams({ q: Q, id: ID }),
    consumes: FORM_TYPES,
    body: formBody({ add: TAG_LIST, remove: TAG_LIST, x_format: X_FORMAT_HTML, back: BACK }),
    response: {
      200: answer("The message's new tag list (x_format=json)", { json: ok(STRING_LIST, ['nightly', 'customer:42']) }),
      303: seeOther('`back` or the message page'),
      ...ACTION_REFUSALS,
    },
  },
  cancelTagged: {
    summary: 'Cancel every unfinished message of the queue with a tag (R)',
    description:
      'Prep, que and running messages, each as a cancel; finished ones are left alone. HTML: the flash `<n> messages cancelled` and 303 to `back` or the queue page.',
    tags: [TAGS.tags],
    params: pathParams({ q: Q }),
    consumes: FORM_TYPES,
    body: formBody({ tag: TAG, reason: { type: 'string', description: 'At most 1000 characters' }, x_format: X_FORMAT_HTML, back: BACK }),
    response: {
      200: answer('How many were cancelled (x_format=json)', { json: ok({ type: 'integer' }, 9) }),
      303: seeOther('`back` or the queue page'),
      ...ACTION_REFUSALS,
      507: PARTIAL_FAILURE,
    },
  },
  queueTagsJson: {
    summary: "How many of the queue's messages carry each tag (R)",
    tags: [TAGS.tags],
    params: pathParams({ q: Q }),
    response: {
      200: answer('tag → count', { json: { type: 'object', additionalProperties: { type: 'integer' }, example: { nightly: 12, track: 2 } } }),
      ...JSON_REFUSALS,
    },
  },
  queueTagged: {
    summary: "One page of the queue's messages with a tag: `<tag>.json`, or the HTML view (R)",
    tags: [TAGS.tags],
    params: pathParams({ q: Q, tag: TAG_SEGMENT }),
    querystring: pageQuery(false),
    response: { 200: answer('The page (JSON), or the tag view with the cancel_tagged form', { json: QUEUE_PAGE, html: true }), ...JSON_REFUSALS },
  },
  tagged: {
    summary: 'Messages with a tag across every queue: `<tag>.json`, or the HTML view',
    description: 'Merged most recently tagged first; a queue that does not answer is named in `unavailable` and the answer is still 200.',
    tags: [TAGS.tags],
    params: pathParams({ tag: TAG_SEGMENT }),
    querystring: pageQuery(true),
    response: {
      200: answer('The merged page, or the HTML view', { json: EVERYWHERE, html: true }),
      400: answer('A bad tag or page parameter', { json: FAIL, text: true }),
    },
  },
  trackedJson: {
    summary: 'Tracked messages (the tag `track`) across every queue',
    tags: [TAGS.tags],
    querystring: pageQuery(true),
    response: { 200: answer("What the dashboard's `#tracked` redraws (`Cache-Control: no-store`)", { json: TRACKED }), 400: JSON_REFUSALS[400] },
  },
} satisfies Record<string, FastifySchema>;
