// Reads every message a paused queue holds in que/ by a marker field, for crash tests that compare what was acknowledged with what is on disk.
import fs from 'node:fs/promises';
import path from 'node:path';

export interface QueMarkers {
  /** marker → the message dir's id and its msg file as stored. */
  byMarker: Map<string, { id: string; msg: Record<string, unknown> }>;
  /** Markers found in more than one dir: a create made twice. */
  doubled: string[];
}

/** Every msg in `queDir` (a flat state dir), keyed by its `field` (param1 by default). */
export async function readQueMarkers(queDir: string, field = 'param1'): Promise<QueMarkers> {
  const out: QueMarkers = { byMarker: new Map(), doubled: [] };
  // Plain ids only: a leading dot or underscore is no message of que/.
  for (const id of (await fs.readdir(queDir)).filter((n) => /^\d/.test(n))) {
    const msg = JSON.parse(await fs.readFile(path.join(queDir, id, 'msg'), 'utf8')) as Record<string, unknown>;
    const marker = String(msg[field]);
    if (out.byMarker.has(marker)) out.doubled.push(marker);
    else out.byMarker.set(marker, { id, msg });
  }
  return out;
}
