// The folders of src/ form layers; an import may only go down (docs/architecture.md, design.md §3).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '..');
const SRC = path.join(ROOT, 'src');
/** Where the project's own code lives, whatever its language (eslint's max-lines sees only its JavaScript and TypeScript). */
const CODE_DIRS = ['src', 'test', 'bench', 'scripts', 'tools', 'bin', '.ci'];
const CODE = /\.(ts|mjs|cjs|js|c|h|py|sh|rb|css|html)$/;

/** Lowest first. Units on one line may import each other's layers below, never their own peers'. */
const LAYERS: string[][] = [
  ['log-destination', 'log-format', 'lazy-builtins'],
  ['errors', 'version', 'log', 'args', 'backoff'],
  ['message', 'path-exists'],
  ['config'],
  ['ipc', 'daemon'],
  ['spool'],
  ['queue'],
  ['script-kit'],
  ['fleet'],
  ['timers', 'mgr'],
  ['relay', 'builtins'],
  ['web'],
  ['cli'],
];

/** Code files under dir, by extension and, for a script without one (bin/, .ci/), by its `#!` line. */
function codeFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : codeFiles(p);
    if (CODE.test(e.name)) return [p];
    return e.isFile() && !e.name.includes('.') && fs.readFileSync(p, 'utf8').startsWith('#!') ? [p] : [];
  });
}

function unitOf(file: string): string {
  const rel = path.relative(SRC, file).split(path.sep);
  return rel.length === 1 ? rel[0].replace(/\.(ts|js)$/, '') : rel[0];
}

function layerOf(unit: string): number {
  const i = LAYERS.findIndex((l) => l.includes(unit));
  if (i < 0) throw new Error(`src/${unit} is in no layer of test/layering.test.ts: add it where it belongs`);
  return i;
}

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Inside src/queue/, lowest first, by the same rule: a folder, or a file directly in src/queue/, is a unit. */
const QUEUE_LAYERS: string[][] = [
  ['rules'],
  ['launch'],
  ['status'],
  ['index'],
  ['coordination'],
  ['transitions'],
  ['lifecycle'],
  ['dependencies', 'tags'],
  ['observers', 'cron'],
  ['queue-deps'],
  ['queue', 'node-flags'],
  ['commands'],
  ['queue-main'],
];
const QUEUE = path.join(SRC, 'queue');

function queueUnitOf(file: string): string {
  return path
    .relative(QUEUE, file)
    .split(path.sep)[0]
    .replace(/\.(ts|js)$/, '');
}

function queueLayerOf(unit: string): number {
  const i = QUEUE_LAYERS.findIndex((l) => l.includes(unit));
  if (i < 0) throw new Error(`src/queue/${unit} is in no layer of QUEUE_LAYERS in test/layering.test.ts: add it where it belongs`);
  return i;
}

describe('layering', () => {
  it('every import in src/ goes to its own folder or a layer below', () => {
    const bad: string[] = [];
    for (const file of tsFiles(SRC)) {
      const from = unitOf(file);
      const text = fs.readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
        const to = unitOf(path.resolve(path.dirname(file), m[1]));
        if (to === from) continue;
        if (layerOf(to) >= layerOf(from)) bad.push(`${path.relative(SRC, file)} imports ${m[1]} (${from} → ${to})`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('inside src/queue/, every import goes to its own sub-folder or one below', () => {
    const bad: string[] = [];
    for (const file of tsFiles(QUEUE)) {
      const from = queueUnitOf(file);
      for (const m of fs.readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
        const target = path.resolve(path.dirname(file), m[1]);
        if (!target.startsWith(QUEUE + path.sep)) continue;
        const to = queueUnitOf(target);
        if (to !== from && queueLayerOf(to) >= queueLayerOf(from)) bad.push(`${path.relative(SRC, file)} imports ${m[1]} (${from} → ${to})`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('no source file, in any language, is over 300 lines', () => {
    const long = CODE_DIRS.flatMap((d) => codeFiles(path.join(ROOT, d)))
      .map((f) => ({ f: path.relative(ROOT, f), text: fs.readFileSync(f, 'utf8') }))
      // In a Stryker sandbox some sources are instrumented copies: the rule is about the code as written.
      .filter((x) => !x.text.includes('stryNS_'))
      // Stryker's sandbox puts `// @ts-nocheck` atop every file: not a line of ours. A final newline ends the last line (as eslint's max-lines counts), it starts none.
      .map((x) => ({
        f: x.f,
        n: x.text
          .replace(/^\/\/ @ts-nocheck\n/, '')
          .replace(/\n$/, '')
          .split('\n').length,
      }))
      .filter((x) => x.n > 300);
    expect(long).toEqual([]);
  });
});
