// A new message with files from the new-message form: made in prep, each file attached as attach/new does, then committed when the form asked for commit.
import type { Answer } from '../../ipc/answer.js';
import { answer, isString } from '../../ipc/answer.js';
import { parseFullId } from '../../message/message-id.js';
import { attachmentNameProblem } from '../../message/names.js';
import type { Upload } from '../upload.js';
import type { WebContext } from '../web-context.js';

const refused = (text: string): Answer<string> => answer(['fail', text], isString);

/**
 * Attachments exist only on prep messages (spec §9.6 attach/new), so a commit with files is a prep,
 * its attaches, then its commit: the script never sees the message without its files. A file the queue
 * refuses deletes the half-made message, and the answer names the file. Names are checked before
 * anything is made. The caller removes the temp files.
 */
export async function createWithAttachments(ctx: WebContext, q: string, fields: object, mode: 'commit' | 'prep', files: readonly Upload[]): Promise<Answer<string>> {
  for (const f of files) {
    const problem = attachmentNameProblem(f.filename);
    if (problem) return refused(`attachment ${f.filename}: ${problem}`);
  }
  const client = ctx.queue(q);
  const made = await client.create(fields, 'prep_message');
  if (!made.ok) return made;
  const id = parseFullId(made.value)?.id;
  if (id === undefined) return refused(`queue ${q} answered an id of no known shape: ${made.value}`);
  for (const f of files) {
    const r = await client.attach(id, f.tmpPath, f.filename);
    if (!r.ok) {
      await client.act('delete_message', id).catch(() => undefined);
      return refused(`attachment ${f.filename}: ${r.text}`);
    }
  }
  if (mode === 'commit') {
    const c = await client.commit(id);
    if (!c.ok) return c;
  }
  return made;
}
