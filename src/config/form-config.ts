// A queue's optional form.json (spec §1.5): which new-message form fields show, and their label/help texts.
import fs from 'node:fs/promises';
import * as z from 'zod/mini';
import { isErrno } from '../errors.js';
import { JOB_FIELDS } from '../message/job-fields.js';
import { configReadError, parseConfigJson, parseWithSchema } from './schema-error.js';

export const FORM_FIELD_IDS = [
  'mesg_dest',
  'mesg_src',
  'mesg_param1',
  'mesg_param2',
  'mesg_param3',
  'mesg_param4',
  'mesg_status',
  'mesg_post_run_webhook',
  // The Advanced fieldset: run policy fields (rq-beyond §B1.11).
  ...JOB_FIELDS.map((f) => `mesg_${f}` as const),
  // rq-beyond §B9: tags, comma-separated.
  'mesg_tags',
  // rq-beyond §B8 and §B12, in the Advanced fieldset: dependencies and concurrency limits.
  'mesg_depends',
  'mesg_depends_fail',
  'mesg_limit',
  'mesg_limit_concurrency',
  // The due time and the attachments (div#due_at_field, div#filedata_field): hidden by "default": "hidden" like every field.
  'due_at',
  'filedata',
] as const;

export type FormFieldId = (typeof FORM_FIELD_IDS)[number];

const FieldOverrideSchema = z.looseObject(
  {
    label: z.optional(z.string({ error: 'a label text (string)' })),
    help: z.optional(z.string({ error: 'a help text (string)' })),
  },
  { error: 'an object {"label": ..., "help": ...}' },
);

export type FieldOverride = z.output<typeof FieldOverrideSchema>;

// Keys other than the field ids are kept and ignored, as the classic template ignores them.
export const FormConfigSchema = z.looseObject(
  {
    default: z.optional(z.string({ error: 'a string ("hidden" hides every field not listed)' })),
    ...(Object.fromEntries(FORM_FIELD_IDS.map((id) => [id, z.optional(FieldOverrideSchema)])) as Record<
      FormFieldId,
      z.ZodMiniOptional<typeof FieldOverrideSchema>
    >),
  },
  { error: 'a JSON object' },
);

export type FormConfig = z.output<typeof FormConfigSchema>;

export function parseFormConfig(text: string, fileLabel: string): FormConfig {
  return parseWithSchema(FormConfigSchema, parseConfigJson(text, fileLabel), fileLabel);
}

/** The form overrides, or null when the queue has none (absent file or dangling scandir symlink). */
export async function loadFormConfig(file: string, fileLabel: string = file): Promise<FormConfig | null> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw configReadError(fileLabel, err);
  }
  return parseFormConfig(text, fileLabel);
}

/** Hidden iff default is exactly "hidden" and the field is not named in the file (classic rule). */
export function isFieldHidden(form: FormConfig | null, fieldId: FormFieldId): boolean {
  return form !== null && form.default === 'hidden' && !Object.prototype.hasOwnProperty.call(form, fieldId);
}

export function fieldLabel(form: FormConfig | null, fieldId: FormFieldId): string | undefined {
  return form?.[fieldId]?.label;
}

export function fieldHelp(form: FormConfig | null, fieldId: FormFieldId): string | undefined {
  return form?.[fieldId]?.help;
}
