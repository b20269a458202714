// Samples /proc for the scripts holding slots of a limit key (their environment has RQ_LIMIT=<key>), to check "never more than N at once" from outside rq (rq-beyond §B12, §B18.9).
import fs from 'node:fs/promises';

/** One script run, as the sampler saw it: a process group whose members carry the key. */
export interface SeenScript {
  pgid: number;
  msgId: string;
  /** Epoch ms of the first and the last sample that saw it alive. */
  first: number;
  last: number;
}

export interface SampleReport {
  /** The most script groups with the key alive at one moment. */
  max: number;
  /** Samples taken. */
  samples: number;
  /** Samples that saw more than `allowed`, with the message ids then alive. */
  over: { at: number; msgIds: string[] }[];
  /** Every script group seen, in order of first sight. */
  scripts: SeenScript[];
}

/** pid → [state, pgid] from /proc/<pid>/stat; null when the process is gone. */
async function statOf(pid: number): Promise<{ state: string; pgid: number } | null> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  if (!stat) return null;
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: f[0], pgid: Number(f[2]) };
}

const live = (s: { state: string } | null): boolean => s !== null && s.state !== 'Z' && s.state !== 'X';

/**
 * The script groups alive at one moment: every process of this root (RQ_MSG_DIR under it) whose
 * environment has RQ_LIMIT=<key> and that is not a zombie. /proc is read one process at a time, so
 * a process read early may have died before a later one started: a second pass keeps only those
 * still alive after the whole scan. Each kept process was alive from its first read to its second,
 * and every first read precedes every second read, so the kept ones were all alive together.
 */
export async function scriptsWithKey(root: string | readonly string[], key: string): Promise<Map<number, string>> {
  const want = `RQ_LIMIT=${key}`;
  // Several roots: a fleet's hosts on one machine, whose scripts share a fleet-wide key.
  const dirPrefixes = (typeof root === 'string' ? [root] : root).map((r) => `RQ_MSG_DIR=${r}/`);
  const seen: { pid: number; pgid: number; msgId: string }[] = [];
  for (const name of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const environ = await fs.readFile(`/proc/${pid}/environ`, 'latin1').catch(() => '');
    if (!environ.includes(want)) continue;
    const vars = environ.split('\0');
    if (!vars.includes(want) || !vars.some((v) => dirPrefixes.some((p) => v.startsWith(p)))) continue;
    const st = await statOf(pid);
    if (!live(st)) continue;
    const msgId = (vars.find((v) => v.startsWith('RQ_MSG_ID=')) ?? '').slice('RQ_MSG_ID='.length);
    seen.push({ pid, pgid: st!.pgid, msgId });
  }
  const groups = new Map<number, string>();
  for (const s of seen) {
    const st = await statOf(s.pid);
    if (live(st) && st!.pgid === s.pgid) groups.set(s.pgid, s.msgId);
  }
  return groups;
}

/** Samples every `everyMs` until stopped. */
export class LimitSampler {
  private stopped = false;
  private loop: Promise<void> | null = null;
  private readonly report: SampleReport = { max: 0, samples: 0, over: [], scripts: [] };
  private readonly byGroup = new Map<number, SeenScript>();
  private listeners: (() => void)[] = [];

  constructor(
    private readonly root: string | readonly string[],
    private readonly key: string,
    private readonly allowed: number,
    private readonly everyMs = 10,
  ) {}

  start(): this {
    this.loop = (async () => {
      while (!this.stopped) {
        const at = Date.now();
        const groups = await scriptsWithKey(this.root, this.key);
        const end = Date.now();
        this.report.samples++;
        this.report.max = Math.max(this.report.max, groups.size);
        if (groups.size > this.allowed) this.report.over.push({ at, msgIds: [...groups.values()] });
        for (const [pgid, msgId] of groups) {
          const s = this.byGroup.get(pgid);
          if (s && s.msgId === msgId) s.last = end;
          else {
            const fresh = { pgid, msgId, first: at, last: end };
            this.byGroup.set(pgid, fresh);
            this.report.scripts.push(fresh);
          }
        }
        this.current = groups;
        for (const l of this.listeners.splice(0)) l();
        await new Promise((r) => setTimeout(r, this.everyMs));
      }
    })();
    return this;
  }

  /** The groups of the latest sample. */
  current = new Map<number, string>();

  /** Resolves after the next complete sample. */
  next(): Promise<void> {
    return new Promise((r) => this.listeners.push(r));
  }

  /** Everything seen so far (the sampler keeps running). */
  get soFar(): SampleReport {
    return this.report;
  }

  async stop(): Promise<SampleReport> {
    this.stopped = true;
    await this.loop;
    return this.report;
  }
}
