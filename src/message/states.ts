// The states a message moves through (spec §3), and which of them are final.

export const STATES = ['prep', 'que', 'run', 'done', 'relayed', 'err'] as const;
export type State = (typeof STATES)[number];

/** States a message only leaves by a delete, a clone or an ack: its script run is over. */
export const FINISHED_STATES = ['done', 'relayed', 'err'] as const;
export type FinishedState = (typeof FINISHED_STATES)[number];

export function isFinished(state: string): state is FinishedState {
  return (FINISHED_STATES as readonly string[]).includes(state);
}
