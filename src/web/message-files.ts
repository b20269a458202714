// Locating a message's directory through its queue, and the files under it a URL may name.
import path from 'node:path';
import { RqError, shown } from '../errors.js';
import type { MessageView } from '../message/message.js';
import type { WebContext } from './web-context.js';

export type { MessageView } from '../message/message.js';

/** get_message through the queue; 404 when the queue says the message is not there (or is DOWN). */
export async function getMessage(ctx: WebContext, queue: string, id: string): Promise<MessageView> {
  const r = await ctx.queue(queue).get(id);
  if (r.ok) return r.value;
  const why = r.code === 'RQ_ERR_PROTOCOL' ? shown(r.raw) : r.text;
  throw RqError.of('RQ_ERR_MSG_NOT_FOUND', `${queue}/${id} (${why})`);
}

/** The message directory as an absolute path, refusing anything the queue reports outside queues/. */
export function messageDir(ctx: WebContext, msg: MessageView): string {
  const dir = path.resolve(ctx.deps.root, String(msg.path));
  if (!dir.startsWith(ctx.paths.queues + path.sep)) throw RqError.of('RQ_ERR_PATH_ESCAPES_ROOT', shown(msg.path), ctx.paths.queues);
  return dir;
}

/**
 * A single file name from a URL (log file, attachment): no separators, no dot-files, no control
 * bytes, so joining it to a directory can never leave that directory. 404 otherwise.
 */
export function requireFileName(name: string, what: string): string {
  if (name === '' || name.length > 255 || name.startsWith('.') || /[/\\\u0000-\u001f\u007f]/.test(name)) {
    throw RqError.of('RQ_ERR_FILE_NOT_FOUND', what, `: expected a plain file name, received ${shown(name)}`);
  }
  return name;
}
