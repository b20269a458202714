// Relay loop detection (spec §11.3): refuse messages that could only ever be relayed back to a relay queue.

export const LOOP_TEXT = 'Relay loop detected: RQ_DEST queue same as RQ_ORIG_MSG_ID';
export const RELAY_DEST_TEXT = 'Relay loop detected: RQ_DEST queue is relay';

/**
 * The brightroll check first (its text is what clients test for): a message whose origin is the
 * destination itself. Then the general case: a relay never changes `dest`, so a dest naming a
 * `relay` queue (of any host) is relayed to that relay again and again, a new message each hop.
 */
export function relayLoop(dest: string, origMsgId: string, destQueue: string): string | null {
  if (dest !== '' && origMsgId.startsWith(dest)) return LOOP_TEXT;
  if (destQueue === 'relay') return RELAY_DEST_TEXT;
  return null;
}
