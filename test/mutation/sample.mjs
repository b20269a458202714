// `npm run mutate:sample` (docs/testing.md): the whole-suite mutation score of src/ estimated from a seeded,
// stratified random sample of mutated locations (every mutant at a drawn location is tested: a cluster sample),
// because testing all ~12,000 mutants against the whole suite takes days on two cores.
//   node test/mutation/sample.mjs [--seed N] [--core N] [--web-security N] [--rest N] [--score-only]
// --score-only scores a finished run, or one stopped early from the results it streamed (stream-results.mjs).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : Number(process.argv[i + 1]);
};
const SEED = arg('seed', 12);
const SIZES = { core: arg('core', 110), 'web-security': arg('web-security', 45), rest: arg('rest', 95) };
const OUT = 'reports/mutation-sample';
const LIST = 'reports/mutation-list/mutation.json';
const WEB_SECURITY = ['basic-auth', 'access-control', 'params', 'request-params', 'send-file', 'views/html', 'script-dirs'].map((f) => `src/web/${f}.ts`);

/** The strata: the queue core's folders, the web's security code, and everything else. */
const stratumOf = (file) =>
  WEB_SECURITY.includes(file) || file === 'src/config/exposure.ts' ? 'web-security' : /^src\/(queue|spool|ipc|message)\//.test(file) ? 'core' : 'rest';
const keyOf = (file, m) => `${file}|${m.mutatorName}|${m.replacement}|${JSON.stringify(m.location)}`;

function mutantsOf(report) {
  return Object.entries(report.files).flatMap(([file, v]) => v.mutants.map((m) => ({ file, stratum: stratumOf(file), ...m })));
}

function stryker(config, env = {}) {
  execFileSync('npx', ['stryker', 'run', config], { stdio: 'inherit', env: { ...process.env, ...env } });
}

function draw() {
  if (!fs.existsSync(LIST)) stryker('stryker.list.config.mjs');
  const all = mutantsOf(JSON.parse(fs.readFileSync(LIST, 'utf8'))).filter((m) => m.status !== 'Ignored');
  let s = SEED;
  const random = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const chosen = [];
  const sizes = {};
  for (const [stratum, n] of Object.entries(SIZES)) {
    const inStratum = all.filter((m) => m.stratum === stratum);
    const atLocation = new Map();
    for (const m of inStratum) {
      const where = `${m.file}|${JSON.stringify(m.location)}`;
      atLocation.set(where, [...(atLocation.get(where) ?? []), m]);
    }
    const pool = [...atLocation.values()];
    for (let i = pool.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [pool[i], pool[j]] = [pool[j], pool[i]];
    }
    sizes[stratum] = inStratum.length;
    chosen.push(...pool.slice(0, n).flat());
  }
  const ranges = {};
  for (const m of chosen) {
    const { start, end } = m.location; // the report's columns are 1-based, babel's 0-based
    const range = [start.line, start.column - 1, end.line, end.column - 1];
    if (!(ranges[m.file] ??= []).some((r) => r.join() === range.join())) ranges[m.file].push(range);
  }
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(`${OUT}/drawn.json`, JSON.stringify(ranges));
  fs.writeFileSync(`${OUT}/chosen.json`, JSON.stringify({ seed: SEED, locations: SIZES, sizes, keys: chosen.map((m) => keyOf(m.file, m)) }));
}

/** Wilson interval, 95 %. */
function wilson(k, n) {
  if (!n) return [0, 1];
  const z = 1.96,
    p = k / n,
    d = 1 + (z * z) / n;
  const mid = (p + (z * z) / (2 * n)) / d,
    half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [mid - half, mid + half];
}

function score() {
  const { seed, sizes, keys } = JSON.parse(fs.readFileSync(`${OUT}/chosen.json`, 'utf8'));
  const wanted = new Set(keys);
  // A run stopped before its end wrote no report; the results streamed so far still score it.
  const tested = fs.existsSync(`${OUT}/mutation.json`)
    ? mutantsOf(JSON.parse(fs.readFileSync(`${OUT}/mutation.json`, 'utf8')))
    : fs
        .readFileSync(`${OUT}/results.jsonl`, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const m = JSON.parse(l);
          return { ...m, stratum: stratumOf(m.file) };
        });
  const results = tested.filter((m) => wanted.has(keyOf(m.file, m)));
  const groups = {};
  const add = (g, m) => {
    const x = (groups[g] ??= { detected: 0, undetected: 0, invalid: 0, static: 0 });
    if (m.status === 'Killed' || m.status === 'Timeout') x.detected++;
    else if (m.status === 'Survived' || m.status === 'NoCoverage') x.undetected++;
    else if (m.status === 'Ignored') x.static++;
    else x.invalid++;
  };
  for (const m of results) {
    add(m.stratum, m);
    add(m.file.split('/').slice(0, 2).join('/'), m);
  }
  const rate = (g) => {
    const n = g.detected + g.undetected;
    return { ...g, score: n ? +((100 * g.detected) / n).toFixed(1) : null, ci95: wilson(g.detected, n).map((x) => +(100 * x).toFixed(1)) };
  };
  const strata = Object.fromEntries(Object.keys(sizes).map((s) => [s, rate(groups[s] ?? { detected: 0, undetected: 0, invalid: 0, static: 0 })]));
  const total = Object.values(sizes).reduce((a, b) => a + b, 0);
  const overall = Object.entries(strata).reduce((acc, [s, r]) => acc + ((r.score ?? 0) * sizes[s]) / total, 0);
  const survivors = results
    .filter((m) => m.status === 'Survived' || m.status === 'NoCoverage')
    .map((m) => ({
      file: m.file,
      line: m.location.start.line,
      mutator: m.mutatorName,
      replacement: m.replacement,
      status: m.status,
    }));
  const summary = {
    seed,
    sampled: keys.length,
    matched: results.length,
    population: sizes,
    strata,
    'src/ (weighted by stratum size)': +overall.toFixed(1),
    folders: Object.fromEntries(
      Object.entries(groups)
        .filter(([g]) => g.startsWith('src/'))
        .map(([g, x]) => [g, rate(x)]),
    ),
    survivors,
  };
  fs.writeFileSync(`${OUT}/score.json`, JSON.stringify(summary, null, 2));
  console.log(JSON.stringify(summary, null, 2));
}

if (!process.argv.includes('--score-only')) {
  draw();
  for (const f of ['results.jsonl', 'mutation.json']) fs.rmSync(`${OUT}/${f}`, { force: true });
  stryker('stryker.sample.config.mjs', { RQ_MUTATE_SAMPLE: `${OUT}/drawn.json` });
}
score();
