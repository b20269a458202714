// The one catalogue of coded errors: code, HTTP status and a message a user can act on.

export const ERRORS = {
  RQ_ERR_INVALID_QUEUE_NAME: { status: 400 },
  RQ_ERR_INVALID_MSG_ID: { status: 400 },
  RQ_ERR_INVALID_FIELD: { status: 400 },
  RQ_ERR_INVALID_JSON: { status: 400 },
  RQ_ERR_INVALID_ATTACHMENT: { status: 400 },
  RQ_ERR_PATH_ESCAPES_ROOT: { status: 400 },
  RQ_ERR_CONFIG: { status: 500 },
  RQ_ERR_QUEUE_NOT_FOUND: { status: 404 },
  RQ_ERR_MSG_NOT_FOUND: { status: 404 },
  RQ_ERR_WRONG_STATE: { status: 409 },
  RQ_ERR_ID_ALLOCATION: { status: 503 },
  RQ_ERR_DISK: { status: 507 },
  RQ_ERR_ALREADY_INSTALLED: { status: 409 },
  RQ_ERR_NO_REPLY: { status: 503 },
  RQ_ERR_PROTOCOL: { status: 400 },
  RQ_ERR_SOCKET_IN_USE: { status: 409 },
  RQ_ERR_SOCKET_PATH: { status: 500 },
  RQ_ERR_USAGE: { status: 400 },
  RQ_ERR_UNAUTHORIZED: { status: 401 },
  RQ_ERR_NOT_FOUND: { status: 404 },
  RQ_ERR_UPLOAD_TOO_LARGE: { status: 413 },
  RQ_ERR_MGR_DOWN: { status: 503 },
} as const;

export type ErrorCode = keyof typeof ERRORS;

export class RqError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RqError';
    this.code = code;
    this.status = ERRORS[code].status;
  }
}

/** Renders a received value for an error message: short, quoted, control bytes visible. */
export function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** A validation error naming the field, what was expected and what was received. */
export function invalidField(field: string, expected: string, received: unknown, code: ErrorCode = 'RQ_ERR_INVALID_FIELD'): RqError {
  return new RqError(code, `${field}: expected ${expected}, received ${shown(received)}`);
}

export function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as NodeJS.ErrnoException).code === code;
}
