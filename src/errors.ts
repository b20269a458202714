// The one catalogue of coded errors: code, HTTP status and message template (%s holes), as fastify's lib/errors.js keeps them.

export const ERRORS = {
  // Bad input: the text names the field, what was expected and what was received.
  // Before INVALID_FIELD: a batch refusal carries a message's own refusal text after its index.
  RQ_ERR_BATCH_MESSAGE: { status: 400, message: 'messages[%s]: %s' },
  RQ_ERR_INVALID_FIELD: { status: 400, message: '%s: expected %s, received %s' },
  // A key of a message that is no field but a misspelling of one (message/create-fields.ts).
  RQ_ERR_UNKNOWN_FIELD: { status: 400, message: '%s: unknown field; did you mean "%s"?' },
  // A key of a message that is its queue's setting, which no message sets (message/create-fields.ts).
  RQ_ERR_QUEUE_SETTING_FIELD: { status: 400, message: "%s: a setting of the queue, not of a message: set it in the queue's config.json" },
  RQ_ERR_INVALID_QUEUE_NAME: { status: 400, message: '%s' },
  RQ_ERR_INVALID_MSG_ID: { status: 400, message: '%s' },
  RQ_ERR_INVALID_JSON: { status: 400, message: '%s' },
  RQ_ERR_INVALID_ATTACHMENT: { status: 400, message: '%s' },
  RQ_ERR_PATH_ESCAPES_ROOT: { status: 400, message: 'message path %s is outside %s' },
  RQ_ERR_USAGE: { status: 400, message: '%s' },
  RQ_ERR_RULE_SYNTAX: { status: 400, message: '%s' },
  RQ_ERR_BAD_BODY: { status: 400, message: 'request body: expected %s, received %s' },
  // A body no parser reads (text/plain, XML…) that is all the request sends: its fields would be lost in silence.
  RQ_ERR_UNSUPPORTED_BODY: {
    status: 415,
    message:
      'request body: its content type %s is not accepted; send a form (application/x-www-form-urlencoded), JSON (application/json) or multipart/form-data',
  },
  // A body sent compressed: no parser here undoes it, and reading it as it is would be reading other bytes than were meant.
  RQ_ERR_ENCODED_BODY: { status: 415, message: 'request body: expected it sent as it is (no Content-Encoding, or identity), received Content-Encoding %s' },
  // rq-beyond §B1.12: concurrency limits.
  RQ_ERR_LIMIT_TEMPLATE: { status: 400, message: '%s: the template names an unknown field {%s} (use {param1}..{param4} or {queue})' },
  RQ_ERR_LIMIT_NO_CONCURRENCY: { status: 400, message: 'limit: key %s has no concurrency: add it to config/limits.json or send limit_concurrency' },
  RQ_ERR_LIMIT_CONFLICT: { status: 400, message: 'limit_concurrency: key %s has concurrency %s (%s), received %s' },
  RQ_ERR_BAD_DEPENDENCY: { status: 400, message: '%s' },
  RQ_ERR_TOO_MANY_DEPENDENTS: {
    status: 409,
    message: '%s already has %s dependents, the most one message may have: let the others wait on a message that waits on it',
  },
  RQ_ERR_LIMITS_UNAVAILABLE: { status: 503, message: 'limit: the limits table (rq-mgr) did not answer (%s)' },
  // The classic queue socket replies (spec §7), word for word.
  RQ_ERR_MISSING_DEST: { status: 400, message: 'input missing required "dest" parameter' },
  RQ_ERR_LACKING_FIELD: { status: 400, message: "lacking '%s' field" },
  RQ_ERR_CANNOT_FIND_MESSAGE: { status: 404, message: 'cannot find message' },
  RQ_ERR_NO_SUCH_MSG: { status: 404, message: 'msg not found' },
  RQ_ERR_NOT_IN_PREP: { status: 409, message: 'msg not in prep' },
  RQ_ERR_MSG_RUNNING: { status: 409, message: 'msg is running: destroy it, or cancel it with purge, first' },
  RQ_ERR_ALREADY_RUNNING: { status: 409, message: 'msg already running' },
  RQ_ERR_NOT_RUNNABLE: { status: 409, message: 'msg not in runnable state' },
  RQ_ERR_CANNOT_CLONE: { status: 409, message: 'cannot clone message in %s state' },
  RQ_ERR_COALESCED: { status: 409, message: 'msg is coalesced into a running message' },
  RQ_ERR_MOVE_ATTACHMENTS: { status: 409, message: 'msg has attachments, which a move does not carry' },

  // rq-mgr's socket replies (spec §6.2), word for word: its classic clients match these texts.
  RQ_ERR_MGR_INVALID_QUEUE: { status: 404, message: 'invalid queue name' },
  RQ_ERR_MGR_NO_SUCH_QUEUE: { status: 404, message: 'no such queue' },
  RQ_ERR_ADMIN_NOT_ALLOWED: { status: 500, message: 'not allowed to up' },
  RQ_ERR_QUEUE_NAME_CHARS: { status: 400, message: 'queue name has invalid characters' },
  RQ_ERR_QUEUE_EXISTS: { status: 409, message: 'already created' },
  RQ_ERR_QUEUE_RUNNING: { status: 409, message: 'queue is already running' },
  // delete_queue of a queue its scandir link keeps: the link is the operator's say, and the queue would come back empty.
  RQ_ERR_QUEUE_FROM_SCANDIR: { status: 409, message: 'queue %s comes from scandir/%s: remove that link to delete it (its messages go to queues/.trash/)' },
  RQ_ERR_QUEUE_NOT_CREATED: { status: 500, message: 'queue not created' },
  // A config create_queue refused: the field, what was expected and what was received (or the JSON parser's words).
  RQ_ERR_QUEUE_CONFIG_REFUSED: { status: 400, message: 'queue not created: %s' },
  // create_queue_link's file: its path as given, then why it could not be read.
  RQ_ERR_QUEUE_CONFIG_UNREADABLE: { status: 400, message: 'could not read queue config [ %s ]: %s' },
  // A queue config the classic checks refuse (spec §1.4): `json config is missing num_workers field`, as the classic says it.
  RQ_ERR_QUEUE_OPTIONS: { status: 400, message: '%s' },
  // A command no socket of rq knows (rq-mgr, timers); the queue socket's classic `["ERROR", …]` says the same.
  RQ_ERR_UNKNOWN_COMMAND: { status: 400, message: 'unknown command: %s' },
  // An rq2 request (timers socket) that is not `[command, payload]`: what it was instead.
  RQ_ERR_INVALID_REQUEST: { status: 400, message: 'invalid request: expected %s, received %s' },

  // rq-beyond §B1.12: state errors of the lifecycle commands.
  RQ_ERR_ALREADY_FINISHED: { status: 409, message: 'msg already finished (%s)' },
  RQ_ERR_NOT_IN_ERR: { status: 409, message: 'msg not in err (%s)' },
  RQ_ERR_NOT_QUEUED: { status: 409, message: 'msg not in que or prep (%s)' },
  RQ_ERR_NOT_WAITING_SLOT: { status: 409, message: 'msg not waiting for a slot' },
  RQ_ERR_NOT_WAITING_DEPS: { status: 409, message: 'msg is not waiting on dependencies' },
  RQ_ERR_WAIT_TIMED_OUT: { status: 408, message: 'timed out' },
  RQ_ERR_QUEUE_DOWN: { status: 503, message: 'status: DOWN' },
  RQ_ERR_COMMIT_FAILED: { status: 500, message: 'unknown reason' },
  RQ_ERR_UNREADABLE_MSG: { status: 500, message: "msg couldn't be read" },
  RQ_ERR_CLONE_FAILED: { status: 500, message: "msg couldn't be cloned" },
  RQ_ERR_NOT_DELETED: { status: 500, message: 'msg not deleted: %s' },
  RQ_ERR_STATE_FIELD: { status: 400, message: "invalid or missing 'state' field (%s)" },
  RQ_ERR_ATTACH_REFUSED: { status: 400, message: '%s' },
  // Not found, each for what is missing.
  RQ_ERR_QUEUE_NOT_FOUND: { status: 404, message: 'Queue not found: %s' },
  RQ_ERR_NO_SUCH_QUEUE: { status: 404, message: 'queue not found: %s' },
  // A name rq-mgr would have as a queue but refused (scandir/<q> without an executable run, …): why, and the fix.
  RQ_ERR_QUEUE_NOT_RUNNING: { status: 404, message: 'queue %s is not running: %s' },
  RQ_ERR_MSG_NOT_FOUND: { status: 404, message: 'Message not found: %s' },
  // The rq tool given an id alone: the id, then the queues asked.
  RQ_ERR_MSG_IN_NO_QUEUE: { status: 404, message: 'msg not found: no queue of this root holds %s (asked %s)' },
  RQ_ERR_FILE_NOT_FOUND: { status: 404, message: '%s not found%s' },
  RQ_ERR_UPLOAD_MISSING: { status: 404, message: 'filedata: expected %s' },
  RQ_ERR_BAD_JSON_FILE: { status: 404, message: "Couldn't parse json file (%s)." },
  // The state of the system.
  RQ_ERR_SOCKET_IN_USE: { status: 409, message: 'another process is already listening on %s' },
  RQ_ERR_FORBIDDEN: { status: 403, message: '%s: expected %s, received %s' },
  RQ_ERR_UNAUTHORIZED: { status: 401, message: '401 - Unauthorized: expected the name and password of a basic_auth user (config/config.json), received %s' },
  RQ_ERR_FIELD_TOO_LARGE: { status: 413, message: '413 - %s: expected at most %s bytes (max_field_bytes in config/config.json), received more' },
  RQ_ERR_UPLOAD_TOO_LARGE: { status: 413, message: '413 - Upload too large: the limit is %s bytes (max_upload_bytes in config/config.json)' },
  // A multipart body's other limits, each naming itself: busboy holds every text field in memory.
  RQ_ERR_TOO_MANY_PARTS: { status: 413, message: '413 - request body: expected at most %s %s in a multipart/form-data body, received more' },
  RQ_ERR_FIELDS_TOO_LARGE: {
    status: 413,
    message: '413 - request body: expected multipart text fields of at most %s bytes together (max_body_bytes in config/config.json), received more',
  },

  RQ_ERR_CONFIG: { status: 500, message: '%s' },
  RQ_ERR_SOCKET_PATH: { status: 500, message: '%s' },
  // A unix socket path holds 107 bytes; the kernel (through libuv) would cut a longer one short, onto another socket.
  RQ_ERR_SOCKET_PATH_TOO_LONG: {
    status: 500,
    message: 'socket path %s is %s bytes, more than the %s a unix socket path holds; refused rather than cut short onto another socket',
  },
  RQ_ERR_ID_ALLOCATION: { status: 503, message: 'could not allocate a message id in %s: %s' },
  RQ_ERR_NO_REPLY: { status: 503, message: '%s' },
  RQ_ERR_LIST_READING: { status: 503, message: 'queue %s is reading its messages for the list (%s so far); ask again shortly' },
  RQ_ERR_TOO_MANY_STREAMS: {
    status: 503,
    message: '503 - events: %s event streams are open, the most this server serves (max_event_streams in config/config.json); try again later',
  },
  RQ_ERR_TOO_MANY_SSE: {
    status: 503,
    message: '503 - %s Server-Sent Events streams are open, the most this server serves (max_sse_streams in config/config.json); try again later',
  },
  RQ_ERR_TOO_MANY_TAILS: {
    status: 503,
    message: '503 - %s log tails of message %s are open, the most one message may have (max_tails_per_message in config/config.json); try again later',
  },
  RQ_ERR_TOO_MANY_CONNECTIONS: {
    status: 503,
    message: '503 - %s connections are open, the most this server serves (max_connections in config/config.json); try again later',
  },
  RQ_ERR_TOO_MANY_FROM_ADDRESS: {
    status: 429,
    message:
      '429 - %s connections are open from %s, the most one address may hold (max_connections_per_address in config/config.json); close some or try again later',
  },
  RQ_ERR_SOCKET_BUSY: {
    status: 503,
    message: '%s connections are open on %s, the most it serves (max_socket_connections in config/config.json); try again later',
  },
  RQ_ERR_MGR_DOWN: { status: 503, message: '503 - QueueMgr not running' },
  // The rq tool: no queue answered, and neither does rq-mgr (the socket, then how to start it).
  RQ_ERR_MGR_NOT_RUNNING: { status: 503, message: 'rq-mgr is not running (no answer on %s); start it with %s' },
  // A fleet (docs/fleet.md): none configured, etcd not answering, a host name another host holds.
  RQ_ERR_NO_FLEET: { status: 404, message: 'no fleet is configured on this host (config/config.json has no "fleet"; docs/fleet.md)' },
  RQ_ERR_ETCD_UNREACHABLE: { status: 503, message: 'etcd did not answer (%s): %s' },
  RQ_ERR_FLEET_NO_SECRET: {
    status: 503,
    message:
      "this host has no fleet secret yet: it reads /rq/fleet/<name>/secret from etcd as it joins (its log says why it could not, or that the value there is not of rq's shape)",
  },
  RQ_ERR_FLEET_HOST_TAKEN: {
    status: 409,
    message: 'fleet %s: the host name %s is held by another rq (%s, at %s); give this one another fleet.host in config/config.json',
  },
  RQ_ERR_FLEET_HOST_UP: {
    status: 409,
    message: 'fleet %s: host %s is up; only a gone host is forgotten (stop it with rq-mgr stop on that host, then forget it from another)',
  },
  RQ_ERR_FLEET_HOST_UNKNOWN: { status: 404, message: 'fleet %s: no host %s was seen (rq fleet lists the hosts)' },
  RQ_ERR_PROTOCOL: { status: 502, message: '%s' },
  RQ_ERR_FETCH: { status: 502, message: 'CRITICAL: %s' },
  RQ_ERR_DISK: { status: 507, message: '%s failed: %s' },
  RQ_ERR_NOT_REGULAR_FILE: { status: 500, message: '%s is not a regular file' },
  // A reply whose text rq knows no code for (a classic client's, a script's): the text as sent.
  RQ_ERR_REFUSED: { status: 400, message: '%s' },
  // A command that failed in a way rq did not foresee (logged at error with its stack).
  RQ_ERR_INTERNAL: { status: 500, message: 'internal error: %s' },
  RQ_ERR_NOT_A_MESSAGE: { status: 500, message: 'msg of %s is not a message object' },
  RQ_ERR_CGROUP_BUSY: { status: 500, message: 'processes still in %s after %s ms' },
  // A native addon left from an older build: rq goes on without it.
  RQ_ERR_ADDON_STALE: { status: 500, message: 'built from an older %s (abi %s, expected %s)' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

/** One string per %s hole of the template, then optionally the cause. */
type Holes<S extends string> = S extends `${string}%s${infer Rest}` ? [string | number, ...Holes<Rest>] : [];
export type ErrorArgs<C extends ErrorCode> = [...Holes<(typeof ERRORS)[C]['message']>];

export class RqError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RqError';
    this.code = code;
    this.status = ERRORS[code].status;
  }

  /** The catalogue's error `code`, its template filled with `args` in order. */
  static of<C extends ErrorCode>(code: C, ...args: ErrorArgs<C>): RqError {
    let i = 0;
    return new RqError(
      code,
      ERRORS[code].message.replace(/%s/g, () => String(args[i++])),
    );
  }

  /** What a client acts on besides the code (a batch refusal's message index), sent with the code to clients that ask for codes. */
  detail?: Readonly<Record<string, unknown>>;

  /** The same error, with `detail` for the clients that read codes. */
  withDetail(detail: Readonly<Record<string, unknown>>): this {
    this.detail = detail;
    return this;
  }

  /** The same error, with what caused it attached (shown in logs, never to clients). */
  causedBy(cause: unknown): this {
    Object.defineProperty(this, 'cause', { value: cause, enumerable: false, configurable: true, writable: true });
    return this;
  }
}

/** The HTTP status of a catalogue code. */
export function statusOf(code: ErrorCode): number {
  return ERRORS[code].status;
}

export function isRqError(err: unknown, code?: ErrorCode): err is RqError {
  return err instanceof RqError && (code === undefined || err.code === code);
}

/** What was received, told by its size rather than quoted: a value too large to show ("1001 characters"). */
class Counted {
  constructor(readonly text: string) {}
}

/** `n` and `unit` as an error's received part, unquoted: `invalidField('r', 'at most 3 characters', counted(4, 'characters'))`. */
export function counted(n: number, unit: string): Counted {
  return new Counted(`${n} ${unit}`);
}

/** A secret as an error's received part: what is wrong is told, the value is not (errors reach logs and terminals). */
export function withheld(): Counted {
  return new Counted('a value not shown (a secret)');
}

/** `c` as JSON's `\\uXXXX` escapes, one per UTF-16 unit (two for a character beyond U+FFFF, as JSON writes it). */
export function unicodeEscape(c: string): string {
  let out = '';
  for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return out;
}

/** Renders a received value for an error message: short, quoted, control bytes visible; a count as it is. */
export function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value instanceof Counted) return value.text;
  // JSON would write NaN and Infinity as null, which is not what was received.
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    // Cycles, BigInt, or nesting deeper than the stack: String() may overflow as well.
    try {
      text = String(value);
    } catch {
      text = Array.isArray(value) ? '[an array nested too deep to show]' : `[${typeof value} nested too deep to show]`;
    }
  }
  // Beyond what JSON escapes: C1 controls and the characters that show as nothing or reorder the text around them.
  text = text.replace(/[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu, unicodeEscape);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** A validation error naming the field, what was expected and what was received. */
export function invalidField(field: string, expected: string, received: unknown): RqError {
  return RqError.of('RQ_ERR_INVALID_FIELD', field, expected, shown(received));
}

/** The same phrase as text, for errors that list several problems (config files); no field part at the top level. */
export function fieldProblem(field: string, expected: string, received: unknown): string {
  const text = invalidField(field || '-', expected, received).message;
  return field ? text : text.slice('-: '.length);
}

/** A failure rq finds itself that callers treat as the kernel's (err.code an errno name such as EIO), as node makes them. */
export function errnoError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

export function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as NodeJS.ErrnoException).code === code;
}
