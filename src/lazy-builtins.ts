// Node built-ins a daemon needs only for some work, loaded at their first use: importing node:crypto or node:zlib costs every process that does so heap for the module's code whether or not it ever hashes (docs/performance.md, Memory).
import type { Hash } from 'node:crypto';

// Kept once loaded: a getBuiltinModule lookup costs about as much as a crc32 of a journal record.
let crypto: typeof import('node:crypto') | undefined;
let zlib: typeof import('node:zlib') | undefined;

/** node:crypto's createHash, with the module loaded by the first call. */
export function createHash(algorithm: string): Hash {
  return (crypto ??= process.getBuiltinModule('node:crypto')).createHash(algorithm);
}

/** node:crypto's randomBytes, with the module loaded by the first call. */
export function randomBytes(size: number): Buffer {
  return (crypto ??= process.getBuiltinModule('node:crypto')).randomBytes(size);
}

/** node:zlib's crc32, with the module loaded by the first call. */
export function crc32(data: string | Buffer): number {
  return (zlib ??= process.getBuiltinModule('node:zlib')).crc32(data);
}
