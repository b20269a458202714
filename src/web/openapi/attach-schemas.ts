// OpenAPI schemas of the attachment and log routes (api/attach-api.ts, api/tail-events.ts, pages/tail-page.ts): upload, delete, download, live tail.
import type { FastifySchema } from 'fastify';
import { INVALID_METHOD } from '../api/message-api.js';
import { ACTION_REFUSALS, FAIL, FILE, FORM_TYPES, ID, NAME, Q, TAGS, X_FORMAT_HTML, answer, formBody, ok, pathParams, query, seeOther } from './shapes.js';

const MSG_PARAMS = pathParams({ q: Q, id: ID });

const download = (summary: string, what: Record<string, unknown>): FastifySchema => ({
  summary,
  description: 'Raw bytes typed by extension (`.log` ⇒ `text/plain`; HTML, SVG and XML are sent as text), with `Last-Modified` and one `Range`.',
  tags: [TAGS.files],
  params: pathParams({ q: Q, id: ID, ...what }),
  headers: { type: 'object', properties: { range: { type: 'string', example: 'bytes=0-9' } } },
  response: {
    200: answer('The file', { bytes: true, text: true }),
    206: answer('The range asked for (`Content-Range`)', { bytes: true, text: true }),
    404: answer('Unknown queue, message or file', { html: true }),
    416: answer('`Byte range unsatisfiable` (`Content-Range: bytes */<size>`)', { text: true }),
  },
});

const tailPage = (summary: string, what: Record<string, unknown>): FastifySchema => ({
  summary,
  description: 'A dark `<pre>` fed by the event stream, ANSI colours rendered, following the bottom.',
  tags: [TAGS.pages],
  params: pathParams({ q: Q, id: ID, ...what }),
  response: { 200: answer('The tail page', { html: true }), 404: answer('Unknown queue, message or file', { html: true }) },
});

export const attachSchemas = {
  attachNew: {
    summary: 'Upload an attachment to a prep message (R)',
    description:
      'Multipart with the file field `filedata`, streamed to disk. HTML: flash `Attached message successfully`, 303 to the message page; a refusal is `Commit <q>/<id> got [...]`.',
    tags: [TAGS.files],
    params: MSG_PARAMS,
    querystring: query({ x_format: X_FORMAT_HTML }),
    consumes: ['multipart/form-data'],
    body: formBody({ filedata: { type: 'string', format: 'binary' }, x_format: X_FORMAT_HTML }),
    response: {
      200: answer('`["ok","<md5>-Attached successfully"]` (x_format=json)', {
        json: ok({ type: 'string' }, '14a1a7845cc7f981977fbba6a60f0e42-Attached successfully'),
      }),
      303: seeOther('the message page'),
      ...ACTION_REFUSALS,
      404: answer('Unknown queue or message, no `filedata` file, or not in prep (`["fail","cannot find message"]`)', { json: FAIL, html: true, text: true }),
      413: answer('Upload too large (max_upload_bytes)', { json: FAIL, text: true }),
    },
  },
  attachDelete: {
    summary: 'Delete an attachment (R)',
    description: `\`_method=delete\`; anything else is \`${INVALID_METHOD}\`. HTML: flash \`Attachment deleted successfully\`, 303 to the message page.`,
    tags: [TAGS.files],
    params: pathParams({ q: Q, id: ID, name: NAME }),
    consumes: FORM_TYPES,
    body: formBody({ _method: { type: 'string', enum: ['delete'] }, x_format: X_FORMAT_HTML }),
    response: {
      200: answer('`["ok","Attachment deleted successfully"]`, or `[false,"No attachment with that named for msg"]` (x_format=json)', {
        json: { type: 'array', example: ['ok', 'Attachment deleted successfully'] },
      }),
      303: seeOther('the message page'),
      ...ACTION_REFUSALS,
    },
  },
  attachGet: download('Download an attachment (R)', { name: NAME }),
  logGet: download("Download a job's log file (R)", { file: FILE }),
  logEvents: {
    summary: 'Live tail of a job log (server-sent events) (R)',
    description:
      '`retry`, then `state` (`{state, status}`, at each move and at each progress line of a run) and `log` events (`id` is the byte offset after the data, a JSON string of UTF-8 text) as the file grows, until `end` ' +
      'when the message reaches done, relayed or err. Resumes from `Last-Event-ID`.',
    tags: [TAGS.files],
    params: pathParams({ q: Q, id: ID, file: FILE }),
    querystring: query({ offset: { type: 'integer', minimum: 0, default: 0, description: "Byte to start from; past the log's end, its end" } }),
    headers: { type: 'object', properties: { 'last-event-id': { type: 'string', description: 'Wins over `offset`' } } },
    response: {
      200: answer('The event stream', { events: true }),
      400: answer('A bad offset', { text: true }),
      404: answer('Unknown queue, message or bad file name, or a log file a finished message does not have (before the stream starts)', { html: true }),
    },
  },
  tailviewAttach: tailPage('Tail page of an attachment (R)', { name: NAME }),
  tailviewLog: tailPage('Tail page of a job log (R)', { file: FILE }),
} satisfies Record<string, FastifySchema>;
