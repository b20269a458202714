// Reads a /metrics body: parse-prometheus-text-format (client_python's line parser, ported) does the lines; the checks it leaves out are made here: HELP and TYPE once per family before its samples, a family's samples together, every value a float, no series twice, cumulative histogram buckets with +Inf = _count.
import parsePrometheusTextFormat, { type ParsedFamily, type ParsedMetric } from 'parse-prometheus-text-format';

export type Labels = Record<string, string>;

export interface PromHistogramView {
  /** Cumulative counts by `le` as written (`0.005` … `+Inf`). */
  buckets: Record<string, number>;
  sum: number;
  count: number;
}

export interface Scrape {
  families: Map<string, ParsedFamily>;
  /** The value of a counter or gauge sample with exactly these labels; undefined when absent. */
  value(name: string, labels?: Labels): number | undefined;
  histogram(name: string, labels: Labels): PromHistogramView | undefined;
  /** Every sample line's series (`name{labels}` as written) whose labels include `label="value"`. */
  seriesWith(label: string, value: string): string[];
}

const FLOAT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$|^[+-]?Inf$|^NaN$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/;

function num(s: string | undefined, what: string): number {
  if (s === undefined || !FLOAT.test(s)) throw new Error(`${what}: ${JSON.stringify(s)} is not a float of the text format`);
  return s.endsWith('Inf') ? (s.startsWith('-') ? -Infinity : Infinity) : Number(s);
}

const sameLabels = (a: Labels | undefined, b: Labels) => {
  const x = a ?? {};
  return Object.keys(x).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => x[k] === v);
};

/** The structural rules of text format 0.0.4 that a line parser does not see. */
function checkStructure(text: string): void {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a line feed');
  const help = new Set<string>();
  const types = new Map<string, string>();
  const closed = new Set<string>();
  const seen = new Set<string>();
  let current: string | null = null;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta;
      if (closed.has(name) || (current !== name && (help.has(name) || types.has(name)))) throw new Error(`# ${kind} ${name} after its samples or twice`);
      if (kind === 'HELP') help.add(name);
      else types.set(name, rest);
      if (current !== null && current !== name) closed.add(current);
      current = name;
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const [, name, labels = '', value] = m;
    const base = types.get(name.replace(/_(bucket|sum|count)$/, '')) === 'histogram' ? name.replace(/_(bucket|sum|count)$/, '') : name;
    if (base !== current) throw new Error(`${name}: sample outside its family's block (after ${current})`);
    if (!help.has(base) || !types.has(base)) throw new Error(`${base}: sample before its HELP and TYPE`);
    num(value, line);
    const series = `${name}${labels}`;
    if (seen.has(series)) throw new Error(`${series}: written twice`);
    seen.add(series);
  }
}

function checkHistogram(f: ParsedFamily, m: ParsedMetric): void {
  const entries = Object.entries(m.buckets ?? {}).map(([le, v]) => [num(le, `${f.name} le`), num(v, `${f.name} bucket`)] as const);
  entries.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < entries.length; i++) if (entries[i][1] < entries[i - 1][1]) throw new Error(`${f.name}${JSON.stringify(m.labels)}: bucket le=${entries[i][0]} below the one before`);
  const inf = entries.at(-1);
  if (inf?.[0] !== Infinity || inf[1] !== num(m.count, `${f.name}_count`)) throw new Error(`${f.name}${JSON.stringify(m.labels)}: +Inf bucket missing or not equal to _count`);
}

export function parseScrape(text: string): Scrape {
  checkStructure(text);
  const families = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
  for (const f of families.values()) if (f.type === 'HISTOGRAM') for (const m of f.metrics) checkHistogram(f, m);
  const find = (name: string, labels: Labels) => families.get(name)?.metrics.find((m) => sameLabels(m.labels, labels));
  return {
    families,
    value(name, labels = {}) {
      const m = find(name, labels);
      return m === undefined ? undefined : num(m.value, name);
    },
    histogram(name, labels) {
      const m = find(name, labels);
      if (m?.buckets === undefined) return undefined;
      return { buckets: Object.fromEntries(Object.entries(m.buckets).map(([le, v]) => [le, num(v, name)])), sum: num(m.sum, name), count: num(m.count, name) };
    },
    seriesWith(label, value) {
      const needle = `${label}="${value}"`;
      return text.split('\n').filter((l) => !l.startsWith('#') && (l.includes(`{${needle}`) || l.includes(`,${needle}`))).map((l) => l.slice(0, l.lastIndexOf(' ')));
    },
  };
}
