// The worked queue scripts of docs/queue-scripts.md (docs/examples/scripts/<lang>/run), run as real queues, and the doc's copies of them.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockAfter, readProjectFile } from '../helpers/doc-blocks.js';
import { PROJECT, QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';

const LANGS = ['bash', 'python', 'node', 'ruby'] as const;
const scriptOf = (lang: string) => path.join(PROJECT, 'docs', 'examples', 'scripts', lang, 'run');

let t: TestRoot;
const queues = new Map<string, QueueProc>();
const q = (name: string) => queues.get(name)!;

beforeAll(async () => {
  t = await makeRoot();
  // `archive` takes the copies the examples ask for with `dup`; it only has to finish them.
  await addQueue(t.root, 'archive', { script: path.join(PROJECT, 'test', 'fixtures', 'scripts', 'done.sh') });
  for (const lang of LANGS) await addQueue(t.root, `ex-${lang}`, { script: scriptOf(lang), num_workers: 2 });
  await Promise.all(['archive', ...LANGS.map((l) => `ex-${l}`)].map(async (name) => queues.set(name, await QueueProc.start(t.root, name))));
});
afterAll(async () => {
  await Promise.all([...queues.values()].map((p) => p.stop()));
  await t?.cleanup();
});

async function finished(queue: string, fields: Record<string, unknown>) {
  const id = await q(queue).send(fields);
  const m = await q(queue).waitState(id, ['done', 'err']);
  const status = (await q(queue).cmd('get_message_status', { msg_id: id }))[1];
  return { id, m, status };
}

describe.each(LANGS)('docs/examples/scripts/%s/run', (lang) => {
  const queue = `ex-${lang}`;

  it('reports progress and done on fd 3, asks for a copy with dup and reads its id on fd 4', async () => {
    const { m, status } = await finished(queue, { param1: 'hello', param2: 'archive' });
    expect(m.state).toBe('done');
    const copy = /^done - HELLO; copy (http:\/\/\S+\/q\/archive\/(\S+))$/.exec(status.status);
    expect(copy, status.status).not.toBeNull();
    // The id read on fd 4 is a real message of the archive queue, with the original's params.
    const archived = await q('archive').waitState(copy![2], ['done']);
    expect(archived).toMatchObject({ param1: 'hello', param2: 'archive', dest: 'archive' });
    const log = await fs.readFile(path.join(t.root, m.path, 'job', 'stdio.log'), 'utf8');
    expect(log).toContain('shouted: HELLO\n');
  });

  it('turns a refused dup (the fail line on fd 4) into err', async () => {
    const { m, status } = await finished(queue, { param1: 'x', param2: 'nosuch' });
    expect(m.state).toBe('err');
    expect(status.status).toBe("err - copy to nosuch refused: fail couldn't connect to queue - nosuch");
  });

  it('ends in err with its own text when param1 is empty', async () => {
    const { m, status } = await finished(queue, { param2: 'archive' });
    expect(m.state).toBe('err');
    expect(status.status).toBe('err - param1 is empty: nothing to shout');
  });

  it('resends itself until the file in param3 exists, then runs to done', async () => {
    const gate = path.join(t.root, `gate-${lang}`);
    const id = await q(queue).send({ param1: 'later', param3: gate });
    // Resent at least once: back in que with count >= 1 and the resend line's text as its status.
    await waitFor(async () => {
      const m = (await q(queue).cmd('get_message', { msg_id: id }))[1];
      const s = (await q(queue).cmd('get_message_status', { msg_id: id }))[1];
      return m.count >= 1 && s.status === `que - 1-waiting for ${gate}`;
    }, `${lang}: a resend waiting for ${gate}`);
    await fs.writeFile(gate, '');
    const m = await q(queue).waitState(id, ['done', 'err']);
    expect(m.state).toBe('done');
    expect(m.count).toBeGreaterThanOrEqual(1);
    expect((await q(queue).cmd('get_message_status', { msg_id: id }))[1].status).toBe('done - LATER');
  });
});

describe('docs/queue-scripts.md', () => {
  it.each(LANGS)('shows docs/examples/scripts/%s/run as it is', async (lang) => {
    const rel = `docs/examples/scripts/${lang}/run`;
    expect(await blockAfter('docs/queue-scripts.md', rel), `${rel}, named and then shown in a code block`).toBe(await readProjectFile(rel));
  });
});
