// script_dirs' rules in this process: what lies inside a listed dir (real paths, a sibling sharing its prefix, relative entries), the written dirs it never counts, and the refusal texts.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GlobalConfig } from '../../src/config/global-config.js';
import { insideScriptDirs, scriptDirsWanted, scriptOutsideProblem } from '../../src/config/script-dirs.js';

let root: string;
const cfg = (c: Partial<GlobalConfig>) => c as GlobalConfig;

beforeAll(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'rq-script-dirs-')));
  for (const d of ['scripts', 'scripts-other', 'queues/q', 'tmp', 'mytmp', 'elsewhere']) await fs.mkdir(path.join(root, d), { recursive: true });
  await fs.symlink(path.join(root, 'scripts'), path.join(root, 'linked'));
});
afterAll(() => fs.rm(root, { recursive: true, force: true }));

describe('insideScriptDirs', () => {
  it('takes a file inside a listed dir, relative to the root, and nothing in a sibling that shares its prefix', () => {
    const c = cfg({ script_dirs: ['scripts'] });
    expect(insideScriptDirs(root, c, path.join(root, 'scripts', 'run.sh'))).toBe(true);
    expect(insideScriptDirs(root, c, path.join(root, 'scripts', 'deep', 'run.sh'))).toBe(true);
    expect(insideScriptDirs(root, c, path.join(root, 'scripts-other', 'run.sh'))).toBe(false);
    expect(insideScriptDirs(root, c, path.join(root, 'scripts'))).toBe(false);
    expect(insideScriptDirs(root, c, path.join(root, 'elsewhere', 'run.sh'))).toBe(false);
  });

  it('resolves a listed dir through its symlink, takes an absolute entry, and one that ends in a slash', () => {
    expect(insideScriptDirs(root, cfg({ script_dirs: ['linked'] }), path.join(root, 'scripts', 'run.sh'))).toBe(true);
    expect(insideScriptDirs(root, cfg({ script_dirs: [path.join(root, 'scripts')] }), path.join(root, 'scripts', 'run.sh'))).toBe(true);
    expect(insideScriptDirs(root, cfg({ script_dirs: ['/'] }), path.join(root, 'elsewhere', 'run.sh'))).toBe(true);
  });

  it('skips an entry that does not exist and takes nothing without script_dirs', () => {
    expect(insideScriptDirs(root, cfg({ script_dirs: ['missing', 'scripts'] }), path.join(root, 'scripts', 'run.sh'))).toBe(true);
    expect(insideScriptDirs(root, cfg({ script_dirs: ['missing'] }), path.join(root, 'missing', 'run.sh'))).toBe(false);
    expect(insideScriptDirs(root, cfg({}), path.join(root, 'scripts', 'run.sh'))).toBe(false);
  });

  it('never takes a file where clients write: queues/, the root tmp, or the configured tmpdir, even when a listed dir holds them', () => {
    const all = cfg({ script_dirs: ['.'] });
    expect(insideScriptDirs(root, all, path.join(root, 'elsewhere', 'run.sh'))).toBe(true);
    expect(insideScriptDirs(root, all, path.join(root, 'queues', 'q', 'run.sh'))).toBe(false);
    expect(insideScriptDirs(root, all, path.join(root, 'tmp', 'run.sh'))).toBe(false);
    const own = cfg({ script_dirs: ['.'], tmpdir: path.join(root, 'mytmp') });
    expect(insideScriptDirs(root, own, path.join(root, 'mytmp', 'run.sh'))).toBe(false);
    expect(insideScriptDirs(root, own, path.join(root, 'tmp', 'run.sh'))).toBe(true);
    expect(insideScriptDirs(root, cfg({ script_dirs: ['.'], tmpdir: path.join(root, 'no-such') }), path.join(root, 'tmp', 'run.sh'))).toBe(true);
  });
});

describe('the refusal texts', () => {
  it('lists the dirs, or says the config lists none', () => {
    expect(scriptDirsWanted(cfg({ script_dirs: ['a', 'b'] }))).toBe('a file inside script_dirs (a, b)');
    expect(scriptDirsWanted(cfg({ script_dirs: [] }))).toBe('a file inside script_dirs, and config/config.json lists none');
    expect(scriptDirsWanted(cfg({}))).toBe('a file inside script_dirs, and config/config.json lists none');
  });

  it('scriptOutsideProblem: null inside, else the SCRIPTERROR reason', () => {
    const c = cfg({ script_dirs: ['scripts'] });
    expect(scriptOutsideProblem(root, c, 'scripts/run.sh', path.join(root, 'scripts', 'run.sh'))).toBeNull();
    const out = path.join(root, 'elsewhere', 'run.sh');
    expect(scriptOutsideProblem(root, c, 'scripts/run.sh', out)).toBe(
      `script "scripts/run.sh" resolves to ${out}, outside script_dirs: a queue made over HTTP runs only a file inside script_dirs (scripts)`,
    );
  });
});
