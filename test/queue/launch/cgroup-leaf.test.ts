// rq-mgr's move into a leaf of its delegated cgroup v2, and the giving of controllers below it, against the kernel's own rule: a cgroup with a process in it gives none.
import fs from 'node:fs';
import path from 'node:path';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { members, ownCgroupHome } from '../../../src/queue/launch/cgroup-fs.js';
import { DAEMONS_LEAF, queuesHome } from '../../../src/queue/launch/cgroup-leaf.js';
import { delegationMark } from '../../../src/queue/launch/cgroup-delegation.js';
import { delegate } from '../../../src/queue/launch/cgroup-v2-limits.js';
import { readCgroupFile } from '../../../src/queue/launch/cgroup-files.js';

/**
 * No host rq is tested on gives memory, pids, cpu or io to cgroup v2 (they are bound to v1
 * hierarchies), but the kernel applies the same rule to every domain controller, so these tests
 * use one it does give here, hugetlb, offered by the cgroup2 root.
 */
const CONTROLLER = 'hugetlb';
const LEAF_JS = path.resolve('dist/queue/launch/cgroup-leaf.js');

const home = ownCgroupHome();
if (!home.ok) throw new Error(`these tests need a writable cgroup2: ${home.why}`);
const root = home.dir;
const made: string[] = [];
let enabledAtRoot = false;

/**
 * A new cgroup below the root, which offers it the controller; marked with `mark` as systemd marks
 * a unit's cgroup with Delegate=yes (both marks; only root reads the trusted one), or not marked.
 */
function delegatedCgroup(mark: 'trusted.delegate' | 'user.delegate' | null = 'trusted.delegate'): string {
  const dir = path.join(root, `rq-test-delegated-${process.pid}-${made.length}`);
  fs.mkdirSync(dir);
  made.push(dir);
  // Node cannot write an extended attribute; python can.
  if (mark) execFileSync('python3', ['-c', 'import os, sys; os.setxattr(sys.argv[1], sys.argv[2], b"1")', dir, mark]);
  return dir;
}

/** What `expr` (on module `m`, dist/queue/launch/<module>.js, loaded as root) gives in a node process that then acts as user `uid`. */
function asUser(uid: number, module: string, expr: string): unknown {
  const code = `import(${JSON.stringify(path.resolve(`dist/queue/launch/${module}.js`))}).then((m) => { process.setegid(${uid}); process.seteuid(${uid}); console.log(JSON.stringify(${expr})); })`;
  return JSON.parse(execFileSync(process.execPath, ['-e', code], { encoding: 'utf8' }));
}

/** A node process in `delegated` alone that calls leaveForLeaf([hugetlb]) when told, and prints what it returned. */
async function daemon(delegated: string): Promise<{ child: ChildProcess; leave: () => Promise<{ leaf: string; mark: string } | null> }> {
  const code = `import(${JSON.stringify(LEAF_JS)}).then((m) => process.stdin.on('data', () => console.log(JSON.stringify(m.leaveForLeaf(['${CONTROLLER}'])))));setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'pipe', 'inherit'] });
  await once(child, 'spawn');
  fs.writeFileSync(path.join(delegated, 'cgroup.procs'), String(child.pid));
  return {
    child,
    leave: async () => {
      child.stdin!.write('go\n');
      const [line] = (await once(child.stdout!, 'data')) as [Buffer];
      return JSON.parse(line.toString()) as { leaf: string; mark: string } | null;
    },
  };
}

/** Every process in `dir` and below it, moved back to the root, and the cgroups removed. */
function clear(dir: string): void {
  if (!fs.existsSync(dir)) return;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) clear(path.join(dir, e.name));
  for (const pid of members(dir)) fs.writeFileSync(path.join(root, 'cgroup.procs'), String(pid));
  fs.rmdirSync(dir);
}

beforeAll(() => {
  if (!(readCgroupFile(root, 'cgroup.subtree_control') ?? '').includes(CONTROLLER)) {
    fs.writeFileSync(path.join(root, 'cgroup.subtree_control'), `+${CONTROLLER}`);
    enabledAtRoot = true;
  }
});

afterAll(() => {
  for (const dir of made) clear(dir);
  if (enabledAtRoot) fs.writeFileSync(path.join(root, 'cgroup.subtree_control'), `-${CONTROLLER}`);
});

describe('a delegated cgroup v2', () => {
  it('with its daemon in it gives no controller below it, says why, and once the daemon is in its leaf gives them to the queues and their runs', async () => {
    const delegated = delegatedCgroup();
    const { child, leave } = await daemon(delegated);
    try {
      const queue = path.join(delegated, 'rq-q-test');
      fs.mkdirSync(queue);
      // The kernel refuses while the daemon is in the delegated cgroup itself.
      const before = delegate(delegated, queue, [CONTROLLER]);
      expect(before.enabled.size).toBe(0);
      expect(before.missing.get(CONTROLLER)).toBe(
        `${delegated} has processes of its own, so the kernel lets it give the ${CONTROLLER} controller to no cgroup below it (run rq-mgr alone in a delegated cgroup)`,
      );
      expect(await leave()).toEqual({ leaf: path.join(delegated, DAEMONS_LEAF), mark: 'trusted.delegate' });
      expect(members(path.join(delegated, DAEMONS_LEAF))).toEqual([child.pid]);
      expect(members(delegated)).toEqual([]);
      // The queue processes it starts are in the leaf: their cgroups go beside it.
      expect(queuesHome(path.join(delegated, DAEMONS_LEAF))).toBe(delegated);
      expect(queuesHome(delegated)).toBe(delegated);
      const after = delegate(delegated, queue, [CONTROLLER]);
      expect([...after.enabled]).toEqual([CONTROLLER]);
      const run = path.join(queue, 'run-1');
      fs.mkdirSync(run);
      expect(readCgroupFile(run, 'cgroup.controllers')?.trim()).toBe(CONTROLLER);
      // Done again (a queue's next start): nothing to change, nothing refused.
      expect([...delegate(delegated, queue, [CONTROLLER]).enabled]).toEqual([CONTROLLER]);
      // Already in its leaf, a second call stays.
      expect(await leave()).toBeNull();
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });

  it('a daemon that is not alone in its cgroup moves nobody: another process there is not its to move', async () => {
    const delegated = delegatedCgroup();
    const other = spawn('sleep', ['60']);
    await once(other, 'spawn');
    fs.writeFileSync(path.join(delegated, 'cgroup.procs'), String(other.pid));
    const { child, leave } = await daemon(delegated);
    try {
      expect(await leave()).toBeNull();
      expect(members(delegated).sort()).toEqual([other.pid, child.pid].sort());
    } finally {
      for (const p of [other, child]) {
        p.kill('SIGKILL');
        await once(p, 'exit');
      }
    }
  });

  it('a cgroup its manager did not delegate is not divided: the daemon stays, no controller is given below it, and the reason says so', async () => {
    const managed = delegatedCgroup(null);
    const { child, leave } = await daemon(managed);
    try {
      expect(await leave()).toBeNull();
      expect(members(managed)).toEqual([child.pid]);
      const { enabled, missing } = delegate(managed, path.join(managed, 'x'), [CONTROLLER]);
      expect(enabled.size).toBe(0);
      expect(missing.get(CONTROLLER)).toBe(
        `${managed} is not delegated to rq (systemd: Delegate=yes), and rq gives away no controller of a cgroup it was not given`,
      );
      expect(readCgroupFile(managed, 'cgroup.subtree_control')?.trim()).toBe('');
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });

  it("systemd's user.delegate mark is taken as well, where only it is set", async () => {
    const { child, leave } = await daemon(delegatedCgroup('user.delegate'));
    try {
      expect(await leave()).toMatchObject({ mark: 'user.delegate' });
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });

  it("a user other than root takes a cgroup handed over to it (its subtree_control chowned, its parent's not) and nothing below it", () => {
    const NOBODY = 65534;
    const handed = delegatedCgroup(null);
    const own = path.join(handed, 'made-by-the-user');
    fs.mkdirSync(own);
    for (const f of [handed, path.join(handed, 'cgroup.subtree_control'), path.join(handed, 'cgroup.procs'), path.join(own, 'cgroup.subtree_control')])
      fs.chownSync(f, NOBODY, NOBODY);
    expect(
      asUser(
        NOBODY,
        'cgroup-delegation',
        `[m.delegationMark(${JSON.stringify(handed)}), m.delegationMark(${JSON.stringify(own)}), m.delegationMark(${JSON.stringify(root)})]`,
      ),
    ).toEqual(['handed over to this user', null, null]);
    // Root takes no ownership as a mark: a cgroup root made is root's whether delegated or not.
    expect(delegationMark(handed)).toBeNull();
  });

  it('a controller the cgroup is not offered is named, with where it is missing', () => {
    const queue = path.join(delegatedCgroup(), 'rq-q-bare');
    fs.mkdirSync(queue);
    const { enabled, missing } = delegate(queue, path.join(queue, 'x'), ['memory']);
    expect(enabled.size).toBe(0);
    expect(missing.get('memory')).toBe(`no cgroup v2 memory controller is delegated to ${queue}`);
  });
});
