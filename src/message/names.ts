// Validation of names that become paths: queue names, message ids, attachment names.
import { RqError, shown } from '../errors.js';

// Spec §6.2: the characters a queue name may not contain.
const QUEUE_FORBIDDEN = /[/. ,;:@"(){}\\+='^`#~?[\]%|$&<>*]/;
// Bytes that are never part of a sane name: controls, DEL.
const CONTROL = /[\u0000-\u001f\u007f]/;
const ATTACH_FORBIDDEN = /[~?[\]%|$&<>/\\]/;
// Characters that show as nothing or move the text around them (zero-width, bidi overrides, line and paragraph
// separators): a name holding one reads as another name, or as a file of another type (`é\u202etxt.exe`).
const INVISIBLE = /[\p{Cf}\p{Zl}\p{Zp}]/u;
// A queue name has no space: nor one of another kind (a no-break space).
const SPACES = /\p{Zs}/u;

export const MSG_ID_RE = /^\d{8}\.\d{4}\.\d{2}\.\d{3}\.\d+$/;
export const MAX_QUEUE_NAME = 128;

export function queueNameProblem(name: unknown): string | null {
  if (typeof name !== 'string') return `queue name: expected a string, received ${shown(name)}`;
  if (name.length === 0) return 'queue name: expected a non-empty name, received ""';
  if (name.length > MAX_QUEUE_NAME) return `queue name: expected at most ${MAX_QUEUE_NAME} characters, received ${name.length}`;
  if (CONTROL.test(name) || QUEUE_FORBIDDEN.test(name) || INVISIBLE.test(name) || SPACES.test(name)) {
    return `queue name: expected letters, digits, '-' or '_' (none of / . space , ; : @ " ( ) { } \\ + = ' ^ \` # ~ ? [ ] % | $ & < > *, control bytes or invisible characters), received ${shown(name)}`;
  }
  return null;
}

export function isValidQueueName(name: unknown): name is string {
  return queueNameProblem(name) === null;
}

export function assertQueueName(name: unknown): string {
  const problem = queueNameProblem(name);
  if (problem) throw RqError.of('RQ_ERR_INVALID_QUEUE_NAME', problem);
  return name as string;
}

/** A short id, or an acknowledged-error id with its leading dot. */
export function isMsgId(id: unknown, allowAcked = true): id is string {
  if (typeof id !== 'string') return false;
  const bare = allowAcked && id.startsWith('.') ? id.slice(1) : id;
  return MSG_ID_RE.test(bare);
}

export function assertMsgId(id: unknown, field = 'msg_id'): string {
  if (!isMsgId(id)) {
    throw RqError.of('RQ_ERR_INVALID_MSG_ID', `${field}: expected a message id like 20261121.1643.46.613.2164022, received ${shown(id)}`);
  }
  return id;
}

/** Bytes of an attachment's name at most: a file name's, counted in UTF-8 (255 characters of another script are more). */
export const MAX_ATTACHMENT_NAME_BYTES = 255;

/** Returns the classic reply text for a refused attachment name, or null when it is fine. */
export function attachmentNameProblem(name: string): string | null {
  if (name.startsWith('.')) return `Attachment name as a dot-file not allowed: ${name}`;
  // attach/new is the upload route: an attachment of that name could be uploaded but never deleted or read by its URL.
  if (name === 'new') return 'Attachment name new not allowed: attach/new is where attachments are uploaded';
  if (name.length === 0 || CONTROL.test(name) || ATTACH_FORBIDDEN.test(name) || INVISIBLE.test(name)) {
    return `Attachment name has invalid character. not allowed: ${name}`;
  }
  const bytes = Buffer.byteLength(name);
  if (bytes > MAX_ATTACHMENT_NAME_BYTES) return `Attachment name too long: expected at most ${MAX_ATTACHMENT_NAME_BYTES} bytes (UTF-8), received ${bytes}`;
  return null;
}
