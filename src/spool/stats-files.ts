// The statistics files of a queue (rq-beyond §B15.2): `stats/<YYYYMMDD>.json` and `stats/totals.json`, written tmp + rename without fsync, and their retention.
import fsp from 'node:fs/promises';
import path from 'node:path';

const DAY_FILE = /^(\d{8})\.json$/;
const DAY_MS = 86_400_000;

function dayMs(date: string): number {
  return Date.UTC(Number(date.slice(0, 4)), Number(date.slice(4, 6)) - 1, Number(date.slice(6, 8)));
}

export class StatsFiles {
  constructor(readonly dir: string) {}

  /** The parsed JSON of a day's file, or null when there is none or it does not parse (statistics are not state). */
  readDay(date: string): Promise<unknown> {
    return this.read(`${date}.json`);
  }

  readTotals(): Promise<unknown> {
    return this.read('totals.json');
  }

  writeDay(date: string, record: unknown): Promise<void> {
    return this.write(`${date}.json`, record);
  }

  writeTotals(totals: unknown): Promise<void> {
    return this.write('totals.json', totals);
  }

  /**
   * Days older than `statsDays` before `today` are deleted; days older than `histogramDays` keep their
   * counters and lose their histograms. Returns the days pruned, for the log.
   */
  async prune(today: string, statsDays: number, histogramDays: number): Promise<{ deleted: string[]; trimmed: string[] }> {
    const names = await fsp.readdir(this.dir).catch(() => [] as string[]);
    const age = (date: string) => Math.round((dayMs(today) - dayMs(date)) / DAY_MS);
    const deleted: string[] = [];
    const trimmed: string[] = [];
    for (const name of names) {
      const date = DAY_FILE.exec(name)?.[1];
      if (!date || date === today) continue;
      if (age(date) > statsDays) {
        await fsp.rm(path.join(this.dir, name), { force: true });
        deleted.push(date);
      } else if (age(date) > histogramDays) {
        const day = await this.readDay(date);
        if (!isRecord(day) || !['wait', 'run'].some((k) => isRecord(day[k]) && 'histogram' in day[k])) continue;
        for (const k of ['wait', 'run']) if (isRecord(day[k])) delete day[k].histogram;
        await this.writeDay(date, day);
        trimmed.push(date);
      }
    }
    return { deleted, trimmed };
  }

  private async read(name: string): Promise<unknown> {
    try {
      return JSON.parse(await fsp.readFile(path.join(this.dir, name), 'utf8'));
    } catch {
      return null;
    }
  }

  private async write(name: string, value: unknown): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true, mode: 0o750 });
    const file = path.join(this.dir, name);
    const tmp = `${file}.tmp`;
    await fsp.writeFile(tmp, JSON.stringify(value), { mode: 0o640 });
    await fsp.rename(tmp, file);
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
