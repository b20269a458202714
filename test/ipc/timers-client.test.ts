// TimersClient, the typed client of the timers socket: it asks for codes at connect, so a refusal comes typed by the code sent with it.
import { describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { CODES_HELLO_RQ2, refusalOf } from '../../src/ipc/reply-codes.js';
import { TimersClient } from '../../src/ipc/timers-client.js';
import { socketPlace } from './helpers.js';

describe('TimersClient', () => {
  const place = socketPlace('timers.sock');

  /** A timers daemon that knows no get_timers: its refusal carries the code only on a connection that asked. */
  const refusing = () =>
    place.serve(
      (p, conn) => {
        if (p === CODES_HELLO_RQ2) {
          conn.codes = true;
          return '["ok","codes"]';
        }
        return JSON.stringify(refusalOf(conn, RqError.of('RQ_ERR_UNKNOWN_COMMAND', 'get_timers'), 'error'));
      },
      { proto: 'rq2' },
    );

  it('reads a refusal by the code that came with it, after its hello', async () => {
    await refusing();
    expect(await new TimersClient(place.sock, 2000).timers()).toEqual({
      ok: false,
      code: 'RQ_ERR_UNKNOWN_COMMAND',
      text: 'unknown command: get_timers',
      raw: ['error', 'unknown command: get_timers'],
    });
  });

  it('keeps only well-formed timers of a value', async () => {
    await place.serve((p) => (p === CODES_HELLO_RQ2 ? '["error","unknown command: reply_codes"]' : '["ok",[["a",30],["b","x"],7]]'), { proto: 'rq2' });
    expect(await new TimersClient(place.sock, 2000).timers()).toMatchObject({ ok: true, value: [['a', 30]] });
  });
});
