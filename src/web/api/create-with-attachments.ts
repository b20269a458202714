// A new message with files from the new-message form: made in prep, each file attached as attach/new does, then committed when the form asked for commit.
import { type Answer, refused } from '../../ipc/answer.js';
import { RqError, counted, invalidField } from '../../errors.js';
import { parseFullId } from '../../message/message-id.js';
import { attachmentNameProblem } from '../../message/names.js';
import type { Upload } from '../upload.js';
import type { WebContext } from '../web-context.js';

/**
 * Attachments exist only on prep messages (spec §9.6 attach/new), so a commit with files is a prep,
 * its attaches, then its commit: the script never sees the message without its files. A file the queue
 * refuses deletes the half-made message, and the answer names the file. Names are checked before
 * anything is made. The caller removes the temp files.
 */
export async function createWithAttachments(
  ctx: WebContext,
  q: string,
  fields: object,
  mode: 'commit' | 'prep',
  files: readonly Upload[],
): Promise<Answer<string>> {
  for (const [i, f] of files.entries()) {
    const problem = attachmentNameProblem(f.filename);
    if (problem) return refused(RqError.of('RQ_ERR_ATTACH_REFUSED', `attachment ${f.filename}: ${problem}`));
    // Stored under one name, the second would replace the first.
    if (files.findIndex((g) => g.filename === f.filename) < i)
      return refused(invalidField('filedata', 'files of different names', counted(2, `files named ${JSON.stringify(f.filename)}`)));
  }
  const client = ctx.queue(q);
  const made = await client.create(fields, 'prep_message');
  if (!made.ok) return made;
  const id = parseFullId(made.value)?.id;
  if (id === undefined) return refused(RqError.of('RQ_ERR_PROTOCOL', `queue ${q} answered an id of no known shape: ${made.value}`));
  for (const f of files) {
    const r = await client.attach(id, f.tmpPath, f.filename);
    if (!r.ok) {
      await client.act('delete_message', id).catch(() => undefined);
      // The queue's code stays with its refusal: the file's name is added to its text.
      return { ...r, text: `attachment ${f.filename}: ${r.text}`, raw: ['fail', `attachment ${f.filename}: ${r.text}`] };
    }
  }
  if (mode === 'commit') {
    const c = await client.commit(id);
    if (!c.ok) return c;
  }
  return made;
}
