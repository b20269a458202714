// The typed queue client: each method sends its socket command with the classic argument and reads the reply.
import { describe, expect, it } from 'vitest';
import { QueueClient } from '../../src/ipc/queue-client.js';

function recording(reply: unknown) {
  const sent: Array<[string, unknown]> = [];
  const client = new QueueClient(async (command, arg) => {
    sent.push([command, arg]);
    return reply;
  });
  return { client, sent };
}

describe('QueueClient', () => {
  it('sends each command with its argument', async () => {
    const { client, sent } = recording(['ok', 'x']);
    await client.create({ dest: 'q' });
    await client.create({ dest: 'q' }, 'prep_message');
    await client.attach('id1', '/tmp/f');
    await client.attach('id1', '/tmp/f', 'name.txt');
    await client.deleteAttachment('id1', 'name.txt');
    await client.commit('id1');
    await client.get('id1');
    await client.state('id1');
    await client.messageStatus('id1');
    await client.act('run_message', 'id1');
    await client.list('done', { limit: 5, filter: 'abc' });
    await client.ackErrs();
    await client.config();
    expect(sent).toEqual([
      ['create_message', { dest: 'q' }],
      ['prep_message', { dest: 'q' }],
      ['attach_message', { msg_id: 'id1', pathname: '/tmp/f' }],
      ['attach_message', { msg_id: 'id1', pathname: '/tmp/f', name: 'name.txt' }],
      ['delete_attach_message', { msg_id: 'id1', attachment_name: 'name.txt' }],
      ['commit_message', { msg_id: 'id1' }],
      ['get_message', { msg_id: 'id1' }],
      ['get_message_state', { msg_id: 'id1' }],
      ['get_message_status', { msg_id: 'id1' }],
      ['run_message', { msg_id: 'id1' }],
      ['messages', { state: 'done', limit: 5, filter: 'abc' }],
      ['ack_errs', {}],
      ['config', {}],
    ]);
  });

  it('refuses replies of the wrong shape as protocol errors', async () => {
    for (const bad of [{ prep: 0 }, { prep: 0, que: 0, run: 0, done: 0, relayed: 0, err: '1' }, [1, 2]]) {
      expect(await recording(bad).client.counts(), JSON.stringify(bad)).toMatchObject({ ok: false });
    }
    expect(await recording(['ok', 'text']).client.get('m')).toMatchObject({ ok: false, code: 'RQ_ERR_PROTOCOL' });
    expect(await recording(['ok', { path: 'p' }]).client.get('m')).toMatchObject({ ok: false, code: 'RQ_ERR_PROTOCOL' });
    for (const bad of ['text', { path: 'p', state: 'que' }, { path: 'p', status: 'que' }]) {
      expect(await recording(['ok', bad]).client.messageStatus('m'), JSON.stringify(bad)).toMatchObject({ ok: false, code: 'RQ_ERR_PROTOCOL' });
    }
  });

  it('reads the replies that are not ["ok", value]: pong, bare status and uptime, counts, listings', async () => {
    const pinged = recording(['pong']);
    expect(await pinged.client.ping()).toBe(true);
    expect(pinged.sent).toEqual([['ping', {}]]);
    expect(await recording(['fail', 'x']).client.ping()).toBe(false);
    const status = recording(['PAUSE']);
    expect(await status.client.status()).toMatchObject({ ok: true, value: 'PAUSE' });
    const uptime = recording([42]);
    expect(await uptime.client.uptime()).toMatchObject({ ok: true, value: 42 });
    const counts = { prep: 0, que: 1, run: 2, done: 3, relayed: 4, err: 5 };
    const counted = recording(counts);
    expect(await counted.client.counts()).toMatchObject({ ok: true, value: counts });
    expect([...status.sent, ...uptime.sent, ...counted.sent]).toEqual([
      ['status', {}],
      ['uptime', {}],
      ['num_messages', {}],
    ]);
    // A refusal carries the code the queue sent with it; one without (a classic daemon's) is only a refusal, never a code read out of its text.
    expect(await recording(['fail', 'status: DOWN', 'RQ_ERR_QUEUE_DOWN']).client.counts()).toMatchObject({ ok: false, code: 'RQ_ERR_QUEUE_DOWN' });
    expect(await recording(['fail', 'status: DOWN']).client.counts()).toMatchObject({ ok: false, code: 'RQ_ERR_REFUSED', text: 'status: DOWN' });
    expect(await recording(['a', 'b']).client.list('err')).toMatchObject({ ok: true, value: ['a', 'b'] });
    expect(await recording(['fail', "invalid or missing 'state' field (x)"]).client.list('x')).toMatchObject({ ok: false });
    expect(await recording(['ok', { msg_id: 'm', status: 'que', state: 'que' }]).client.get('m')).toMatchObject({ ok: true });
    expect(await recording(['ok', { path: 'p', status: 'que', state: 'que' }]).client.messageStatus('m')).toMatchObject({ ok: true, value: { state: 'que' } });
  });
});
