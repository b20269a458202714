// OpenAPI schemas of the observability routes (docs/observability.md): search (brightroll), and, as they land, statistics, metrics and events.
import type { FastifySchema } from 'fastify';
import { JSON_REFUSALS, TAGS, answer, query } from './shapes.js';

const SEARCHED = {
  type: 'array',
  description: 'Newest first: each message\'s short fields (values over 256 characters cut), its `state` and `msg_id`; the total is in `X-Total-Count`',
  items: { type: 'object', additionalProperties: true, properties: { msg_id: { type: 'string' }, state: { type: 'string' } } },
};

export const observabilitySchemas = {
  search: {
    summary: "Search one queue's messages in every state (brightroll /search)",
    description:
      '`query[<field>]=<text>` (up to 8, all must match) contains — or, with `exact`, equals — the field; `text` must be contained in any field. Answered from the queue\'s search index (built on first use). `x_format=html` renders the results page.',
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
