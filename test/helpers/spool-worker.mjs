// Crash-test worker: runs spool operations on one queue forever (4 lanes), printing each acknowledged step.
// Usage: node test/helpers/spool-worker.mjs <root> <queue> <attachment source file> <seed>
// The seed picks the operations; the lanes still interleave as the disk allows, so a replay
// repeats the choices, not necessarily their order.
// Lines on stdout (pipes are written synchronously on Linux, so a printed line happened):
//   ready <que> <prep>          after its own recovery
//   created <id> <que|prep>     a create resolved (the message must survive any crash from here on)
//   removing <id>               printed before a delete starts (the message may be gone after a crash)
//   op <n> <what>               one more step finished
// Any failure is printed to stderr and exits 1: the test fails on an exit it did not cause.
import { ackErrs } from '../../dist/spool/err-acks.js';
import { createCopy } from '../../dist/spool/message-copy.js';
import { QueueSpool } from '../../dist/spool/queue-spool.js';
import { recoverSpool } from '../../dist/spool/recovery.js';
import { parseSeed, seededRandom } from './seeded-random.mjs';

const [root, name, source, seedArg] = process.argv.slice(2);
if (!root || !name || !source || seedArg === undefined) {
  process.stderr.write('usage: spool-worker.mjs <root> <queue> <source file> <seed>\n');
  process.exit(2);
}
const rng = seededRandom(parseSeed(seedArg, 'seed'));
// Blanks on, as in a queue process: kills also land while blanks are made and taken.
const spool = new QueueSpool(root, name, { host: { host: '127.0.0.1', port: 3333, root: '/' }, blanks: 4 });
const out = (line) => process.stdout.write(`${line}\n`);

const queued = []; // ids in que/ that no lane is working on
const errs = []; // ids in err/ (not acked)
const dones = []; // recent ids in done/
let ops = 0;

async function create(commit) {
  const msg = await spool.create({ dest: name, src: 'crash-worker', param1: String(ops) }, { commit });
  out(`created ${msg.msg_id} ${commit ? 'que' : 'prep'}`);
  return msg.msg_id;
}

async function prepared() {
  const id = await create(false);
  await spool.attach(id, source, 'payload.bin');
  if (rng.next() < 0.5) await spool.attach(id, source, 'second.bin');
  if (rng.next() < 0.3) await spool.attach(id, source, 'payload.bin'); // replace
  if (rng.next() < 0.2) await spool.deleteAttachment(id, 'second.bin');
  if (rng.next() < 0.1) return 'prep-kept'; // some stay in prep
  await spool.commit(id);
  queued.push(id);
  return 'prep-attach-commit';
}

async function runOne() {
  const id = queued.shift();
  if (!id) return create(true).then((i) => (queued.push(i), 'create-commit'));
  const dir = await spool.move(id, 'que', 'run', { actor: 'worker', durable: false });
  await spool.writeStatus(dir, 'working');
  if (rng.next() < 0.3) {
    const msg = await spool.readMessage('run', id);
    await spool.writeMessage('run', id, { ...msg, count: Number(msg.count) + 1, state: 'run', path: dir });
  }
  const to = rng.pick(['done', 'done', 'done', 'err', 'relayed', 'que']);
  await spool.writeStatus(dir, `finished to ${to}`, true);
  await spool.move(id, 'run', to, { actor: 'worker', reason: 'test' });
  if (to === 'que') queued.push(id);
  if (to === 'err') errs.push(id);
  if (to === 'done' && dones.push(id) > 20) dones.shift();
  return `run-${to}`;
}

// Deletes, acks and clones run on lane 0 only, so no two lanes touch one err/ or done/ message.
async function janitor() {
  const r = rng.next();
  if (r < 0.4 && errs.length) {
    const id = errs.shift();
    out(`removing ${id}`);
    // A lane may have moved it to err/ just before an ack renamed it to err/.<id>.
    await spool.remove('err', (await spool.exists('err', id)) ? id : `.${id}`);
    return 'remove-err';
  }
  if (r < 0.55 && errs.length) {
    errs.length = 0;
    await ackErrs(spool);
    return 'ack';
  }
  if (r < 0.8 && dones.length) {
    const from = rng.pick(dones);
    const msg = await createCopy(spool, { dest: name, src: 'clone' }, spool.msgDir('done', from), { cloned_from: from });
    out(`created ${msg.msg_id} que`);
    queued.push(msg.msg_id);
    return 'clone';
  }
  return runOne();
}

async function lane(n) {
  for (;;) {
    const r = rng.next();
    const what =
      n === 0 && r < 0.3
        ? await janitor()
        : r < 0.35
          ? await create(true).then((id) => (queued.push(id), 'create-commit'))
          : r < 0.55
            ? await prepared()
            : await runOne();
    out(`op ${++ops} ${what}`);
  }
}

try {
  const rec = await recoverSpool(spool);
  for (const m of rec.que) queued.push(m.msg_id);
  for (const id of await spool.listFlat('err')) errs.push(id);
  out(`ready ${rec.que.length} ${rec.prep.length}`);
  await Promise.all([0, 1, 2, 3].map(lane));
} catch (err) {
  process.stderr.write(`spool-worker failed: ${err?.stack ?? err}\n`);
  process.exit(1);
}
