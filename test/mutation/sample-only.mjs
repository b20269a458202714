// Stryker ignorer for `npm run mutate:sample` (docs/testing.md): only the drawn mutants run. A node is
// ignored when it holds no drawn location, so everything outside the sample costs nothing.
import fs from 'node:fs';
import path from 'node:path';
import { PluginKind, declareValuePlugin } from '@stryker-mutator/api/plugin';

/** relative file → babel locations [startLine, startCol, endLine, endCol] of the drawn mutants */
const drawn = process.env.RQ_MUTATE_SAMPLE ? JSON.parse(fs.readFileSync(process.env.RQ_MUTATE_SAMPLE, 'utf8')) : {};

const holds = (loc, [sl, sc, el, ec]) =>
  (loc.start.line < sl || (loc.start.line === sl && loc.start.column <= sc)) && (loc.end.line > el || (loc.end.line === el && loc.end.column >= ec));

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, 'sample-only', {
    shouldIgnore(p) {
      const file = p.hub?.file?.opts?.filename;
      const loc = p.node.loc;
      if (!file || !loc) return undefined;
      const rel = path.relative(process.cwd(), file).split(path.sep).join('/');
      const wanted = drawn[rel] ?? [];
      return wanted.some((w) => holds(loc, w)) ? undefined : 'not in the drawn sample';
    },
  }),
];
