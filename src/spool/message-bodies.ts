// Bodies of waiting messages left on disk: a queued message keeps its ids, due and order fields in memory, and reads params back from its msg file when asked.
import fs from 'node:fs';
import path from 'node:path';
import type { Message } from '../message/message.js';

/** The fields that carry a message's payload, up to 128 KiB each; nothing orders or indexes by them. */
export const BODY_FIELDS = ['param1', 'param2', 'param3', 'param4', 'src'] as const;
/** Below this many characters of body a message stays whole: a read back would cost more than it saves. */
export const LIGHT_MIN_CHARS = 1024;

type BodyField = (typeof BODY_FIELDS)[number];

/**
 * Makes queued messages light in place: their body fields become accessors that read the msg file in
 * `queDir` (whoever holds the object still sees every field, and JSON.stringify and spreads still
 * copy them), and `hydrate` turns them back into plain fields before the message leaves que/.
 * The strings themselves are dropped, so a deep que of large messages costs what its ids cost.
 */
export class MessageBodies {
  private readonly light = new WeakSet<Message>();
  /** One message read back, kept for the rest of the event-loop turn: a JSON.stringify asks for each field in a row. */
  private cached: { id: string; body: Message } | null = null;
  private readonly accessors: Record<BodyField, PropertyDescriptor>;

  constructor(
    private readonly queDir: string,
    private readonly readFile: (file: string) => string = (file) => fs.readFileSync(file, 'utf8'),
  ) {
    // One getter and setter per field, shared by every light message: `this` says whose body to read.
    const self = this;
    const entries = BODY_FIELDS.map((f) => {
      const descriptor: PropertyDescriptor = {
        get(this: Message) {
          return self.body(this)[f];
        },
        set(this: Message, v: unknown) {
          Object.defineProperty(this, f, { value: v, writable: true, enumerable: true, configurable: true });
        },
        enumerable: true,
        configurable: true,
      };
      return [f, descriptor] as const;
    });
    this.accessors = Object.fromEntries(entries) as Record<BodyField, PropertyDescriptor>;
  }

  isLight(msg: Message): boolean {
    return this.light.has(msg);
  }

  /** Drops the body fields of a message whose msg file in que/ holds them, when they are worth it. */
  lighten(msg: Message): void {
    if (this.light.has(msg)) return;
    let chars = 0;
    for (const f of BODY_FIELDS) if (typeof msg[f] === 'string') chars += (msg[f] as string).length;
    if (chars < LIGHT_MIN_CHARS) return;
    // Redefining a key keeps its place, so the msg written back from this object keeps its key order.
    for (const f of BODY_FIELDS) if (Object.hasOwn(msg, f)) Object.defineProperty(msg, f, this.accessors[f]);
    this.light.add(msg);
  }

  /**
   * Gives a light message its body back as plain fields, read from que/ before the message leaves
   * it. Never throws: it runs inside the dispatcher's pump. A msg file gone from under a running
   * queue (or removed by a failed create) leaves the fields empty; whatever moves the message next
   * finds its directory missing and says so.
   */
  hydrate(msg: Message): void {
    if (!this.light.has(msg)) return;
    let body: Partial<Message> = {};
    try {
      body = this.body(msg);
    } catch {
      // As said above: the next step on this message reports the missing directory.
    }
    this.light.delete(msg);
    for (const f of BODY_FIELDS) {
      if (Object.hasOwn(msg, f) && Object.getOwnPropertyDescriptor(msg, f)?.get) Object.defineProperty(msg, f, { value: body[f], writable: true, enumerable: true, configurable: true });
    }
  }

  private body(msg: Message): Message {
    const id = msg.msg_id;
    if (this.cached?.id === id) return this.cached.body;
    const file = path.join(this.queDir, id, 'msg');
    let body: Message;
    try {
      body = JSON.parse(this.readFile(file)) as Message;
    } catch (err) {
      throw new Error(`the body of queued message ${id} cannot be read back from ${file}: ${(err as Error).message}`);
    }
    if (!this.cached) setImmediate(() => (this.cached = null));
    this.cached = { id, body };
    return body;
  }
}
