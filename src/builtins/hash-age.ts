// Which parts of a hash dir (done/, relayed/) are older than a cutoff: whole days, hours and minutes, in UTC like the ids.
import fsp from 'node:fs/promises';
import path from 'node:path';

export interface OldIds {
  /** Ids whose whole minute (or hour, or day) ended at or before the cutoff. */
  ids: string[];
  /** Directories (deepest first) that hold only old ids and can be removed once they are empty. */
  dirs: string[];
}

const DAY = /^(\d{4})(\d{2})(\d{2})$/;
const TWO = /^\d{2}$/;
const ENTRY = /^\d{2}/;

async function list(dir: string): Promise<string[]> {
  return fsp.readdir(dir).catch(() => [] as string[]);
}

/**
 * Walks `<state>/YYYYMMDD/HH/MM/<id>` and collects every id in a day, hour or minute directory
 * whose time span ends at or before `cutoffMs` (UTC, the ids' own clock). A minute that is only
 * partly old is kept whole: retention is whole days, a minute more does not matter.
 */
export async function oldHashIds(stateDir: string, cutoffMs: number): Promise<OldIds> {
  const out: OldIds = { ids: [], dirs: [] };
  for (const day of (await list(stateDir)).sort()) {
    const d = DAY.exec(day);
    if (!d) continue;
    const dayStart = Date.UTC(+d[1], +d[2] - 1, +d[3]);
    if (Number.isNaN(dayStart) || dayStart >= cutoffMs) continue;
    const dayDir = path.join(stateDir, day);
    const dayOld = dayStart + 86_400_000 <= cutoffMs;
    for (const hour of (await list(dayDir)).filter((h) => TWO.test(h))) {
      const hourStart = dayStart + Number(hour) * 3_600_000;
      if (hourStart >= cutoffMs) continue;
      const hourDir = path.join(dayDir, hour);
      const hourOld = hourStart + 3_600_000 <= cutoffMs;
      for (const minute of (await list(hourDir)).filter((m) => TWO.test(m))) {
        const minuteStart = hourStart + Number(minute) * 60_000;
        if (minuteStart + 60_000 > cutoffMs) continue;
        const minuteDir = path.join(hourDir, minute);
        for (const id of await list(minuteDir)) if (ENTRY.test(id)) out.ids.push(id);
        out.dirs.push(minuteDir);
      }
      if (hourOld) out.dirs.push(hourDir);
    }
    if (dayOld) out.dirs.push(dayDir);
  }
  return out;
}

/** Removes the directories that are empty now; one that a message moved into meanwhile stays. */
export async function removeEmptyDirs(dirs: string[]): Promise<void> {
  for (const dir of dirs) await fsp.rmdir(dir).catch(() => undefined);
}
