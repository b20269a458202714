// relayTarget at its edges: the first /q/ of the path splits base from queue, a root's trailing slashes go, the queue name is %-decoded before it is checked.
import { describe, expect, it } from 'vitest';
import { queueUrl, relayTarget } from '../../src/message/relay-target.js';

describe('relayTarget edges', () => {
  it('splits at the first /q/ of the path: the default port, query and fragment dropped', () => {
    expect(relayTarget('http://h/q/a/q/b')).toEqual({ base: 'http://h', queue: 'a' });
    expect(relayTarget('http://h/root///q/x')).toEqual({ base: 'http://h/root', queue: 'x' });
    expect(relayTarget('http://h:80/r/q/x?y=1#z')).toEqual({ base: 'http://h/r', queue: 'x' });
  });

  it('decodes a %-escaped queue name, refuses a bad escape', () => {
    expect(relayTarget('http://h/q/my%5Fq')).toEqual({ base: 'http://h', queue: 'my_q' });
    expect(() => relayTarget('http://h/q/a%E0%A4%A')).toThrow(/"http:\/\/h\/q\/a%E0%A4%A" \(bad %-escape in the queue name\)/);
    expect(() => relayTarget('http://h/q/a%2Eb')).toThrow(/^dest: queue name: /);
  });

  it('every refusal names the field', () => {
    expect(() => relayTarget('ftp://h/q/x')).toThrow(/^dest: expected an http\(s\):\/\/host\[:port\]\[\/root\]\/q\/<queue> URL, received "ftp:/);
    expect(() => relayTarget('http://h/queue/x')).toThrow(
      /^dest: expected an http\(s\):.* URL, received "http:\/\/h\/queue\/x" \(no \/q\/<queue> in the path\)$/,
    );
    expect(() => relayTarget('http://h/q/%E0%A4%A')).toThrow(/^dest: expected /);
  });

  it('a queue URL is the base and the escaped name', () => {
    expect(queueUrl('http://h/r', 'box_que')).toBe('http://h/r/q/box_que');
  });
});
