// The one-line answer to a script's `dup` on fd 4 (spec §4.6): written by the queue and read by rq's script kit from this one place.
export type DupAnswer = { ok: true; id: string; reply: string } | { ok: false; reply: string };

/** The copy's full id. */
export const dupOk = (fullId: string): string => `ok ${fullId}`;

/** The refusal's classic text. */
export const dupFail = (text: string): string => `fail ${text}`;

/** The answer line read once: the new copy's id, or the refusal as it came. */
export function readDupReply(reply: string): DupAnswer {
  return reply.startsWith('ok ') ? { ok: true, id: reply.slice(3), reply } : { ok: false, reply };
}
