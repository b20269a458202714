// The message page's field rows: values as stored, with a reading beside those kept in a machine's unit.
import { describe, expect, it } from 'vitest';
import { Urls } from '../../../src/web/urls.js';
import { messageView } from '../../../src/web/views/message-view.js';

const page = (fields: Record<string, unknown>) =>
  messageView(
    { msg_id: '20261206.1300.00.000.1', path: 'queues/q/done/20261206.1300.00.000.1', state: 'done', status: 'done', ...fields },
    'q',
    new Urls(undefined, '127.0.0.1:3333'),
  ).value;

/** The value cell of one field row, its outer spaces dropped. */
const cell = (html: string, key: string) => new RegExp(`<td id="field-${key}"> (.*?) </td>`, 's').exec(html)?.[1];

describe('message page fields', () => {
  it('shows a memory limit in bytes as stored, with the size as written beside it', () => {
    const html = page({ memory_max: 512 * 1024 ** 2, memory_high: 1536 * 1024 });
    expect(cell(html, 'memory_max')).toBe('536870912 <span class="muted">(512M)</span>');
    expect(cell(html, 'memory_high')).toBe('1572864 <span class="muted">(1536K)</span>');
  });

  it('adds nothing where the bytes are the plainest way to write the limit, nor to other numbers', () => {
    const html = page({ memory_max: 1_048_577, pids_max: 2048 });
    expect(cell(html, 'memory_max')).toBe('1048577');
    expect(cell(html, 'pids_max')).toBe('2048');
  });
});
