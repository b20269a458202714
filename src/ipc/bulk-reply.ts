// A bulk action's job as the queue's `bulk` and `bulk_status` commands answer it, typed once for the queue, the web and the CLI.
import type { ErrorCode } from '../errors.js';

export const BULK_OPS = ['retry', 'delete', 'ack', 'move'] as const;
export type BulkOp = (typeof BULK_OPS)[number];

/** A message to act on: its short id, and whether it is an acknowledged error (`err/.<id>`). */
export interface BulkTarget {
  id: string;
  acked: boolean;
}

export interface BulkJob {
  job: string;
  op: BulkOp;
  dest?: string;
  total: number;
  /** Messages handled so far (changed + skipped). */
  done: number;
  changed: number;
  /** Reason → how many; the first ids skipped for each reason in `examples`. */
  skipped: Record<string, number>;
  examples: Record<string, string[]>;
  /** Reason → its catalogue code, so a client gives each skip its status without reading the reason (absent from an older queue). */
  codes?: Record<string, ErrorCode>;
  state: 'running' | 'finished';
  started_at: number;
  finished_at?: number;
}
