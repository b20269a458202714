// OpenAPI schemas of the HTML pages that are only pages (pages/*.ts): the dashboard and the two forms.
import type { FastifySchema } from 'fastify';
import { Q, TAGS, answer, pathParams } from './shapes.js';

const PAGE = answer('The page', { html: true });

export const pageSchemas = {
  dashboard: { summary: 'Dashboard', tags: [TAGS.pages], response: { 200: PAGE } },
  newQueueForm: { summary: 'New Queue form', tags: [TAGS.pages], response: { 200: PAGE } },
  newMessageForm: {
    summary: 'New Message form (honours form.json)',
    tags: [TAGS.pages],
    params: pathParams({ q: Q }),
    response: { 200: PAGE, 404: answer('Unknown queue', { html: true }), 500: answer('`500 - Bad overrides file: …`', { text: true }) },
  },
} satisfies Record<string, FastifySchema>;
