// Every installed package runs on every Node version package.json claims: npm install prints no EBADENGINE on any of them.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { PROJECT } from './helpers/rq-root.js';

interface Installed {
  where: string;
  name: string;
  version: string;
  node: string | undefined;
}

/** Each package under node_modules, nested ones included (a package's own files are not walked). */
function installed(dir: string, out: Installed[] = []): Installed[] {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.') || !(e.isDirectory() || e.isSymbolicLink())) continue;
    const p = path.join(dir, e.name);
    if (e.name.startsWith('@')) {
      installed(p, out);
      continue;
    }
    const file = path.join(p, 'package.json');
    if (!fs.existsSync(file)) continue;
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string; engines?: { node?: unknown } };
    const node = pkg.engines?.node;
    out.push({ where: path.relative(PROJECT, p), name: pkg.name ?? e.name, version: pkg.version ?? '?', node: typeof node === 'string' ? node : undefined });
    const nested = path.join(p, 'node_modules');
    if (fs.existsSync(nested)) installed(nested, out);
  }
  return out;
}

const project = JSON.parse(fs.readFileSync(path.join(PROJECT, 'package.json'), 'utf8')) as { engines: { node: string } };
const claimed = project.engines.node;

describe('Node engines (house style §8: Node 20, 22 and 24 with no EBADENGINE)', () => {
  it('package.json claims a valid range that admits 20, 22 and 24 and the Node running this test', () => {
    expect(semver.validRange(claimed), claimed).not.toBeNull();
    for (const major of ['20', '22', '24']) expect(semver.intersects(claimed, `${major}.x`), `${claimed} admits Node ${major}`).toBe(true);
    expect(semver.satisfies(process.versions.node, claimed), `Node ${process.versions.node} in ${claimed}`).toBe(true);
  });

  it("every installed package's engines.node admits every version package.json claims", () => {
    const all = installed(path.join(PROJECT, 'node_modules'));
    // A walk that found nothing would pass anything.
    expect(all.length).toBeGreaterThan(100);
    const narrower = all.filter((p) => p.node !== undefined && semver.validRange(p.node) !== null && !semver.subset(claimed, p.node));
    expect(narrower.map((p) => `${p.name}@${p.version} (${p.where}) wants node ${p.node}, package.json claims ${claimed}`)).toEqual([]);
  });

  it('npm ls finds the tree complete and valid (overrides included)', async () => {
    // Exits non-zero on a missing, extraneous or invalid package: an override to a version that
    // does not fit shows up here before it shows up as a crash.
    // Run where node_modules really is: in a Stryker sandbox it is a link to the checkout's, and the sandbox,
    // not being an install of its own, lists every package in it as extraneous.
    const owner = path.dirname(fs.realpathSync(path.join(PROJECT, 'node_modules')));
    const { stdout } = await promisify(execFile)('npm', ['ls', '--all', '--json'], { cwd: owner, maxBuffer: 64 << 20 });
    expect((JSON.parse(stdout) as { problems?: string[] }).problems ?? []).toEqual([]);
  });
});
