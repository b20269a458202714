// Reading and writing a cgroup's interface files, v1 or v2: a file's text, a number, `key value` lines, a write in place.
import fs from 'node:fs';
import path from 'node:path';

/** A cgroup file's text, or null when it cannot be read (the kernel lacks it). */
export function readCgroupFile(dir: string, file: string): string | null {
  try {
    return fs.readFileSync(path.join(dir, file), 'utf8');
  } catch {
    return null;
  }
}

/** Writes a cgroup file in place (`r+`: a file the kernel does not have is an error, never made). */
export function writeCgroupFile(dir: string, file: string, value: string | number): void {
  fs.writeFileSync(path.join(dir, file), String(value), { flag: 'r+' });
}

/** A file of `key value` lines (cpu.stat, memory.oom_control, pids.events) as numbers by key. */
export function keyedNumbers(text: string | null): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of (text ?? '').split('\n')) {
    const [k, v] = line.split(' ');
    if (k && v !== undefined && /^\d+$/.test(v)) out.set(k, Number(v));
  }
  return out;
}

/** A file of one number (memory.max_usage_in_bytes, pids.peak); undefined when absent or not a number. */
export function numberFile(dir: string, file: string): number | undefined {
  const text = readCgroupFile(dir, file)?.trim();
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
}
