// What a waiting message's owners (dependency waits, the limit gate) may do to it: the transitions module implements it.
import type { Message } from '../../message/message.js';
import type { ParkOwner } from './message-index.js';

export interface WaitMoves {
  /** Out of the que's order while it waits; its expiry deadline still holds. */
  park(msg: Message, owner: ParkOwner): void;
  /** No longer parked (taken by its owner); the message, or undefined when it was not parked. */
  unpark(id: string): Message | undefined;
  /** Parked no longer: back into the que's order. */
  release(msg: Message): void;
}
