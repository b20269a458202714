// A new committed message copied from another (clone, dup): its attachments hard-linked in prep before it shows in que/.
import type { CreateFields, Message } from '../message/message.js';
import { linkAttachments } from './attachments.js';
import { diskError } from './create.js';
import type { QueueSpool } from './queue-spool.js';

/** Without attachments (`fromDir` null) the copy is created committed; with them, in prep, linked, then committed, or removed. */
export async function createCopy(
  spool: QueueSpool,
  fields: CreateFields,
  fromDir: string | null,
  extra?: Partial<Message>,
  before?: (id: string) => Promise<void>,
): Promise<Message> {
  const msg = await spool.create(fields, { commit: fromDir === null, extra, before });
  if (fromDir === null) return msg;
  try {
    await linkAttachments(fromDir, spool.msgDir('prep', msg.msg_id), spool.dirSync, spool.fs);
    await spool.commit(msg.msg_id);
  } catch (err) {
    await spool.remove('prep', msg.msg_id).catch(() => undefined);
    throw diskError('link attachments', err);
  }
  return msg;
}
