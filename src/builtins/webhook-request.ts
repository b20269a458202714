// What the webhook queue posts (spec §12.2): an rq new_message for rq URLs (drudru), the message as JSON otherwise (brightroll).
import { RqError, invalidField, shown } from '../errors.js';

export interface WebhookRequest {
  url: string;
  /** `rq`: urlencoded x_format=json&mesg=… to an rq/RQ new_message endpoint; `json`: the message itself. */
  kind: 'rq' | 'json';
  contentType: string;
  body: string;
}

const MESG_FIELDS = ['src', 'param1', 'param2', 'param3', 'param4', 'orig_msg_id'] as const;

/**
 * From RQ_PARAM1 (the URL) and RQ_PARAM2 (the finished message as JSON, msg_id = its full id,
 * state = its final state). A URL whose path ends in /new_message is an rq queue: a message
 * with the same src, params and orig_msg_id is created there, dest = the URL's path without
 * its last segment (`/q/<target>`), as the classic script does.
 */
export function webhookRequest(url: string, payload: string): WebhookRequest {
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    throw invalidField('param1', 'the webhook URL (http:// or https://)', url);
  }
  if (parsedUrl.protocol !== 'http:' && parsedUrl.protocol !== 'https:') {
    throw invalidField('param1', 'the webhook URL (http:// or https://)', url);
  }
  let msg: unknown;
  try {
    msg = JSON.parse(payload);
  } catch {
    throw RqError.of('RQ_ERR_INVALID_JSON', `param2: expected the finished message as JSON, received ${shown(payload)}`);
  }
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
    throw RqError.of('RQ_ERR_INVALID_JSON', `param2: expected the finished message as a JSON object, received ${shown(payload)}`);
  }
  const fields = msg as Record<string, unknown>;
  const pathname = parsedUrl.pathname.replace(/\/+$/, '');
  if (pathname.endsWith('/new_message')) {
    const mesg: Record<string, unknown> = {};
    for (const f of MESG_FIELDS) if (fields[f] !== undefined && fields[f] !== null) mesg[f] = fields[f];
    mesg.dest = pathname.slice(0, pathname.lastIndexOf('/'));
    return {
      url,
      kind: 'rq',
      contentType: 'application/x-www-form-urlencoded',
      body: new URLSearchParams({ x_format: 'json', mesg: JSON.stringify(mesg) }).toString(),
    };
  }
  return { url, kind: 'json', contentType: 'application/json', body: JSON.stringify(fields) };
}
