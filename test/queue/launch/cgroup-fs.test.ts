// Finding this process's cgroup v2 from /proc texts, on the layouts rq meets; and removing a cgroup once it is empty.
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import os from 'node:os';
import { describe, expect, it, onTestFinished } from 'vitest';
import { mountTmpfs } from '../../helpers/disk-fill.js';
import { cgroupHome, killAll, members, ownCgroupHome, populated, removeCgroup, whenEmpty } from '../../../src/queue/launch/cgroup-fs.js';

const V1 = '4:memory:/user.slice\n1:name=systemd:/user.slice/session-1.scope\n';
const line = (root: string, point: string, options = 'rw,nosuid,nodev,noexec,relatime', fstype = 'cgroup2') =>
  `41 31 0:38 ${root} ${point} ${options} shared:9 - ${fstype} ${fstype} rw\n`;
const TMPFS = '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n';

describe('cgroupHome', () => {
  it('finds the cgroup on a unified host, under the mount', () => {
    expect(cgroupHome(line('/', '/sys/fs/cgroup'), '0::/system.slice/rq.service\n')).toEqual({ ok: true, dir: '/sys/fs/cgroup/system.slice/rq.service' });
  });

  it('finds the cgroup2 mount of a hybrid host, past the v1 ones', () => {
    const mounts = TMPFS + line('/', '/sys/fs/cgroup/memory', 'rw,relatime', 'cgroup') + line('/', '/sys/fs/cgroup/unified');
    expect(cgroupHome(mounts, `${V1}0::/\n`)).toEqual({ ok: true, dir: '/sys/fs/cgroup/unified' });
  });

  it("takes a mount whose root is a path of the host's hierarchy (a container without a cgroup namespace)", () => {
    expect(cgroupHome(line('/docker/abc', '/sys/fs/cgroup'), '0::/docker/abc/app\n')).toEqual({ ok: true, dir: '/sys/fs/cgroup/app' });
    expect(cgroupHome(line('/docker/abc', '/sys/fs/cgroup'), '0::/docker/abc\n')).toEqual({ ok: true, dir: '/sys/fs/cgroup' });
    expect(cgroupHome(line('/docker/abc', '/sys/fs/cgroup'), '0::/docker/abcd\n')).toMatchObject({ ok: false });
  });

  it('reads escaped mount points', () => {
    expect(cgroupHome(line('/', '/mnt/my\\040cgroups'), '0::/a\n')).toEqual({ ok: true, dir: '/mnt/my cgroups/a' });
  });

  it('says why there is none: cgroup v1 only, no mount, a read-only mount', () => {
    expect(cgroupHome(TMPFS + line('/', '/sys/fs/cgroup/memory', 'rw', 'cgroup'), V1)).toEqual({
      ok: false,
      why: 'this process is in no cgroup v2 hierarchy (cgroup v1 only)',
    });
    expect(cgroupHome(TMPFS, '0::/\n')).toEqual({ ok: false, why: "no cgroup2 mount shows this process's cgroup" });
    expect(cgroupHome(line('/', '/sys/fs/cgroup', 'ro,nosuid'), '0::/\n')).toEqual({ ok: false, why: 'cgroup2 is mounted read-only at /sys/fs/cgroup' });
  });
});

const HOME = ownCgroupHome();

describe.skipIf(!HOME.ok)(`a cgroup's end${HOME.ok ? '' : ` (skipped: ${HOME.why})`}`, () => {
  it('is watched, killed and removed, with the cgroups a script made inside it', async () => {
    const dir = path.join(HOME.ok ? HOME.dir : '', `rq-test-cgroup-fs-${process.pid}`);
    fs.mkdirSync(dir);
    fs.mkdirSync(path.join(dir, 'inner'));
    const child = spawn('/bin/sh', ['-c', `echo 0 > ${path.join(dir, 'inner', 'cgroup.procs')} && echo in && exec sleep 1000`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise((r) => child.stdout.once('data', r));
    expect(populated(dir)).toBe(true);
    expect(members(path.join(dir, 'inner'))).toEqual([child.pid]);
    expect(await whenEmpty(dir, 20)).toBe(false);
    const exited = new Promise((r) => child.once('exit', (_code, signal) => r(signal)));
    killAll(dir);
    expect(await whenEmpty(dir, 5000)).toBe(true);
    expect(await exited).toBe('SIGKILL');
    await removeCgroup(dir, 5000);
    expect(fs.existsSync(dir)).toBe(false);
    // Gone already: nothing to wait for, nothing to remove, nothing to kill.
    expect(populated(dir)).toBe(false);
    await removeCgroup(dir, 5000);
    killAll(dir);
  });
});

describe('removeCgroup', () => {
  it('gives up on a directory that stays busy, after its retries, with the EBUSY', async () => {
    // A mount point is busy for rmdir for as long as it is mounted: a cgroup whose last task never leaves.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rq-busy-'));
    const unmount = await mountTmpfs(dir, '64k', 'rq-busy');
    // Also after a timeout (a removal that retries for ever), which a finally would not see.
    onTestFinished(async () => {
      await unmount();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    await expect(removeCgroup(dir, 1000)).rejects.toMatchObject({ code: 'EBUSY' });
    expect(fs.existsSync(dir)).toBe(true);
  });
});
