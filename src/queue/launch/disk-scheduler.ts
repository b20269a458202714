// The IO scheduler of the disk a directory is on: only bfq weighs IO between cgroups, so an io_weight is enforceable only there.
import fs from 'node:fs';
import path from 'node:path';

/** The IO scheduler of the disk holding `dir` (`mq-deadline`, `bfq`…), from sysfs; null where it cannot be told (a network or virtual filesystem). */
export function diskScheduler(dir: string): string | null {
  try {
    const { dev } = fs.statSync(dir);
    let block = fs.realpathSync(`/sys/dev/block/${Math.floor(dev / 256) & 0xfff}:${(dev & 0xff) | ((dev >> 12) & 0xfff00)}`);
    // A partition's queue is its disk's.
    if (fs.existsSync(path.join(block, 'partition'))) block = path.dirname(block);
    const text = fs.readFileSync(path.join(block, 'queue', 'scheduler'), 'utf8');
    return /\[([^\]]+)\]/.exec(text)?.[1] ?? text.trim();
  } catch {
    return null;
  }
}
