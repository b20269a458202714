// Bodies of waiting messages left on disk: a queued message keeps its ids, due, order fields and param fingerprints in memory, and reads params back from its msg file when asked.
import { createHash } from '../lazy-builtins.js';
import path from 'node:path';
import { RqError } from '../errors.js';
import type { Message } from '../message/message.js';
import { readMessageFileSync } from './beneath.js';

/** The fields that carry a message's payload, up to 128 KiB each. */
export const BODY_FIELDS = ['param1', 'param2', 'param3', 'param4', 'src'] as const;
/** Below this many characters of body a message stays whole: a read back would cost more than it saves. */
export const LIGHT_MIN_CHARS = 1024;
/** A param longer than this is compared by its digest (blocking, coalescing, single_que). */
const SHORT_PARAM = 64;

type BodyField = (typeof BODY_FIELDS)[number];

/**
 * Kept on a light message as non-enumerable symbol-keyed slots, out of JSON and spreads: that it is
 * light, and each long body field's fingerprint (what the dispatcher compares params by). Slots of
 * the message itself, not an object of their own: a deep que pays for every object per message.
 */
const LIGHT = Symbol('rq.light');
const FINGERPRINT = Object.fromEntries(BODY_FIELDS.map((f) => [f, Symbol(`rq.fingerprint.${f}`)])) as Record<BodyField, symbol>;
type Light = Message & { [key: symbol]: unknown };

function hidden(value: unknown): PropertyDescriptor {
  return { value, writable: true, enumerable: false, configurable: true };
}

/**
 * A param as blocking_params, coalesce_params and single_que compare it: itself when short, else a
 * NUL and its sha256 (no param holds a NUL, so it cannot equal a real value). Equal contents give
 * equal fingerprints whether the message is whole or light.
 */
export function fingerprint(v: unknown): unknown {
  if (typeof v !== 'string' || v.length <= SHORT_PARAM) return v ?? null;
  // One flat 33-character string (a concatenation would keep a chain of pieces per message).
  return Buffer.concat([NUL, createHash('sha256').update(v).digest()]).toString('latin1');
}

const NUL = Buffer.from([0]);

/** A message's param by fingerprint, without reading a light message's body back. */
export function paramFingerprint(msg: Message, field: string): unknown {
  const slot = (FINGERPRINT as Record<string, symbol | undefined>)[field];
  const kept = slot === undefined ? undefined : (msg as Light)[slot];
  return kept !== undefined ? kept : fingerprint(msg[field]);
}

/** A body field longer than this is left on disk; a shorter one costs less kept than its fingerprint would. */
const LEFT_ON_DISK = 256;
/** Short values many messages repeat (dest, status) share one string; bounded, since a value may be unique. */
const SHARED_VALUES = 1024;

/**
 * Makes queued messages light: the que holds a copy whose long body fields are accessors that read
 * the msg file back (whoever gets it from the que still sees every field, and JSON.stringify and
 * spreads still copy them), and `hydrate` turns them back into plain fields, in place, before the
 * message leaves que/. The strings themselves are dropped, so a deep que of large messages costs
 * what its ids cost. A message is light while it holds its fingerprints (no set of them to keep).
 */
export class MessageBodies {
  /** One message read back, kept for the rest of the event-loop turn: a JSON.stringify asks for each field in a row. */
  private cached: { id: string; body: Message } | null = null;
  private readonly accessors: Record<BodyField, PropertyDescriptor>;
  private readonly shared = new Map<string, string>();
  /** What a message made here has before its id in orig_msg_id (`http://host:port/q/<queue>/`), from the first one seen. */
  private origBase: string | undefined;
  /** orig_msg_id as origBase + msg_id: the URL costs nothing per message. */
  private readonly ownOrigin: PropertyDescriptor;

  /** `dirs`: que/ where a light message lives, then run/ where the dispatcher may just have moved it. */
  constructor(
    private readonly dirs: { que: string; run: string },
    private readonly readFile: (file: string) => string = (file) => readMessageFileSync(file),
  ) {
    // One getter and setter per field, shared by every light message: `this` says whose body to read.
    const self = this;
    const entries = BODY_FIELDS.map((f) => {
      const descriptor: PropertyDescriptor = {
        get(this: Message) {
          return self.body(this)[f];
        },
        set(this: Light, v: unknown) {
          Object.defineProperty(this, f, { value: v, writable: true, enumerable: true, configurable: true });
          this[FINGERPRINT[f]] = undefined;
        },
        enumerable: true,
        configurable: true,
      };
      return [f, descriptor] as const;
    });
    this.accessors = Object.fromEntries(entries) as Record<BodyField, PropertyDescriptor>;
    this.ownOrigin = {
      get(this: Message) {
        return self.origBase + this.msg_id;
      },
      set(this: Message, v: unknown) {
        Object.defineProperty(this, 'orig_msg_id', { value: v, writable: true, enumerable: true, configurable: true });
      },
      enumerable: true,
      configurable: true,
    };
  }

  isLight(msg: Message): boolean {
    return (msg as Light)[LIGHT] === true;
  }

  /**
   * The message as the que should hold it: itself when its body is small (or it is light already),
   * else a light copy, its keys in the same order. A copy, not the message changed in place:
   * turning a field into an accessor puts an object in V8's dictionary mode (about 500 bytes more
   * each), while a fresh object built key by key shares one hidden class with every other.
   */
  lighten(msg: Message): Message {
    if (this.isLight(msg)) return msg;
    let chars = 0;
    for (const f of BODY_FIELDS) if (typeof msg[f] === 'string') chars += (msg[f] as string).length;
    if (chars < LIGHT_MIN_CHARS) return msg;
    const copy = {} as Light;
    const left: [BodyField, unknown][] = [];
    for (const [k, v] of Object.entries(msg)) {
      if (typeof v === 'string' && v.length > LEFT_ON_DISK && (BODY_FIELDS as readonly string[]).includes(k)) {
        left.push([k as BodyField, fingerprint(v)]);
        Object.defineProperty(copy, k, this.accessors[k as BodyField]);
      } else if (k === 'orig_msg_id' && this.madeHere(v, msg.msg_id)) Object.defineProperty(copy, k, this.ownOrigin);
      else copy[k] = this.share(v);
    }
    Object.defineProperty(copy, LIGHT, hidden(true));
    for (const [f, fp] of left) Object.defineProperty(copy, FINGERPRINT[f], hidden(fp));
    return copy;
  }

  /** True when orig_msg_id is origBase followed by the id (the first such URL seen sets origBase). */
  private madeHere(v: unknown, id: string): boolean {
    if (typeof v !== 'string' || !v.endsWith(`/${id}`)) return false;
    const base = v.slice(0, v.length - id.length);
    this.origBase ??= base;
    return base === this.origBase;
  }

  /** One string for a short value seen before: a deep que repeats its dest and status in every message. */
  private share(v: unknown): unknown {
    if (typeof v !== 'string' || v.length > 32) return v;
    const known = this.shared.get(v);
    if (known !== undefined) return known;
    if (this.shared.size < SHARED_VALUES) this.shared.set(v, v);
    return v;
  }

  /**
   * Gives a light message its body back as plain fields, before it leaves que/. False, the message
   * still light, when its msg file cannot be read now (EMFILE, say): it never runs or is written
   * back without its body, since any later read of a field fails with the cause instead.
   */
  hydrate(msg: Message): boolean {
    if (!this.isLight(msg)) return true;
    let body: Message;
    try {
      body = this.body(msg);
    } catch {
      return false;
    }
    const light = msg as Light;
    light[LIGHT] = false;
    for (const f of BODY_FIELDS) {
      light[FINGERPRINT[f]] = undefined;
      if (Object.hasOwn(msg, f) && Object.getOwnPropertyDescriptor(msg, f)?.get)
        Object.defineProperty(msg, f, { value: body[f], writable: true, enumerable: true, configurable: true });
    }
    return true;
  }

  private body(msg: Message): Message {
    const id = msg.msg_id;
    if (this.cached?.id === id) return this.cached.body;
    const body = this.read(id);
    if (!this.cached) setImmediate(() => (this.cached = null));
    this.cached = { id, body };
    return body;
  }

  private read(id: string): Message {
    let last: unknown;
    for (const dir of [this.dirs.que, this.dirs.run]) {
      try {
        return JSON.parse(this.readFile(path.join(dir, id, 'msg'))) as Message;
      } catch (err) {
        last = err;
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') break;
      }
    }
    throw RqError.of('RQ_ERR_DISK', `reading back the params of queued message ${id}`, (last as Error).message).causedBy(last);
  }
}
