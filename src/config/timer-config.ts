// A timer definition file in timers/ (spec §8): its name rule and its {period, msg} content.
import fs from 'node:fs/promises';
import * as z from 'zod/mini';
import { RqError, shown } from '../errors.js';
import { JOB_FIELDS, readJobFields } from '../message/job-fields.js';
import { refuseFieldNames } from '../message/create-fields.js';
import { configReadError, configJsonError, parseWithSchema } from './schema-error.js';

export const MIN_TIMER_PERIOD = 60;

export interface TimerParseOptions {
  /** Periods below 60 s, for tests only (the caller passes it when RQ_ENV=test). */
  allowShortPeriod?: boolean;
}

/** The timer name of a timers/ entry (`cleaner.json` → `cleaner`), or null when it is not a timer file. */
export function timerNameOf(fileName: string): string | null {
  const m = /^([^.]+)\.(json|yaml)$/.exec(fileName);
  return m ? m[1] : null;
}

// Numbers are accepted as their text: `"param2": 30` means "30", which is what the message carries.
const param = z.optional(
  z.pipe(
    z.union([z.string(), z.number()], { error: 'a string' }),
    z.transform((v) => String(v)),
  ),
);

const MsgShape = z.object(
  {
    dest: z
      .string({ error: 'a destination queue name or http:// URL (non-empty string)' })
      .check(z.minLength(1, { error: 'a destination queue name or http:// URL (non-empty string)' })),
    src: z.optional(z.string({ error: 'a string' })),
    param1: param,
    param2: param,
    param3: param,
    param4: param,
    // Run-policy fields (rq-beyond §B1.1), checked as a create checks them.
    ...Object.fromEntries([...JOB_FIELDS, 'retries'].map((f) => [f, z.optional(z.unknown())])),
  },
  { error: 'an object with at least "dest"' },
);

const MsgSchema = z.pipe(
  MsgShape,
  z.transform((m: z.output<typeof MsgShape>, ctx) => {
    const { retries: _alias, ...rest } = m as Record<string, unknown>;
    const refuse = (field: string, expected: string) => {
      ctx.issues.push({ code: 'custom', path: [field], message: expected, input: m });
      return RqError.of('RQ_ERR_INVALID_FIELD', field, expected, shown((m as Record<string, unknown>)[field]));
    };
    try {
      for (const f of JOB_FIELDS) delete rest[f];
      return { ...(rest as typeof m), ...readJobFields(m, refuse) };
    } catch {
      return z.NEVER;
    }
  }),
);

function timerSchema(minPeriod: number) {
  const expected = `a whole number of seconds >= ${minPeriod}`;
  return z.object(
    {
      period: z.int({ error: expected }).check(z.minimum(minPeriod, { error: expected })),
      msg: MsgSchema,
    },
    { error: 'a JSON object {"period": <seconds>, "msg": {"dest": ...}}' },
  );
}

const NORMAL_SCHEMA = timerSchema(MIN_TIMER_PERIOD);
const TEST_SCHEMA = timerSchema(1);

export type TimerConfig = z.output<typeof NORMAL_SCHEMA>;
export type TimerMsg = TimerConfig['msg'];

/**
 * Parses a timer file. `.yaml` files are read only when their content is JSON (which is valid YAML):
 * rq carries no YAML parser, and guessing at block YAML could fire the wrong message on a schedule.
 */
export function parseTimerConfig(text: string, fileLabel: string, opts: TimerParseOptions = {}): TimerConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    if (fileLabel.endsWith('.yaml')) {
      throw RqError.of(
        'RQ_ERR_CONFIG',
        `${fileLabel}: YAML timer files are read only when written in JSON syntax (rq has no YAML parser); rewrite it as JSON, e.g. {"period": 3600, "msg": {"dest": "<queue>"}}, or use a .json file`,
      ).causedBy(err);
    }
    throw configJsonError(fileLabel, err);
  }
  // A misspelt field (`prioirty`) is refused as over HTTP: dropped, the timer would fire without it on every period.
  const msg = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>).msg : undefined;
  if (typeof msg === 'object' && msg !== null && !Array.isArray(msg)) {
    try {
      refuseFieldNames(msg as Record<string, unknown>, 'msg.');
    } catch (err) {
      throw RqError.of('RQ_ERR_CONFIG', `${fileLabel}: ${(err as Error).message}`);
    }
  }
  return parseWithSchema(opts.allowShortPeriod ? TEST_SCHEMA : NORMAL_SCHEMA, raw, fileLabel);
}

/** Reads and validates a timer file (through its symlink); `fileLabel` is how errors name it. */
export async function loadTimerConfig(file: string, opts: TimerParseOptions = {}, fileLabel: string = file): Promise<TimerConfig> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw configReadError(fileLabel, err);
  }
  return parseTimerConfig(text, fileLabel, opts);
}
