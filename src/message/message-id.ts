// Message id shapes: the UTC stamp, the id from stamp + inode, the hash-dir split and full id URLs.

/** The second whose `YYYYMMDD.HHMM.SS.` idStamp made last: the creates of one second format their date once. */
let stampSecond = NaN;
let stampPrefix = '';

/** `YYYYMMDD.HHMM.SS.mmm` in UTC. */
export function idStamp(ms: number): string {
  const whole = Math.trunc(ms);
  const second = Math.floor(whole / 1000);
  if (second !== stampSecond) {
    const d = new Date(second * 1000);
    const p = (n: number) => String(n).padStart(2, '0');
    stampPrefix = `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}.${p(d.getUTCHours())}${p(d.getUTCMinutes())}.${p(d.getUTCSeconds())}.`;
    stampSecond = second;
  }
  return stampPrefix + String(whole - second * 1000).padStart(3, '0');
}

const HASH_RE = /^\.?(\d{8})\.(\d{2})(\d{2})/;

/** `[YYYYMMDD, HH, MM]` of an id, or null when the id has no hash-dir shape. */
export function hashParts(id: string): [string, string, string] | null {
  const m = HASH_RE.exec(id);
  return m ? [m[1], m[2], m[3]] : null;
}

/** The epoch milliseconds encoded in an id (UTC). */
export function idTime(id: string): number | null {
  const m = /^\.?(\d{4})(\d{2})(\d{2})\.(\d{2})(\d{2})\.(\d{2})\.(\d{3})/.exec(id);
  if (!m) return null;
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], +m[7]);
}

export interface HostInfo {
  host: string;
  port: string | number;
  /** relative_root with exactly one trailing slash, e.g. "/" or "/therq/". */
  root: string;
}

/** `http://host:port/root/` — RQ_HOST, and the prefix of every full id. */
export function hostUrl(h: HostInfo): string {
  return `http://${h.host}:${h.port}${h.root}`;
}

export function fullId(h: HostInfo, queue: string, id: string): string {
  return `${hostUrl(h)}q/${queue}/${id}`;
}

/** Splits a full id (or any URL/path containing /q/<q>/<id>) into queue and short id. */
export function parseFullId(text: string): { queue: string; id: string } | null {
  const m = /\/q\/([^/]+)\/([^/?#]+)\/?$/.exec(text);
  if (!m) return null;
  try {
    return { queue: decodeURIComponent(m[1]), id: decodeURIComponent(m[2]) };
  } catch {
    return null; // a malformed %-escape is not a full id
  }
}

/** Normalises relative_root to a leading and exactly one trailing slash. */
export function normaliseRelativeRoot(root: string | undefined): string {
  const trimmed = (root ?? '').replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? '/' : `/${trimmed}/`;
}
