import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { JOB_FIELDS } from '../../src/message/job-fields.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { FORM_FIELD_IDS, fieldHelp, fieldLabel, isFieldHidden, loadFormConfig, parseFormConfig } from '../../src/config/form-config.js';

const LABEL = 'queues/cleaner/form.json';

describe('form.json', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-form-config-'));
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  it('is null when absent, also through a dangling symlink', async () => {
    expect(await loadFormConfig(path.join(dir, 'form.json'))).toBeNull();
    const link = path.join(dir, 'dangling.json');
    await fs.symlink(path.join(dir, 'gone.json'), link);
    expect(await loadFormConfig(link)).toBeNull();
  });

  it('hides fields not listed when default is "hidden"', async () => {
    const file = path.join(dir, 'cleaner.json');
    await fs.writeFile(
      file,
      JSON.stringify({ default: 'hidden', mesg_param1: { label: 'queue name', help: 'which queue' }, mesg_param2: { label: 'days to keep' }, mesg_dest: {} }),
    );
    const form = await loadFormConfig(file);
    const hidden = FORM_FIELD_IDS.filter((id) => isFieldHidden(form, id));
    // The Advanced fieldset's run-policy fields, the tags field, the due time and the attachments follow the same rule.
    expect(hidden).toEqual([
      'mesg_src',
      'mesg_param3',
      'mesg_param4',
      'mesg_status',
      'mesg_post_run_webhook',
      ...JOB_FIELDS.map((f) => `mesg_${f}`),
      'mesg_tags',
      'mesg_depends',
      'mesg_depends_fail',
      'mesg_limit',
      'mesg_limit_concurrency',
      'due_at',
      'filedata',
    ]);
    expect(fieldLabel(form, 'mesg_param1')).toBe('queue name');
    expect(fieldHelp(form, 'mesg_param1')).toBe('which queue');
    expect(fieldLabel(form, 'mesg_param2')).toBe('days to keep');
    expect(fieldHelp(form, 'mesg_param2')).toBeUndefined();
    expect(fieldLabel(form, 'mesg_src')).toBeUndefined();
  });

  it('shows everything unless default is exactly "hidden"', () => {
    for (const form of [null, parseFormConfig('{}', LABEL), parseFormConfig('{"default":"Hidden"}', LABEL)]) {
      expect(FORM_FIELD_IDS.some((id) => isFieldHidden(form, id))).toBe(false);
    }
  });

  it('refuses invalid JSON with an RqError naming the file', async () => {
    const file = path.join(dir, 'bad.json');
    await fs.writeFile(file, '{"default": hidden}');
    const err = await loadFormConfig(file, LABEL).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RqError);
    expect((err as RqError).code).toBe('RQ_ERR_CONFIG');
    expect((err as RqError).message).toMatch(new RegExp(`^${LABEL}: not valid JSON: `));
  });

  it('names field, expected and received for a wrong shape', () => {
    expect(() => parseFormConfig('{"mesg_param1":"queue name"}', LABEL)).toThrow(
      `${LABEL}: mesg_param1: expected an object {"label": ..., "help": ...}, received "queue name"`,
    );
    expect(() => parseFormConfig('{"mesg_src":{"label":3}}', LABEL)).toThrow(`${LABEL}: mesg_src.label: expected a label text (string), received 3`);
    expect(() => parseFormConfig('{"default":true}', LABEL)).toThrow(
      `${LABEL}: default: expected a string ("hidden" hides every field not listed), received true`,
    );
    expect(() => parseFormConfig('"hidden"', LABEL)).toThrow(`${LABEL}: expected a JSON object, received "hidden"`);
  });
});
