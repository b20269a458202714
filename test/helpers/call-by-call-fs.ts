// nodeSpoolFs without the addons' one-trip jobs, for test doubles that fault or hold its single calls.
import { type SpoolFs, nodeSpoolFs } from '../../src/spool/spool-fs.js';

/** Spread this, not nodeSpoolFs, under a double that overrides open, mkdir or the like: else the addon's jobs would go around it. */
export const callByCallFs: SpoolFs = {
  ...nodeSpoolFs,
  makeBlanks: undefined,
  stageRun: undefined,
  overwrite: undefined,
  fsyncPath: undefined,
  journalSync: undefined,
};
