// Watches the directories holding timer links' targets, so a replaced or newly created target is seen.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';

/**
 * chokidar's followSymlinks watches the target file itself, and loses it when the file is replaced
 * by rename shortly after an edit (deploy tools and editors do exactly that): from then on no change
 * is reported. A watch on the target's directory sees every write, rename and creation by name, so
 * it also notices the target of a dangling link appearing.
 */
export class TargetWatch {
  /** dir → its watcher and, per entry name in it, the timers/ links that lead there. */
  private readonly dirs = new Map<string, { watcher: fs.FSWatcher; names: Map<string, Set<string>> }>();
  /** link → the target paths tracked for it. */
  private readonly byLink = new Map<string, string[]>();

  constructor(
    private readonly onChange: (link: string) => void,
    private readonly log: Logger,
  ) {}

  /** Tracks the targets of `link` (a path in timers/): the link's own target and, if different, the final file. */
  async track(link: string): Promise<void> {
    const targets = new Set<string>();
    try {
      targets.add(path.resolve(path.dirname(link), await fsp.readlink(link)));
    } catch {
      // Not a link (any more): nothing to track.
    }
    try {
      targets.add(await fsp.realpath(link));
    } catch {
      // Dangling: the link's own target directory is watched for the file to appear.
    }
    this.set(link, [...targets]);
  }

  untrack(link: string): void {
    this.set(link, []);
  }

  close(): void {
    for (const d of this.dirs.values()) d.watcher.close();
    this.dirs.clear();
    this.byLink.clear();
  }

  private set(link: string, targets: string[]): void {
    for (const t of this.byLink.get(link) ?? []) this.drop(link, t);
    if (targets.length === 0) this.byLink.delete(link);
    else this.byLink.set(link, targets);
    for (const t of targets) this.add(link, t);
  }

  private add(link: string, target: string): void {
    const dir = path.dirname(target);
    let d = this.dirs.get(dir);
    if (!d) {
      let watcher: fs.FSWatcher;
      try {
        watcher = fs.watch(dir, { persistent: false }, (_event, name) => this.changed(dir, name === null ? null : String(name)));
      } catch (err) {
        // A missing directory: the link stays refused until it is re-created or rq gets SIGHUP.
        this.log.debug({ dir, err: (err as Error).message }, 'cannot watch a timer target directory');
        return;
      }
      watcher.on('error', () => {
        watcher.close();
        this.dirs.delete(dir);
      });
      d = { watcher, names: new Map() };
      this.dirs.set(dir, d);
    }
    const name = path.basename(target);
    const links = d.names.get(name) ?? new Set<string>();
    links.add(link);
    d.names.set(name, links);
  }

  private drop(link: string, target: string): void {
    const dir = path.dirname(target);
    const d = this.dirs.get(dir);
    if (!d) return;
    const name = path.basename(target);
    d.names.get(name)?.delete(link);
    if (d.names.get(name)?.size === 0) d.names.delete(name);
    if (d.names.size === 0) {
      d.watcher.close();
      this.dirs.delete(dir);
    }
  }

  private changed(dir: string, name: string | null): void {
    const d = this.dirs.get(dir);
    if (!d) return;
    const links = name === null ? [...d.names.values()].flatMap((s) => [...s]) : [...(d.names.get(name) ?? [])];
    for (const link of links) this.onChange(link);
  }
}
