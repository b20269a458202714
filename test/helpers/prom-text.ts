// Reads a /metrics body: client_python's parser (prom-parse.py; prom-client has none, and the npm
// parsers we tried drop the labels of labelled histograms) reads every line; the rules of text format
// 0.0.4 it does not enforce are checked here: HELP and TYPE once per family before its samples, a
// family's samples together, no series twice, cumulative histogram buckets with +Inf = _count.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type Labels = Record<string, string>;

/** Debian's python3-prometheus-client installs for the system python, whatever python3 comes first on PATH. */
const PYTHON = '/usr/bin/python3';
const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'prom-parse.py');

interface Family {
  name: string;
  type: string;
  help: string;
  samples: [string, Labels, number | string][];
}

export interface PromHistogramView {
  /** Cumulative counts by `le` as written (`0.005` … `+Inf`). */
  buckets: Record<string, number>;
  sum: number;
  count: number;
}

export interface Scrape {
  /** Families by name as client_python names them (a counter without its `_total`). */
  families: Map<string, Family>;
  /** The value of the sample `name` (as written) with exactly these labels; undefined when absent. */
  value(name: string, labels?: Labels): number | undefined;
  histogram(name: string, labels: Labels): PromHistogramView | undefined;
  /** Every sample's series (`name{labels}` as written) whose labels include `label="value"`. */
  seriesWith(label: string, value: string): string[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/;
const number = (v: number | string): number => (typeof v === 'number' ? v : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : NaN);
const sameLabels = (a: Labels, b: Labels) => Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);

/** The structural rules a line parser does not see. */
function checkStructure(text: string): void {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a line feed');
  const declared = new Map<string, { help: boolean; type?: string }>();
  const closed = new Set<string>();
  const seen = new Set<string>();
  let current: string | null = null;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
    if (meta) {
      const [, kind, name, rest = ''] = meta;
      const d = declared.get(name) ?? { help: false };
      if (closed.has(name) || (kind === 'HELP' ? d.help : d.type !== undefined)) throw new Error(`# ${kind} ${name}: twice, or after its samples`);
      if (kind === 'HELP') d.help = true;
      else d.type = rest;
      declared.set(name, d);
      if (current !== null && current !== name) closed.add(current);
      current = name;
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const [, name, labels = ''] = m;
    const stem = name.replace(/_(bucket|sum|count)$/, '');
    const family = declared.get(stem)?.type === 'histogram' ? stem : name;
    if (family !== current) throw new Error(`${name}: sample outside its family's block (after ${current})`);
    if (!declared.get(family)?.help || declared.get(family)?.type === undefined) throw new Error(`${family}: sample before its HELP and TYPE`);
    if (seen.has(`${name}${labels}`)) throw new Error(`${name}${labels}: written twice`);
    seen.add(`${name}${labels}`);
  }
}

function histogramOf(f: Family, labels: Labels): PromHistogramView | undefined {
  const mine = f.samples.filter(([, l]) => sameLabels(Object.fromEntries(Object.entries(l).filter(([k]) => k !== 'le')), labels));
  if (mine.length === 0) return undefined;
  const buckets = mine.filter(([n]) => n === `${f.name}_bucket`).map(([, l, v]) => [l.le, number(v)] as const);
  const one = (suffix: string) => mine.find(([n]) => n === `${f.name}_${suffix}`);
  const count = one('count');
  const sum = one('sum');
  if (!count || !sum) throw new Error(`${f.name}${JSON.stringify(labels)}: no _count or _sum`);
  const ordered = [...buckets].sort((a, b) => number(a[0]) - number(b[0]));
  for (let i = 1; i < ordered.length; i++)
    if (ordered[i][1] < ordered[i - 1][1]) throw new Error(`${f.name}${JSON.stringify(labels)}: bucket le=${ordered[i][0]} below the one before`);
  if (ordered.at(-1)?.[0] !== '+Inf' || ordered.at(-1)![1] !== number(count[2]))
    throw new Error(`${f.name}${JSON.stringify(labels)}: +Inf bucket missing or not equal to _count`);
  return { buckets: Object.fromEntries(buckets), sum: number(sum[2]), count: number(count[2]) };
}

export function parseScrape(text: string): Scrape {
  checkStructure(text);
  let json: string;
  try {
    json = execFileSync(PYTHON, [SCRIPT], { input: text, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (err) {
    throw new Error(`client_python refused the exposition: ${(err as { stderr?: string }).stderr ?? (err as Error).message}`, { cause: err });
  }
  const families = new Map((JSON.parse(json) as Family[]).map((f) => [f.name, f]));
  for (const f of families.values()) {
    if (f.type !== 'histogram') continue;
    const sets = new Map(
      f.samples.map(([, l]) => {
        const rest = Object.fromEntries(Object.entries(l).filter(([k]) => k !== 'le'));
        return [JSON.stringify(rest), rest];
      }),
    );
    for (const labels of sets.values()) histogramOf(f, labels);
  }
  const samples = [...families.values()].flatMap((f) => f.samples);
  return {
    families,
    value(name, labels = {}) {
      const s = samples.find(([n, l]) => n === name && sameLabels(l, labels));
      return s === undefined ? undefined : number(s[2]);
    },
    histogram(name, labels) {
      const f = families.get(name);
      return f?.type === 'histogram' ? histogramOf(f, labels) : undefined;
    },
    seriesWith(label, value) {
      const needle = `${label}="${value}"`;
      return text
        .split('\n')
        .filter((l) => !l.startsWith('#') && (l.includes(`{${needle}`) || l.includes(`,${needle}`)))
        .map((l) => l.slice(0, l.lastIndexOf(' ')));
    },
  };
}
