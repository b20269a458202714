// The script → queue line protocol on fd 3 (spec §4.6): keywords and their arguments (lines: line-splitter.ts).

export interface PipeLine {
  keyword: string;
  /** Text after the first space, or null when the line has none. */
  arg: string | null;
}

export function parseLine(line: string): PipeLine {
  const sp = line.indexOf(' ');
  return sp < 0 ? { keyword: line, arg: null } : { keyword: line.slice(0, sp), arg: line.slice(sp + 1) };
}

/** Keywords that end a run (completion.ts), ask for a dup, or only renew the heartbeat: every other line is progress. */
const NOT_PROGRESS = new Set(['done', 'err', 'fails', 'relayed', 'resend', 'retry', 'fatal', 'dup', 'beat']);

/** A line that only reports how the run is going (`run 40% copied`): its text becomes the status and nothing else happens. */
export function isProgressLine(line: PipeLine): boolean {
  return !NOT_PROGRESS.has(line.keyword);
}

/**
 * What is wrong with a line that looks meant as a keyword rq would act on but is not one (`DONE`,
 * `resend 1x`), or null. Such a line is only status text, as any other (spec §4.6): its run ends
 * err at a clean exit unless a completion line follows; this says why, for the queue's log.
 */
export function lineProblem(line: PipeLine): string | null {
  const lower = line.keyword.toLowerCase();
  if (lower !== line.keyword && NOT_PROGRESS.has(lower)) return `${JSON.stringify(line.keyword)} is no keyword: keywords are lower case (${lower})`;
  if (line.keyword === 'resend' && parseResendSeconds(line.arg) === null)
    return `resend takes a whole number of seconds first (resend N or resend N-reason), received ${JSON.stringify(line.arg ?? '')}`;
  return null;
}

/** `resend N` / `resend N-reason` as the script wrote it: the delay N in seconds, or null when N is not a whole number (a parse, not a backoff). */
export function parseResendSeconds(arg: string | null): number | null {
  const m = /^\s*(\d+)(?:-|\s|$)/.exec(arg ?? '');
  return m ? Number(m[1]) : null;
}

/**
 * `retry [N][-reason]` (rq-beyond §B1.6): the delay N when given, and the reason. A line that does
 * not fit is a retry without N whose reason is its whole text.
 */
export function retryRequest(arg: string | null): { delay: number | null; reason: string } {
  const m = /^\s*(\d+(?:\.\d+)?)?(?:-(.*))?$/.exec(arg ?? '');
  if (!m) return { delay: null, reason: (arg ?? '').trim() };
  return { delay: m[1] === undefined ? null : Number(m[1]), reason: (m[2] ?? '').trim() };
}

export interface DupRequest {
  delay: number;
  dest: string;
}

/** `dup <delay>-<flag>-<newdest>`, split on the first two dashes. */
export function parseDup(arg: string | null): DupRequest | null {
  const m = /^(\d+)-([^-]*)-(.+)$/.exec(arg ?? '');
  return m ? { delay: Number(m[1]), dest: m[3] } : null;
}
