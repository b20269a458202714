// Finds and kills scripts left running by a previous incarnation of a queue, before re-queueing.
import fs from 'node:fs/promises';
import { readMessageFile } from '../../spool/beneath.js';

/** Pids of live (non-zombie) processes in process group `pgid`. */
async function groupMembers(pgid: number): Promise<number[]> {
  const out: number[] = [];
  for (const name of await fs.readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await fs.readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    // Fields after the parenthesised command: state ppid pgrp ...
    const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (after.length > 2 && Number(after[2]) === pgid && after[0] !== 'Z') out.push(Number(name));
  }
  return out;
}

async function belongsTo(pid: number, msgId: string): Promise<boolean> {
  const environ = await fs.readFile(`/proc/${pid}/environ`, 'latin1').catch(() => '');
  return environ.split('\0').includes(`RQ_MSG_ID=${msgId}`);
}

/**
 * Kills the process group recorded in `<msgDir>/pid` if one of its members was started for
 * this message (its environment carries RQ_MSG_ID), so a re-queued message never runs twice at
 * once. Returns the pids that were killed.
 */
export async function killStaleScript(msgDir: string, msgId: string, waitMs = 2000): Promise<number[]> {
  const pgid = Number((await readMessageFile(msgDir, 'pid', 64).catch(() => '')).trim());
  if (!Number.isInteger(pgid) || pgid <= 1) return [];
  const members = await groupMembers(pgid);
  const ours = [];
  for (const pid of members) if (await belongsTo(pid, msgId)) ours.push(pid);
  if (ours.length === 0) return [];
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // Gone between the scan and the kill.
  }
  const deadline = Date.now() + waitMs;
  while ((await groupMembers(pgid)).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return members;
}
