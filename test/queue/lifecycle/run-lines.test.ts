// What a running script's fd 3 lines do, as the queue logs them: a line meant as a keyword that is none is status text only, and the log says why.
import { describe, expect, it } from 'vitest';
import { capturedLog } from '../../helpers/captured-log.js';
import { inProcessQueue } from '../in-process.js';

describe('fd 3 lines that look like keywords', () => {
  it('DONE and resend 1x end the run err as status text, each warned with what is wrong; a plain progress line is not warned', async () => {
    const { log, lines } = capturedLog();
    const q = await inProcessQueue({}, { log });
    try {
      for (const [line, status] of [
        ['DONE upper', 'err - upper'],
        ['resend 1x', 'err - 1x'],
        ['copying files', 'err - files'],
      ]) {
        const m = await q.runToEnd({ param1: line }, line, 0);
        expect((await q.cmd('get_message', { msg_id: m.msg_id }))[1].status, line).toBe(status);
      }
      expect(lines.filter((l) => l.msg.startsWith('fd 3')).map((l) => [l.level, l.line, l.msg])).toEqual([
        [40, 'DONE upper', 'fd 3: "DONE" is no keyword: keywords are lower case (done); the line is status text only, no completion'],
        [
          40,
          'resend 1x',
          'fd 3: resend takes a whole number of seconds first (resend N or resend N-reason), received "1x"; the line is status text only, no completion',
        ],
      ]);
    } finally {
      await q.close();
    }
  });
});
