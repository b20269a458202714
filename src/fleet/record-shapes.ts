// Records other hosts wrote in etcd, taken only in the shapes rq writes: every field is shown by the web, printed on terminals and logged.
import { isFleetName, isHttpUrl } from '../config/fleet-config.js';
import { type HostRecord, isHostRecord } from '../ipc/fleet-reply.js';
import { isValidQueueName } from '../message/names.js';
import { type SeenRecord, isSeenRecord, parseValue } from './fleet-keys.js';

/** A time as rq writes it (Date#toISOString): such a value from etcd is shown on terminals and pages, so nothing else is taken. */
const isIsoTime = (v: string | undefined): boolean => v !== undefined && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(v);
/** A version (`3.0.0`, `3.1.0-rc.1`), an instance (hex, or a name), a queue's status (`UP`, `DISK FULL`): short, printable, no escapes. */
const VERSION_RE = /^[0-9A-Za-z.+-]{1,64}$/;
const INSTANCE_RE = /^[0-9A-Za-z._-]{1,64}$/;
const STATUS_RE = /^[A-Z][A-Z ]{0,31}$/;
/** A URL as written, not only as parsed: the URL parser escapes control bytes, and the text shown is the one written. */
const isPlainUrl = (v: string): boolean => /^[\x21-\x7e]{1,2048}$/.test(v) && isHttpUrl(v);

/** Every field another host wrote is shown by the web and printed on terminals: only records of the shapes rq writes are taken. */
function trusted(rec: HostRecord): boolean {
  return (
    isFleetName(rec.host) &&
    isPlainUrl(rec.url) &&
    VERSION_RE.test(rec.version) &&
    isIsoTime(rec.started_at) &&
    INSTANCE_RE.test(rec.instance) &&
    Object.entries(rec.queues).every(([q, f]) => isValidQueueName(q) && STATUS_RE.test(f.status))
  );
}

/** A host's record (`hosts/<host>`) from its etcd value, or null when it is not of the shape rq writes. */
export function trustedHostRecord(value: string): HostRecord | null {
  const rec = parseValue(value, isHostRecord);
  return rec && trusted(rec) ? rec : null;
}

/** A `seen/<host>` record from its etcd value, or null when it is not of the shape rq writes. */
export function trustedSeenRecord(value: string): SeenRecord | null {
  const rec = parseValue(value, isSeenRecord);
  const ok = rec && isFleetName(rec.host) && isPlainUrl(rec.url) && isIsoTime(rec.joined_at) && (rec.left_at === undefined || isIsoTime(rec.left_at));
  return ok ? rec : null;
}
