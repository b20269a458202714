// Shared fixtures for the ipc tests: temp dirs, stale socket files, raw framed conversations.
import { execFile } from 'node:child_process';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { FrameDecoder, encodeFrame, type Proto } from '../../src/ipc/framing.js';

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'rq-ipc-'));
  return { dir, cleanup: () => fsp.rm(dir, { recursive: true, force: true }) };
}

/** Leaves a socket file nobody listens on, as a SIGKILLed daemon does. */
export function staleSocket(sockPath: string): Promise<void> {
  const script = `require('net').createServer().listen(${JSON.stringify(sockPath)}, () => process.kill(process.pid, 'SIGKILL'))`;
  return new Promise((resolve) => execFile(process.execPath, ['-e', script], () => resolve()));
}

/** Sends raw bytes on one connection and collects reply payloads until the server closes it. */
export function converse(sockPath: string, proto: Proto, bytes: Buffer): Promise<{ replies: string[]; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const decoder = new FrameDecoder(proto);
    const replies: string[] = [];
    const sock = net.createConnection(sockPath);
    sock.on('data', (d) => replies.push(...decoder.push(d).map((b) => b.toString('utf8'))));
    sock.on('error', reject);
    sock.on('close', () => resolve({ replies, closed: true }));
    sock.write(bytes);
  });
}

/** Opens a raw connection and resolves with the first `count` reply payloads. */
export function exchange(sockPath: string, proto: Proto, payloads: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const decoder = new FrameDecoder(proto);
    const replies: string[] = [];
    const sock = net.createConnection(sockPath);
    sock.on('data', (d) => {
      replies.push(...decoder.push(d).map((b) => b.toString('utf8')));
      if (replies.length >= payloads.length) {
        sock.destroy();
        resolve(replies);
      }
    });
    sock.on('error', reject);
    sock.write(Buffer.concat(payloads.map((p) => encodeFrame(proto, p))));
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
