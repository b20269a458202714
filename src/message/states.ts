// The states a message moves through (spec §3), and which of them are final.

export const STATES = ['prep', 'que', 'run', 'done', 'relayed', 'err'] as const;
export type State = (typeof STATES)[number];

/** How many messages a queue holds in each state (num_messages). */
export type StateCounts = Record<State, number>;

/** States a message only leaves by a delete, a clone or an ack: its script run is over. */
export const FINISHED_STATES = ['done', 'relayed', 'err'] as const;
export type FinishedState = (typeof FINISHED_STATES)[number];

export function isFinished(state: string): state is FinishedState {
  return (FINISHED_STATES as readonly string[]).includes(state);
}
