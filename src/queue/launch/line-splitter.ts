// Splits a script's fd 3 byte stream into lines in linear time, holding at most a bounded line.

/** A line longer than the limit: only its length is kept (bytes before its newline). */
export interface CutLine {
  cutBytes: number;
}

/** One line read: its text, or a CutLine for one over the limit. */
export type SplitLine = string | CutLine;

const NEWLINE = 0x0a;

/**
 * Each byte is scanned once (Buffer.indexOf from where the last line ended) and a line's pieces are
 * joined once, at its newline: the old `rest + decode(chunk)` copied the whole partial line on every
 * read, which made a 200 MB line quadratic. A line passing `maxBytes` stops being held, and is
 * reported once, at its end, by its length. Lines are decoded one by one: a newline byte is never
 * inside a UTF-8 sequence, so this gives what decoding the stream whole gives (invalid bytes → U+FFFD).
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private held = 0;
  /** Bytes of the current line so far, counted on past the limit. */
  private length = 0;
  /** A byte order mark is dropped at the start of the stream only, as TextDecoder did. */
  private first = true;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): SplitLine[] {
    const out: SplitLine[] = [];
    let from = 0;
    for (let nl = chunk.indexOf(NEWLINE, from); nl >= 0; nl = chunk.indexOf(NEWLINE, from)) {
      this.take(chunk, from, nl);
      out.push(this.finish());
      from = nl + 1;
    }
    this.take(chunk, from, chunk.length);
    return out;
  }

  /** What is left when the stream ends: a last line without its newline still counts, unless it is empty. */
  end(): SplitLine[] {
    const last = this.finish();
    return last === '' ? [] : [last];
  }

  private take(chunk: Buffer, from: number, to: number): void {
    this.length += to - from;
    if (this.length > this.maxBytes) {
      this.parts = [];
      this.held = 0;
      return;
    }
    this.parts.push(chunk.subarray(from, to));
    this.held += to - from;
  }

  private finish(): SplitLine {
    const length = this.length;
    const parts = this.parts;
    this.parts = [];
    this.length = 0;
    const first = this.first;
    this.first = false;
    if (length > this.maxBytes) {
      this.held = 0;
      return { cutBytes: length };
    }
    const bytes = parts.length === 1 ? parts[0] : Buffer.concat(parts, this.held);
    this.held = 0;
    let text = bytes.toString('utf8');
    if (first && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    return text.endsWith('\r') ? text.slice(0, -1) : text;
  }
}
