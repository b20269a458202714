// Stryker reporter for `npm run mutate:sample` (docs/testing.md): appends each mutant's result as one JSON line
// the moment it is known, because Stryker's own reports are written only at the end and a run of hours that
// is stopped early would otherwise name none of its survivors.
import fs from 'node:fs';
import path from 'node:path';
import { PluginKind, declareClassPlugin } from '@stryker-mutator/api/plugin';

/** Where sample.mjs --score-only reads them (its OUT directory). */
const STREAM_FILE = 'reports/mutation-sample/results.jsonl';

class StreamResults {
  onMutantTested(m) {
    const line = {
      file: path.relative(process.cwd(), m.fileName).split(path.sep).join('/'),
      mutatorName: m.mutatorName,
      replacement: m.replacement,
      location: m.location,
      status: m.status,
      killedBy: m.killedBy,
      statusReason: m.statusReason,
    };
    fs.appendFileSync(STREAM_FILE, `${JSON.stringify(line)}\n`);
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.Reporter, 'stream-results', StreamResults)];
