// OpenAPI schemas of the read-only status routes (api/status-api.ts): queue lists, status, done.json, configs, health, dashboard data.
import type { FastifySchema } from 'fastify';
import { LIST_QUERY } from './list-schemas.js';
import { ANY_OBJECT, FAIL, JSON_REFUSALS, type Json, Q, STRING_LIST, TAGS, answer, pathParams, query } from './shapes.js';

const COUNTS = {
  type: 'object',
  properties: Object.fromEntries(['prep', 'que', 'run', 'done', 'relayed', 'err'].map((s) => [s, { type: 'integer' }])),
};

const QUEUE_STATUS = {
  type: 'object',
  description:
    'UP, PAUSE, SCRIPTERROR or DISK FULL with the sizes; a DOWN queue (or one that does not answer, with 503) only `{"status":"DOWN"}`. The classic line breaks are kept.',
  required: ['status'],
  properties: {
    status: { type: 'string', example: 'UP' },
    uptime: { type: 'integer' },
    ...Object.fromEntries(['prep', 'que', 'run', 'done', 'err', 'relayed'].map((s) => [`${s}_size`, { type: 'integer' }])),
  },
};

const DASHBOARD_QUEUE = {
  type: 'object',
  additionalProperties: true,
  required: ['name', 'alive', 'builtin'],
  properties: {
    name: { type: 'string' },
    alive: { type: 'boolean', description: 'The queue process answered' },
    error: { type: 'string', description: 'Why it did not' },
    status: { type: 'string', description: 'UP, PAUSE, DOWN, SCRIPTERROR or DISK FULL' },
    reason: { type: 'string', description: 'Why a queue in SCRIPTERROR or DISK FULL runs no script' },
    uptime: { type: 'integer' },
    counts: COUNTS,
    pid: { type: 'integer', nullable: true },
    builtin: { type: 'boolean' },
    worker: { type: 'object', properties: { status: { type: 'string' }, last_exit: { type: 'string', nullable: true } } },
  },
};

const DASHBOARD = {
  type: 'object',
  additionalProperties: true,
  properties: {
    mgr: {
      type: 'object',
      additionalProperties: true,
      properties: {
        up: { type: 'boolean' },
        error: { type: 'string' },
        pid: { type: 'integer', nullable: true },
        uptime: { type: 'integer' },
        version: { type: 'string' },
        versionMismatch: { type: 'boolean' },
      },
    },
    queues: { type: 'array', items: DASHBOARD_QUEUE },
    timers: {
      type: 'object',
      description: '`{"ok":true,"timers":[…]}` or `{"ok":false,"error":"…"}`',
      properties: {
        ok: { type: 'boolean' },
        error: { type: 'string' },
        timers: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, due: { type: 'number' }, in: { type: 'integer' } } } },
      },
    },
    webVersion: { type: 'string' },
    now: { type: 'integer', description: 'Epoch milliseconds' },
  },
};

const QUEUE_HEALTH = {
  type: 'object',
  required: ['status', 'healthy'],
  properties: {
    status: {
      type: 'string',
      description: 'What the queue reports (UP, PAUSE, DOWN, SCRIPTERROR, or any other status it may report); DOWN with `fault` when it does not answer',
      example: 'UP',
    },
    healthy: { type: 'boolean', description: '`status` is one of `healthy_states` and the queue answered' },
    reason: { type: 'string', description: 'Why a queue in SCRIPTERROR or DISK FULL runs no script' },
    fault: { type: 'string', description: 'Why a queue that does not answer is DOWN (its worker state, the connection error)' },
  },
};

const HEALTH = {
  type: 'object',
  required: ['status', 'healthy_states', 'mgr', 'queues', 'checked', 'failing'],
  properties: {
    status: { type: 'string', enum: ['ok', 'fail'] },
    healthy_states: {
      ...STRING_LIST,
      description: "The queue statuses counted as healthy (`healthy_states` in config/config.json; UP, PAUSE and an operator's DOWN by default)",
    },
    mgr: { type: 'object', properties: { up: { type: 'boolean' }, error: { type: 'string' } } },
    queues: { type: 'object', description: 'Each queue by name', additionalProperties: QUEUE_HEALTH },
    checked: { ...STRING_LIST, description: 'rq-mgr and every queue' },
    failing: {
      type: 'array',
      description: 'What is not healthy, and why (empty with `ok`)',
      items: { type: 'object', properties: { name: { type: 'string' }, error: { type: 'string' } } },
    },
  },
};

const FINDING = {
  type: 'object',
  required: ['severity', 'subject', 'reason', 'fix'],
  properties: {
    severity: { type: 'string', enum: ['problem', 'info'], description: '`info`: a state an operator chose (PAUSE, DOWN); all is still well' },
    subject: { type: 'string', description: '`rq-mgr`, `scandir/<q>`, `queues/<q>`, `queue <q>`, `config/config.json` or `disk`', example: 'scandir/noexec' },
    reason: { type: 'string', example: 'scandir/noexec/run is not executable' },
    fix: { type: 'string', example: 'chmod +x /srv/apps/noexec/run' },
  },
};

const DOCTOR = {
  type: 'object',
  required: ['ok', 'mgr', 'running', 'findings'],
  properties: {
    ok: { type: 'boolean', description: 'No finding of severity `problem`' },
    mgr: { type: 'boolean', description: 'rq-mgr answered; when it did not, that is the one finding' },
    running: { type: 'integer', description: 'Queues whose process runs and reports UP' },
    findings: { type: 'array', items: FINDING },
  },
};

const QUEUE_CONFIG = {
  ...ANY_OBJECT,
  description: 'A queue config (name, script, num_workers, …); a `basic_auth` key is never served',
  example: { name: 'test', script: '/srv/rq/scripts/test/run', num_workers: 1 },
};

const mgrDown = (what: string): Json => answer(`rq-mgr did not answer: ${what}`, { json: FAIL, text: true });

export const statusSchemas = {
  dashboardJson: {
    summary: 'What the dashboard redraws when GET /events tells of a move',
    tags: [TAGS.status],
    response: { 200: answer('rq-mgr, every queue and the timers (`Cache-Control: no-store`)', { json: DASHBOARD }) },
  },
  healthz: {
    summary: 'Health: rq-mgr answers and every queue is in a healthy state',
    tags: [TAGS.status],
    response: {
      200: answer('rq-mgr answers and every queue is in one of `healthy_states`', { json: HEALTH }),
      503: answer('rq-mgr or a queue is not (DOWN by fault, SCRIPTERROR, …), or this fleet host is refused its name; `failing` names it', { json: HEALTH }),
    },
  },
  doctorJson: {
    summary: 'Every scandir entry and queue not running as it should, with the reason and the fix (`rq doctor`)',
    tags: [TAGS.status],
    response: { 200: answer('The list (`Cache-Control: no-store`); the dashboard shows it as "Needs attention"', { json: DOCTOR }) },
  },
  listTxt: {
    summary: 'Queue list as text (`q/<name>.txt` lines)',
    tags: [TAGS.status],
    response: { 200: answer('One line per queue known to rq-mgr, then an empty line', { text: true }), 503: mgrDown('`503 - QueueMgr not running`') },
  },
  listJson: {
    summary: 'Queue names',
    tags: [TAGS.status],
    response: {
      200: answer('The queues rq-mgr knows', { json: { ...STRING_LIST, example: ['test', 'relay'] } }),
      503: mgrDown('`["fail","QueueMgr not running"]`'),
    },
  },
  queueSegment: {
    summary: 'A queue: its page, `<q>.txt` or `<q>.json` status',
    description: 'The segment is `<q>` (the HTML queue page), `<q>.json` (status as JSON) or `<q>.txt` (the classic text).',
    tags: [TAGS.status],
    params: pathParams({ q: { ...Q, description: '`<queue>`, `<queue>.json` or `<queue>.txt`', example: 'test.json' } }),
    // The page's list parameters (openapi/list-schemas.ts): ignored by `.json` and `.txt`.
    querystring: query(LIST_QUERY),
    response: {
      200: answer('The status (`.json`, `.txt`) or the page', { json: QUEUE_STATUS, text: true, html: true }),
      404: answer('Unknown queue', { json: FAIL, html: true }),
      503: answer('The queue process did not answer: shown DOWN (`X-RQ-Error` says why)', { json: QUEUE_STATUS, text: true }),
    },
  },
  doneJson: {
    summary: 'Newest done message ids',
    tags: [TAGS.status],
    params: pathParams({ q: Q }),
    querystring: query({ limit: { type: 'integer', minimum: 0, default: 10, description: 'How many, newest first' } }),
    response: { 200: answer('Full ids, newest first', { json: { ...STRING_LIST, example: ['20261121.1643.54.010.2164107'] } }), ...JSON_REFUSALS },
  },
  configFile: {
    summary: "The queue's config.json as stored",
    tags: [TAGS.status],
    params: pathParams({ q: Q }),
    response: { 200: answer('The file (a symlink is followed); without secrets', { json: QUEUE_CONFIG }), 404: JSON_REFUSALS[404] },
  },
  liveConfig: {
    summary: 'The config the queue process runs with (R)',
    tags: [TAGS.status],
    params: pathParams({ q: Q }),
    response: { 200: answer('The live config', { json: QUEUE_CONFIG }), ...JSON_REFUSALS },
  },
} satisfies Record<string, FastifySchema>;
