// Reads a multipart/form-data body part by part under named limits: every malformed body, and every limit it passes, is a 4xx that says which.
import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { RqError, shown } from '../errors.js';
import { partCounter } from './multipart-parts.js';

/** Parts (text fields and files together) one body may have: each is a parse, a callback, a field in memory. */
export const MAX_PARTS = 1000;

export interface MultipartHandlers {
  /** max_upload_bytes: the most one file part may hold. */
  fileSize: number;
  /** Each text field, in order, before the next part is read. */
  onField(name: string, value: string): void;
  /** Each file part: read `part.file` to its end (or resume it) before returning. */
  onFile(part: MultipartFile): Promise<void>;
}

/**
 * The refusal for what the parser or the plugin raised, naming the limit that applied or what was
 * malformed; our own refusals (RqError) pass unchanged. Never the parser's exception as a 500.
 */
export function multipartRefusal(err: unknown, fileSize: number): RqError {
  if (err instanceof RqError) return err;
  const e = err as { code?: string; message?: string; statusCode?: number };
  switch (e?.code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return RqError.of('RQ_ERR_UPLOAD_TOO_LARGE', fileSize);
    case 'FST_PARTS_LIMIT':
      return RqError.of('RQ_ERR_TOO_MANY_PARTS', MAX_PARTS, 'parts (text fields and files together)');
    case 'FST_PROTO_VIOLATION':
      return RqError.of(
        'RQ_ERR_BAD_BODY',
        'multipart field names other than the names of Object.prototype (__proto__, constructor, toString, ...)',
        'one of them',
      );
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return RqError.of('RQ_ERR_BAD_BODY', 'JSON in every multipart part typed application/json', 'a part that does not parse');
    case 'FST_MP_PREMATURE_CLOSE':
      return RqError.of('RQ_ERR_BAD_BODY', 'a whole multipart/form-data body', 'one cut off by the connection closing');
  }
  // An errno error is the disk that stores an upload (ENOSPC in tmpdir), not the client's body.
  if (typeof e?.code === 'string' && /^E[A-Z]+$/.test(e.code)) return RqError.of('RQ_ERR_DISK', 'storing the upload', String(e.message)).causedBy(err);
  return RqError.of('RQ_ERR_BAD_BODY', 'a well-formed multipart/form-data body', `one that does not parse (${e?.message ?? String(err)})`).causedBy(err);
}

/** A text field's value as sent: a part typed application/json was parsed by the plugin, and is text again here. */
function fieldText(part: MultipartValue): string {
  return typeof part.value === 'string' ? part.value : JSON.stringify(part.value);
}

/**
 * Reads the body of a multipart request: text fields (each within max_field_bytes, together within
 * max_body_bytes) and files (each within `fileSize`), at most MAX_PARTS parts, every part with a
 * `Content-Disposition: form-data` header naming it (busboy drops a part without one in silence, so
 * the parts are also counted on the wire). Any fault is thrown as a catalogue refusal.
 */
export async function readMultipart(req: FastifyRequest, h: MultipartHandlers): Promise<void> {
  const fieldSize = req.server.rqFieldLimit;
  const bodyLimit = req.server.initialConfig.bodyLimit ?? Infinity;
  let fieldBytes = 0;
  let seen = 0;
  try {
    const parts = req.parts({ limits: { fileSize: h.fileSize, fieldSize, parts: MAX_PARTS } })[Symbol.asyncIterator]();
    // The iterator pipes the request into the parser on its first step; the counter listens beside it.
    const first = parts.next();
    const counter = partCounter(req);
    for (let step = await first; !step.done; step = await parts.next()) {
      const part = step.value;
      seen += 1;
      if (typeof part.fieldname !== 'string' || part.fieldname === '') {
        if (part.type === 'file') part.file.resume();
        throw RqError.of('RQ_ERR_BAD_BODY', 'a name in the Content-Disposition of every multipart part', `part ${seen} without one`);
      }
      if (part.type === 'file') {
        await h.onFile(part);
        continue;
      }
      if (part.valueTruncated) throw RqError.of('RQ_ERR_FIELD_TOO_LARGE', shown(part.fieldname), fieldSize);
      const value = fieldText(part);
      fieldBytes += Buffer.byteLength(value) + Buffer.byteLength(part.fieldname);
      if (fieldBytes > bodyLimit) throw RqError.of('RQ_ERR_FIELDS_TOO_LARGE', bodyLimit);
      h.onField(part.fieldname, value);
    }
    const sent = counter.parts();
    if (sent > seen)
      throw RqError.of('RQ_ERR_BAD_BODY', 'a Content-Disposition: form-data header naming every multipart part', `${sent - seen} of ${sent} parts without one`);
  } catch (err) {
    throw multipartRefusal(err, h.fileSize);
  }
}
