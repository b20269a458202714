// `rq version` and `rq --version`: the version of rq (package.json's, which src/version.ts carries and a test keeps equal).
import { RQ_VERSION } from '../version.js';
import type { RqCommand } from './rq-command.js';

const version: RqCommand = {
  summary: "print rq's version",
  options: [],
  examples: ['rq version     # the same as rq --version'],
  needsRoot: false,
  run: async ({ io }) => {
    io.stdout(`rq ${RQ_VERSION}`);
    return 0;
  },
};

export const VERSION_COMMANDS: Record<string, RqCommand> = { version };
