// untilQueueAnswers: pings a starting queue until it answers, and gives up at its bound.
import { describe, expect, it } from 'vitest';
import { untilQueueAnswers } from '../../src/ipc/until-answers.js';

describe('untilQueueAnswers', () => {
  it('keeps pinging through refusals and a wrong answer, and is true at the first pong', async () => {
    const answers: (() => Promise<boolean>)[] = [
      () => Promise.reject(new Error('ENOENT: no socket file')),
      () => Promise.reject(new Error('ECONNREFUSED')),
      () => Promise.resolve(false),
      () => Promise.resolve(true),
    ];
    let calls = 0;
    expect(await untilQueueAnswers(() => answers[calls++](), 10_000)).toBe(true);
    expect(calls).toBe(4);
  });

  it('is false once the bound has passed, without pinging on', async () => {
    let calls = 0;
    let clock = 0;
    // Each ping takes 40 ms of the injected clock: the third is past the 100 ms bound.
    const ping = async () => {
      calls++;
      clock += 40;
      throw new Error('ECONNREFUSED');
    };
    expect(await untilQueueAnswers(ping, 100, () => clock)).toBe(false);
    expect(calls).toBe(3);
  });
});
