// Vitest setup: a test that signals pid 0, 1, -1 or its own process group would take the whole test run down with no report; it throws instead.
import fs from 'node:fs';

const stat = fs.readFileSync('/proc/self/stat', 'utf8');
const ownGroup = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
const realKill = process.kill.bind(process);

process.kill = ((pid: number, signal?: string | number) => {
  if (!Number.isInteger(pid) || Math.abs(pid) <= 1 || pid === -ownGroup) {
    throw new Error(`kill-guard: refusing to signal ${pid} (${signal ?? 'SIGTERM'}): it would reach the test runner itself`);
  }
  return realKill(pid, signal);
}) as typeof process.kill;
