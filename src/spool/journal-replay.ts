// At queue start: every create the journal holds is made whole on disk (its dir made again, or its msg rewritten), then the journal goes.
import path from 'node:path';
import { deleteSegments, readJournal } from './create-journal.js';
import type { JournalRecord } from './journal-records.js';
import { readMessage } from './message-files.js';
import type { QueueSpool } from './queue-spool.js';

export interface Replayed {
  /** Whole records found in the journal. */
  records: number;
  /** Messages whose directory the crash lost, made again in que/ from their record. */
  recreated: string[];
  /** Messages whose directory survived with a torn or empty msg, rewritten from their record. */
  rewritten: string[];
  /** Lines that were not whole records (a torn last append: its creator was never answered). */
  damaged: number;
}

/**
 * Checks each record's message: present anywhere (any state, an acknowledged err too) with a
 * readable msg, it is left alone, since whatever happened to it since the create happened after its
 * record; its dir present with a torn msg gets the record's msg; its dir gone is made again in que/.
 * A message deleted since its create has no record left: deletes wait for a checkpoint (QueueSpool).
 * One filesystem sync makes the repairs durable before the journal files are deleted.
 */
export async function replayJournal(spool: QueueSpool): Promise<Replayed> {
  const { files, records, damaged } = await readJournal(spool.paths.journalDir);
  const out: Replayed = { records: records.length, recreated: [], rewritten: [], damaged };
  if (files.length === 0) return out;
  let n = 0;
  for (const rec of records) {
    const dir = await whereIs(spool, rec.id);
    if (dir === null) {
      await recreate(spool, rec, n++);
      out.recreated.push(rec.id);
    } else if (
      !(await readMessage(dir, rec.id).then(
        () => true,
        () => false,
      ))
    ) {
      await writeMsg(spool, path.join(dir, 'msg'), rec);
      out.rewritten.push(rec.id);
    }
  }
  await spool.fs.syncfs(spool.paths.dir);
  await deleteSegments(files, spool.paths.journalDir, spool.fs);
  return out;
}

async function whereIs(spool: QueueSpool, id: string): Promise<string | null> {
  const state = await spool.locate(id);
  if (state) return spool.msgDir(state, id);
  return (await spool.exists('err', `.${id}`)) ? spool.msgDir('err', `.${id}`) : null;
}

/** Built in a private dir under prep/ and renamed into que/, like a create: never half there. */
async function recreate(spool: QueueSpool, rec: JournalRecord, n: number): Promise<void> {
  const tmp = path.join(spool.paths.state.prep, `_replay.${process.pid}.${n}`);
  await spool.fs.rm(tmp, { recursive: true, force: true });
  await spool.fs.mkdir(tmp);
  await writeMsg(spool, path.join(tmp, 'msg'), rec);
  await spool.fs.rename(tmp, spool.msgDir('que', rec.id));
}

async function writeMsg(spool: QueueSpool, file: string, rec: JournalRecord): Promise<void> {
  const fh = await spool.fs.open(file, 'w', 0o644);
  try {
    await fh.writeFile(JSON.stringify(rec.msg));
  } finally {
    await fh.close();
  }
}
