// rq's end of fd 4: a socket made on the first reply only, one close when none was made, and writes to a closed end dropped.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lazyToScript, streamToScript } from '../../../src/queue/launch/to-script.js';
import { isOpen } from '../../helpers/open-under.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rq-to-script-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const openFile = (name: string) => fs.openSync(path.join(dir, name), 'w');

/** A lazyToScript on a file's fd whose socket is a PassThrough (owning the fd, as a socket does), counting how many were made and what they got. */
function counted() {
  const fd = openFile('fd4');
  const made: PassThrough[] = [];
  const written = () => made.map((s) => String(s.read() ?? '')).join('');
  const to = lazyToScript(fd, () => {
    const s = new PassThrough();
    s.once('close', () => fs.closeSync(fd));
    made.push(s);
    return s;
  });
  return { fd, made, written, to };
}

describe('lazyToScript', () => {
  it('makes no socket for a run that is never replied to, and closes the fd itself', () => {
    for (const close of ['end', 'destroy'] as const) {
      const { fd, made, to } = counted();
      to[close]();
      expect(made).toHaveLength(0);
      expect(isOpen(fd)).toBe(false);
    }
  });

  it('makes one socket on the first reply and sends every reply through it, in order', () => {
    const { made, written, to } = counted();
    to.write('one\n');
    to.write('two\n');
    expect(made).toHaveLength(1);
    expect(written()).toBe('one\ntwo\n');
    to.destroy();
    expect(made[0].destroyed).toBe(true);
  });

  it('drops replies once closed, without making a socket for them', () => {
    for (const close of ['end', 'destroy'] as const) {
      const { made, to } = counted();
      to[close]();
      to.write('late\n');
      expect(made).toHaveLength(0);
    }
  });

  it('closes its fd once: an end or a destroy after an end leaves a file opened since under the same number alone', () => {
    const { fd, to } = counted();
    to.end();
    const reused = openFile('other');
    try {
      expect(reused).toBe(fd);
      to.end();
      to.destroy();
      expect(isOpen(reused)).toBe(true);
    } finally {
      fs.closeSync(reused);
    }
  });

  it('ends the socket it made (its replies flushed first) and drops replies after', () => {
    const { made, written, to } = counted();
    to.write('last\n');
    to.end();
    to.write('late\n');
    expect(made[0].writableEnded).toBe(true);
    expect(written()).toBe('last\n');
    to.destroy();
  });
});

describe('streamToScript', () => {
  it('swallows the stream’s error (a script that closed fd 4) and drops what is written after it', () => {
    const s = new PassThrough();
    const to = streamToScript(s);
    s.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(() => to.write('reply\n')).not.toThrow();
    expect(s.read()).toBeNull();
  });

  it('writes while open; an ended stream takes no more', () => {
    const s = new PassThrough();
    const to = streamToScript(s);
    to.write('a\n');
    to.end();
    expect(() => to.write('b\n')).not.toThrow();
    expect(String(s.read())).toBe('a\n');
  });
});
