// Locating a message's directory through its queue, and the files under it a URL may name.
import path from 'node:path';
import { RqError, shown } from '../errors.js';
import type { WebContext } from './web-context.js';

export interface MessageView {
  msg_id: string;
  path: string;
  state: string;
  status: string;
  _attachments?: Record<string, { md5: string; size: number; path: string }>;
  [key: string]: unknown;
}

/** get_message through the queue; 404 when the queue says the message is not there (or is DOWN). */
export async function getMessage(ctx: WebContext, queue: string, id: string): Promise<MessageView> {
  const reply = await ctx.ask(queue, 'get_message', { msg_id: id });
  if (Array.isArray(reply) && reply[0] === 'ok' && typeof reply[1] === 'object' && reply[1] !== null) return reply[1] as MessageView;
  const why = Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : shown(reply);
  throw new RqError('RQ_ERR_MSG_NOT_FOUND', `Message not found: ${queue}/${id} (${why})`);
}

/** The message directory as an absolute path, refusing anything the queue reports outside queues/. */
export function messageDir(ctx: WebContext, msg: MessageView): string {
  const dir = path.resolve(ctx.deps.root, String(msg.path));
  if (!dir.startsWith(ctx.paths.queues + path.sep)) throw new RqError('RQ_ERR_PATH_ESCAPES_ROOT', `message path ${shown(msg.path)} is outside ${ctx.paths.queues}`);
  return dir;
}

/**
 * A single file name from a URL (log file, attachment): no separators, no dot-files, no control
 * bytes, so joining it to a directory can never leave that directory. 404 otherwise.
 */
export function requireFileName(name: string, what: string): string {
  // eslint-disable-next-line no-control-regex
  if (name === '' || name.length > 255 || name.startsWith('.') || /[/\\\u0000-\u001f\u007f]/.test(name)) {
    throw new RqError('RQ_ERR_NOT_FOUND', `${what} not found: expected a plain file name, received ${shown(name)}`);
  }
  return name;
}
