// Relay throughput between two local rq hosts: messages/s without attachments, MB/s for a 200 MB attachment,
// each next to the same HTTP exchange done directly (node:http, keep-alive, same multipart) in the same run.
// Run: npx vite-node bench/relay.ts   (prints one JSON object; BENCH_N messages, BENCH_MB attachment size)
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { HttpClient } from '../src/script-kit/http-client.js';
import { multipartFile } from '../src/relay/multipart-file.js';
import { Host, RECORD_SH, bigFile } from '../test/relay/hosts.js';
import { median, round, runLanes } from './lib.js';

const N = Number(process.env.BENCH_N ?? 300);
const MB = Number(process.env.BENCH_MB ?? 200);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);

async function waitRelayed(a: Host, n: number): Promise<number> {
  for (;;) {
    const c = await a.q('relay', 'num_messages');
    if (c.relayed >= n) return performance.now();
    if (c.err > 0) throw new Error(`relay errors: ${JSON.stringify(c)}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The relay's requests for one message (prep + commit) made directly, `concurrency` at a time. */
async function rawMessages(b: Host, n: number, concurrency: number): Promise<number> {
  const client = new HttpClient();
  const t0 = performance.now();
  await runLanes(n, concurrency, async () => {
    const prep = await client.postForm(`${b.url('test')}/new_message`, {
      x_format: 'json',
      mesg: JSON.stringify({ dest: b.url('test'), count: 1, _method: 'prep' }),
    });
    const full = JSON.parse(prep.body)[1] as string;
    const commit = await client.postForm(`${b.url('test')}/${full.split('/').pop()}`, { x_format: 'json', _method: 'commit', msg_id: full.split('/').pop()! });
    if (!commit.body.startsWith('["ok"')) throw new Error(commit.body);
  });
  const rate = n / ((performance.now() - t0) / 1000);
  client.close();
  return rate;
}

/**
 * The floor of a process-per-message relay: bare `node` processes that write one line on fd 3,
 * started `concurrency` at a time at nice 19 (as queue scripts run), like the relay's workers.
 */
async function nodeSpawnFloor(n: number, concurrency: number): Promise<number> {
  const t0 = performance.now();
  await runLanes(
    n,
    concurrency,
    () =>
      new Promise<void>((resolve, reject) => {
        const c = spawn('nice', ['-n', '19', process.execPath, '-e', 'require("fs").writeSync(3, "done ok\\n")'], {
          stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'],
        });
        c.stdio[3]!.on('data', () => undefined);
        c.on('error', reject);
        c.on('close', () => resolve());
      }),
  );
  return n / ((performance.now() - t0) / 1000);
}

/** One multipart upload of the file to a prepped far message with plain node:http (no md5, no relay). */
async function rawUpload(b: Host, file: string): Promise<number> {
  const client = new HttpClient();
  const prep = await client.postForm(`${b.url('test')}/new_message`, { x_format: 'json', mesg: JSON.stringify({ dest: 'test', _method: 'prep' }) });
  const full = JSON.parse(prep.body)[1] as string;
  const id = full.split('/').pop()!;
  client.close();
  const body = await multipartFile({ x_format: 'json', pathname: 'big.bin', msg_id: id }, 'filedata', file, 'big.bin');
  const agent = new http.Agent({ keepAlive: true });
  const t0 = performance.now();
  const reply = await new Promise<string>((resolve, reject) => {
    const req = http.request(
      `${b.url('test')}/${id}/attach/new`,
      { method: 'POST', agent, headers: { 'content-type': body.contentType, 'content-length': body.length } },
      (res) => {
        let s = '';
        res.on('data', (c) => (s += c));
        res.on('end', () => resolve(s));
      },
    );
    req.on('error', reject);
    body.write(req).then(() => req.end(), reject);
  });
  const secs = (performance.now() - t0) / 1000;
  agent.destroy();
  if (!reply.startsWith('["ok"')) throw new Error(reply);
  await b.q('test', 'delete_message', { msg_id: id });
  return MB / secs;
}

/** Commit of a local relay message with the file attached → relayed on A; returns [end-to-end MB/s, upload-only MB/s]. */
async function relayUpload(a: Host, b: Host, file: string, done: number): Promise<[number, number]> {
  const prep = await a.q('relay', 'prep_message', { dest: b.url('test') });
  const id = String(prep[1]).split('/').pop()!;
  await a.q('relay', 'attach_message', { msg_id: id, pathname: file });
  const t0 = performance.now();
  await a.q('relay', 'commit_message', { msg_id: id });
  const t1 = await waitRelayed(a, done);
  const log = await a.stdio('relay', id);
  const ms = Number(/attached big\.bin: \d+ bytes in (\d+) ms/.exec(log)?.[1]);
  const far = (await a.q('relay', 'get_message', { msg_id: id }))[1].status.split('/').pop();
  await b.q('test', 'delete_message', { msg_id: far });
  return [MB / ((t1 - t0) / 1000), MB / (ms / 1000)];
}

const [A, B] = await Promise.all([Host.start(), Host.start({ queues: { test: { script: RECORD_SH } } })]);
try {
  // The far queue holds what arrives: the bench measures delivery, not the far script.
  await fs.writeFile(path.join(B.root, 'config', 'test.pause'), '');
  const workers = JSON.parse(await fs.readFile(path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'scripts', 'relay', 'config.json'), 'utf8'))
    .num_workers as number;

  // Messages without attachments.
  const pause = path.join(A.root, 'config', 'relay.pause');
  await fs.writeFile(pause, '');
  for (let i = 0; i < N; i++) await A.send('relay', { dest: B.url('test'), param1: String(i) });
  const t0 = performance.now();
  await fs.rm(pause);
  const msgsPerS = N / (((await waitRelayed(A, N)) - t0) / 1000);
  const rawPerS = await rawMessages(B, N, workers);
  const spawnPerS = await nodeSpawnFloor(Math.min(N, 200), workers);

  // A big attachment: raw and relay alternated, medians.
  const file = path.join(A.root, 'big.bin');
  await bigFile(file, MB);
  const raw: number[] = [];
  const e2e: number[] = [];
  const upload: number[] = [];
  for (let i = 0; i < REPEAT; i++) {
    raw.push(await rawUpload(B, file));
    const [e, u] = await relayUpload(A, B, file, N + i + 1);
    e2e.push(e);
    upload.push(u);
  }
  console.log(
    JSON.stringify({
      bench: 'relay',
      messages: N,
      relay_workers: workers,
      relay_msgs_per_s: round(msgsPerS),
      raw_prep_commit_msgs_per_s: round(rawPerS),
      msgs_ratio_to_raw_http: round(msgsPerS / rawPerS),
      node_spawn_floor_per_s: round(spawnPerS),
      msgs_ratio_to_spawn_floor: round(msgsPerS / spawnPerS),
      attachment_mb: MB,
      raw_upload_MBps: round(median(raw)),
      relay_end_to_end_MBps: round(median(e2e)),
      relay_upload_only_MBps: round(median(upload)),
      ratio: round(median(e2e) / median(raw)),
      runs: { raw: raw.map((x) => round(x)), relay_end_to_end: e2e.map((x) => round(x)), relay_upload_only: upload.map((x) => round(x)) },
      targets: { ratio: 0.8 },
    }),
  );
} finally {
  await Promise.all([A.stop(), B.stop()]);
}
