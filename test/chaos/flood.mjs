// Flooding client for test/chaos/connection-flood.test.ts, run as a child with a raised fd limit: opens batches of HTTP or unix-socket connections and holds them.
// Commands are JSON lines on stdin, answers JSON lines on stdout; stdin's end ends it.
import net from 'node:net';
import readline from 'node:readline';

const batches = new Map();
/** Connections being opened at once: a burst past the listen backlog would only wait on SYN retries. */
const CHUNK = 200;

function reply(o) {
  process.stdout.write(`${JSON.stringify(o)}\n`);
}

/** Opens one connection, sends `first`, and resolves with what the first bytes of the answer say. */
function openOne(opts, first, classify, held) {
  return new Promise((resolve) => {
    const s = net.connect(opts);
    let buf = '';
    let done = false;
    const settle = (r) => {
      if (done) return;
      done = true;
      resolve(r);
    };
    s.on('connect', () => s.write(first));
    s.on('data', (d) => {
      buf += d.toString('latin1');
      const r = classify(buf);
      if (r) {
        if (r.held) held.push(s);
        settle(r);
      }
    });
    s.on('error', (e) => settle({ kind: `error ${e.code ?? e.message}` }));
    s.on('close', () => settle({ kind: buf ? `closed after ${JSON.stringify(buf.slice(0, 60))}` : 'closed without an answer' }));
  });
}

function classifyHttp(buf) {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const status = /^HTTP\/1\.1 (\d{3})/.exec(buf)?.[1] ?? 'garbled';
  const retryAfter = /\r\nRetry-After: \d+\r\n/i.test(buf.slice(0, end + 2));
  return { kind: status, retryAfter, held: status === '200' };
}

function classifyFrame(buf) {
  const m = /^rq1 (\d{8}) /.exec(buf);
  if (!m || buf.length < 13 + Number(m[1])) return null;
  const payload = buf.slice(13, 13 + Number(m[1]));
  return { kind: payload === '["pong"]' ? 'pong' : 'refused', text: payload, held: payload === '["pong"]' };
}

async function openBatch(cmd) {
  const held = [];
  batches.set(cmd.id, held);
  const counts = {};
  let retryAfterMissing = 0;
  const texts = new Set();
  const jobs =
    cmd.kind === 'unix'
      ? Array.from({ length: cmd.n }, () => () => openOne({ path: cmd.path }, 'rq1 00000007 ping {}', classifyFrame, held))
      : cmd.requests.map(
          (r) => () =>
            openOne(
              { port: cmd.port, host: '127.0.0.1', localAddress: r.from },
              `GET ${r.path} HTTP/1.1\r\nHost: 127.0.0.1:${cmd.port}\r\n${r.sse ? 'Accept: text/event-stream\r\n' : ''}\r\n`,
              classifyHttp,
              held,
            ),
        );
  for (let i = 0; i < jobs.length; i += CHUNK) {
    const rs = await Promise.all(jobs.slice(i, i + CHUNK).map((j) => j()));
    for (const r of rs) {
      counts[r.kind] = (counts[r.kind] ?? 0) + 1;
      if ((r.kind === '429' || r.kind === '503') && !r.retryAfter) retryAfterMissing++;
      if (r.text && !r.held) texts.add(r.text);
    }
  }
  reply({ id: cmd.id, counts, retryAfterMissing, texts: [...texts].slice(0, 3) });
}

readline
  .createInterface({ input: process.stdin })
  .on('line', (line) => {
    const cmd = JSON.parse(line);
    if (cmd.cmd === 'open') void openBatch(cmd);
    else if (cmd.cmd === 'release') {
      for (const s of batches.get(cmd.batch) ?? []) s.destroy();
      batches.delete(cmd.batch);
      reply({ id: cmd.id, released: true });
    }
  })
  .on('close', () => process.exit(0));
