// The create journal's record format: one line per message, `<crc32 hex> <json>`, readable with cut and jq, a torn tail detectable.
import { crc32 } from '../lazy-builtins.js';
import type { Message } from '../message/message.js';

/** A create as the journal keeps it: enough to make the message again exactly as its creator was told. */
export interface JournalRecord {
  id: string;
  /** Where the create put it. */
  state: 'que';
  /** The msg file's content, as written. */
  msg: Message;
}

const CRC_HEX = 8;

/**
 * One record as a journal line (newline included): the same text as `JSON.stringify(rec)`. `msgJson` is the msg
 * as its file holds it, when the caller has it: a create encodes its msg once, for the file and the record alike.
 */
export function encodeRecord(rec: JournalRecord, msgJson = JSON.stringify(rec.msg)): string {
  const json = `{"id":${JSON.stringify(rec.id)},"state":${JSON.stringify(rec.state)},"msg":${msgJson}}`;
  return `${crc32(json).toString(16).padStart(CRC_HEX, '0')} ${json}\n`;
}

/** What a journal file holds: its whole records, and how many lines were not (a torn tail, a damaged line). */
export interface ParsedJournal {
  records: JournalRecord[];
  damaged: number;
}

/**
 * The records of a journal file's text, in order. A line is a record only when it is whole (ends
 * with a newline), its checksum matches and its JSON has an id and a msg: a crash mid-append leaves
 * a torn last line whose creator was never answered, and it is skipped.
 */
export function parseJournal(text: string): ParsedJournal {
  const lines = text.split('\n');
  // The text after the last newline is a record cut short, or nothing.
  const tail = lines.pop() ?? '';
  const out: ParsedJournal = { records: [], damaged: tail === '' ? 0 : 1 };
  for (const line of lines) {
    if (line === '') continue;
    const rec = parseLine(line);
    if (rec) out.records.push(rec);
    else out.damaged++;
  }
  return out;
}

function parseLine(line: string): JournalRecord | null {
  const json = line.slice(CRC_HEX + 1);
  if (line[CRC_HEX] !== ' ' || crc32(json).toString(16).padStart(CRC_HEX, '0') !== line.slice(0, CRC_HEX)) return null;
  try {
    const rec = JSON.parse(json) as JournalRecord;
    return typeof rec?.id === 'string' && rec.state === 'que' && typeof rec.msg === 'object' && rec.msg !== null ? rec : null;
  } catch {
    return null;
  }
}
