// What `--json` prints on the read commands (docs/cli.md, "JSON output"): one document per run, and the one shape of a refusal.
import type { Answer } from '../ipc/answer.js';
import { replyLine } from './queue-ask.js';
import type { RqIo } from './rq-command.js';

/** Printed instead of a `fail <text>` line: the text, and the catalogue code it came with (RQ_ERR_REFUSED for a refusal that came without one). */
export interface JsonRefusal {
  error: string;
  code: string;
}

/** The refusal document of a reply that is not the expected ok (a `fail` reply, or an ok of the wrong shape). */
export function refusalDoc(a: Answer<unknown>): JsonRefusal {
  if (!a.ok) return { error: a.text, code: a.code };
  return { error: `unexpected reply ${replyLine(a)}`, code: 'RQ_ERR_PROTOCOL' };
}

/** Prints a refused reply as the classic `fail …` line, or with `--json` as its refusal document; returns exit 1. */
export function printRefusal(io: RqIo, a: Answer<unknown>, json: boolean): number {
  io.stdout(json ? JSON.stringify(refusalDoc(a)) : replyLine(a));
  return 1;
}
