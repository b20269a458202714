// What the in-process lifecycle command tests share: a queue's clock in seconds, and a message and its history as the queue's commands answer them.
import type { InProcess } from '../in-process.js';

export const nowS = (p: InProcess) => Math.floor(p.clock.ms / 1000);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const view = async (p: InProcess, id: string): Promise<any> => (await p.cmd('get_message', { msg_id: id }))[1];
export const history = async (p: InProcess, id: string): Promise<Record<string, unknown>[]> => (await p.cmd('get_history', { msg_id: id }))[1];
