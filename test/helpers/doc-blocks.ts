// Reads the fenced code block that a doc shows right after naming a file (`path`), to check it against the file.
import fs from 'node:fs/promises';
import path from 'node:path';
import { PROJECT } from './rq-root.js';

/** The text of the fenced block right after a line naming `` `rel` `` and ending in `:`, or null. */
export async function blockAfter(doc: string, rel: string): Promise<string | null> {
  const text = await fs.readFile(path.join(PROJECT, doc), 'utf8');
  const name = rel.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const block = new RegExp(`^[^\\n]*\`${name}\`[^\\n]*:\\n\`\`\`[a-z]*\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(text);
  return block ? block[1] : null;
}

export function readProjectFile(rel: string): Promise<string> {
  return fs.readFile(path.join(PROJECT, rel), 'utf8');
}
