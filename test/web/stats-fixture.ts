// Statistics test fixture: a queue script that finishes with the completion line it is given, and a mix of outcomes run through it over HTTP.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { send, waitState } from './web-root.js';

export const OUTCOME_SH = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'outcome.sh');

/** The ids of each kind of message run; the ValueError ones finish done once the gate file exists. */
export interface OutcomeMix {
  done: string[];
  valueError: string[];
  http503: string[];
  fatal: string[];
}

const many = (n: number, make: () => Promise<string>) => Promise.all(Array.from({ length: n }, make));

/** 3 done (one running 1.2 s), 2 `ValueError`, 1 `HTTP503` and 1 fatal: four failure groups of three kinds. */
export async function runOutcomeMix(base: string, queue: string, gate: string): Promise<OutcomeMix> {
  const mix: OutcomeMix = {
    done: [...(await many(2, () => send(base, queue, { param1: 'done ok' }))), await send(base, queue, { param1: 'done slow', param2: '1.2' })],
    valueError: await many(2, () => send(base, queue, { param1: 'err ValueError: bad input', param3: gate })),
    http503: [await send(base, queue, { param1: 'err HTTP503: upstream down' })],
    fatal: [await send(base, queue, { param1: 'fatal no such customer' })],
  };
  for (const id of mix.done) await waitState(base, queue, id, ['done']);
  for (const id of [...mix.valueError, ...mix.http503, ...mix.fatal]) await waitState(base, queue, id, ['err']);
  return mix;
}
