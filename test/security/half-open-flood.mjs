// The hostile client of test/security/connection-fairness.test.ts, run as a child with a raised fd limit: holds half-open HTTP connections from given loopback addresses and opens a new one the moment one is closed.
// Commands are JSON lines on stdin, answers JSON lines on stdout; stdin's end closes every socket and ends it.
import net from 'node:net';
import readline from 'node:readline';

/**
 * What a half-open connection sends, by turn: a partial request line, a request line and part of
 * its headers, nothing at all. None ever completes its headers.
 */
const OPENERS = ['GET /hea', 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ', ''];
/** Reconnects in all: the loop ends on its own even if nobody ever tells it to stop. */
const MAX_CONNECTS = 5_000_000;

const open = new Set();
/**
 * `evicted`: closed by the server without a word, by the address group: `first` is the first group's
 * (which holds more than one address may), `others` the rest's, which only a full server evicts.
 */
const stats = { connects: 0, connected: 0, closes: 0, answers: {}, evicted: { first: 0, others: 0 } };
let stopped = false;
let told = false;
let target = null;

function reply(o) {
  process.stdout.write(`${JSON.stringify(o)}\n`);
}

/**
 * Says once that the server is full: every first connection is in, and the server has turned away
 * one of an address under its own cap, by closing it to make room (or, were it unfair, by a 503).
 */
function tellWhenFull() {
  if (told || stats.connected < target.opened || stats.evicted.others + (stats.answers['503'] ?? 0) === 0) return;
  told = true;
  reply({ event: 'full', ...stats, open: open.size });
}

/** One half-open connection from `from`; when the server closes it, another takes its place at once. */
function connect(from, turn) {
  if (stopped || stats.connects >= MAX_CONNECTS) return;
  stats.connects++;
  const s = net.connect({ port: target.port, host: '127.0.0.1', localAddress: from });
  open.add(s);
  let answered = false;
  s.on('connect', () => {
    stats.connected++;
    if (OPENERS[turn % OPENERS.length]) s.write(OPENERS[turn % OPENERS.length]);
    tellWhenFull();
  });
  s.on('data', (d) => {
    if (answered) return;
    answered = true;
    const status = /^HTTP\/1\.1 (\d{3})/.exec(d.toString('latin1'))?.[1] ?? 'garbled';
    stats.answers[status] = (stats.answers[status] ?? 0) + 1;
    tellWhenFull();
  });
  s.on('error', () => undefined);
  s.on('close', () => {
    open.delete(s);
    stats.closes++;
    if (!answered) stats.evicted[from === target.groups[0].from ? 'first' : 'others']++;
    tellWhenFull();
    connect(from, turn + 1);
  });
}

readline
  .createInterface({ input: process.stdin })
  .on('line', (line) => {
    const cmd = JSON.parse(line);
    if (cmd.cmd === 'start') {
      target = { ...cmd, opened: cmd.groups.reduce((n, g) => n + g.n, 0) };
      let turn = 0;
      for (const g of cmd.groups) for (let i = 0; i < g.n; i++) connect(g.from, turn++);
    } else if (cmd.cmd === 'stats') reply({ event: 'stats', id: cmd.id, ...stats, open: open.size });
  })
  .on('close', () => {
    stopped = true;
    for (const s of open) s.destroy();
    process.exit(0);
  });
