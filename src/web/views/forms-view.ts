// The new-message form (honouring form.json) and the new-queue form.
import type { Answer } from '../../ipc/answer.js';
import { type FormConfig, type FormFieldId, fieldHelp, fieldLabel, isFieldHidden } from '../../config/form-config.js';
import { JOB_FIELDS, type JobField } from '../../message/job-fields.js';
import { parseFullId } from '../../message/message-id.js';
import type { Urls } from '../urls.js';
import { type SafeHtml, html } from './html.js';

interface FieldSpec {
  id: FormFieldId;
  name: string;
  label: string;
  help?: string;
  value?: string;
  /** Whether form.json may replace the label/help (the classic template allowed it for these). */
  overridable: boolean;
  /** A select of [value, text] instead of a text input. */
  options?: [string, string][];
}

/**
 * One field. Its help is one element with both classes: `note` is what the classic template used
 * and scraping clients read (form.json's help lands there), `help` is what rq.css styles.
 */
function field(form: FormConfig | null, f: FieldSpec): SafeHtml {
  const label = (f.overridable && fieldLabel(form, f.id)) || f.label;
  const help = (f.overridable && fieldHelp(form, f.id)) || f.help;
  const input = f.options
    ? html`<select id="${f.id}" name="${f.name}">${f.options.map(([v, text]) => html`<option value="${v}">${text}</option>`)}</select>`
    : html`<input type="text" id="${f.id}" name="${f.name}" value="${f.value ?? ''}">`;
  return html`<div class="field" id="${f.id}_field"${hiddenStyle(form, f.id)}>
  <label for="${f.id}">${label}</label>
  ${input}
  ${help ? html`<p class="help note" id="${f.id}_help">${help}</p>` : ''}
</div>`;
}

/** The Advanced fieldset (rq-beyond §B1.11): empty means the queue's default. */
const JOB_FIELD_TEXT: Record<JobField, [label: string, help: string]> = {
  priority: ['Priority', 'Whole number; lower runs first (default 0)'],
  max_retries: ['Max retries', 'Runs again after a failure this many times, with exponential backoff'],
  backoff_base: ['Backoff base', 'Seconds before the first retry; doubles each time'],
  min_retry_delay: ['Min retry delay', 'Seconds; no retry comes sooner'],
  max_retry_delay: ['Max retry delay', 'Seconds; no retry waits longer'],
  retry_jitter: ['Retry jitter', 'From 0 to 1: the share of each delay taken off at random'],
  max_age: ['Max age', 'Seconds after its due time by which it must start, or it expires'],
  expire_at: ['Expire at', 'Epoch seconds by which it must start, or it expires'],
  timeout: ['Timeout', 'Seconds a run may take before its process group is killed'],
  heartbeat_timeout: ['Heartbeat timeout', 'Seconds of silence on fd 3 before a run counts as stalled'],
};

/** rq-beyond §B8 and §B12, also in the Advanced fieldset; empty means none (or the queue's `limit`). */
const DEPENDS_LIMIT_FIELDS: FieldSpec[] = [
  {
    id: 'mesg_depends',
    name: 'mesg[depends]',
    label: 'Depends on',
    help: 'Comma-separated messages of this host (<queue>/<id> or full ids) that must finish first',
    overridable: true,
  },
  {
    id: 'mesg_depends_fail',
    name: 'mesg[depends_fail]',
    label: 'If a dependency fails',
    help: 'fail: this message fails too; run: it runs anyway; wait: it waits until that dependency is requeued and succeeds',
    overridable: true,
    options: [
      ['', 'default (fail)'],
      ['fail', 'fail'],
      ['run', 'run'],
      ['wait', 'wait'],
    ],
  },
  { id: 'mesg_limit', name: 'mesg[limit]', label: 'Limit key', help: 'Concurrency key shared across queues, e.g. reports or api:{param1}', overridable: true },
  {
    id: 'mesg_limit_concurrency',
    name: 'mesg[limit_concurrency]',
    label: 'Limit concurrency',
    help: 'Whole number 1-10000: how many may run at once under the key, when config/limits.json does not say',
    overridable: true,
  },
];

/** ` style="display: none;"` on a field form.json hides, as the classic template wrote it. */
const hiddenStyle = (form: FormConfig | null, id: FormFieldId): SafeHtml | string => (isFieldHidden(form, id) ? html` style="display: none;"` : '');

/**
 * The due time (a local date and time; new-message.js adds the browser's UTC offset as `due_tz`, see
 * due-time.ts) and attachments, which the form sends as multipart beside the fields. form.json
 * hides them and relabels them as `due_at` and `filedata`.
 */
function dueAndFiles(form: FormConfig | null): SafeHtml {
  const label = (id: FormFieldId, text: string) => fieldLabel(form, id) || text;
  const help = (id: FormFieldId, text: string) => fieldHelp(form, id) || text;
  return html`<div class="field" id="due_at_field"${hiddenStyle(form, 'due_at')}>
    <label for="due_at">${label('due_at', 'Due')}</label>
    <input type="datetime-local" id="due_at" name="due_at" step="1"><input type="hidden" id="due_tz" name="due_tz" value="">
    <p class="help note" id="due_at_help">${help('due_at', "When it may run, in your browser's time zone (UTC without JavaScript); empty: now")}</p>
  </div>
  <div class="field" id="filedata_field"${hiddenStyle(form, 'filedata')}>
    <label for="filedata">${label('filedata', 'Attachments')}</label>
    <input type="file" id="filedata" name="filedata" multiple>
    <p class="help note" id="filedata_help">${help('filedata', "Attached before the message is queued (modes commit and prep); the script finds them in its message's attach/ folder")}</p>
  </div>`;
}

export function newMessageView(q: string, form: FormConfig | null, urls: Urls): SafeHtml {
  // The Advanced fieldset goes with its fields: a form.json that hides them all hides it.
  const advanced: FormFieldId[] = [...JOB_FIELDS.map((f) => `mesg_${f}` as const), ...DEPENDS_LIMIT_FIELDS.map((f) => f.id)];
  const fields: FieldSpec[] = [
    { id: 'mesg_dest', name: 'mesg[dest]', label: 'Destination Queue', value: urls.queue(q), overridable: false },
    { id: 'mesg_src', name: 'mesg[src]', label: 'Source', help: 'Free text: who or what sent this message', overridable: true },
    ...([1, 2, 3, 4] as const).map((n): FieldSpec => ({
      id: `mesg_param${n}`,
      name: `mesg[param${n}]`,
      label: `Param ${n}`,
      help: `Given to the script as RQ_PARAM${n}`,
      overridable: true,
    })),
    // The classic form's field, kept for form.json files that relabel it; a create never copied it (spec §2.3).
    {
      id: 'mesg_status',
      name: 'mesg[status]',
      label: 'Status',
      help: 'Not stored: the status of a message is what its state and its script say',
      overridable: true,
    },
    {
      id: 'mesg_post_run_webhook',
      name: 'mesg[post_run_webhook]',
      label: 'Post-run webhooks',
      help: 'URLs separated by spaces, called when the message finishes',
      overridable: false,
    },
    // rq-beyond §B9: looked up across queues at /tags/<tag>; "track" lists it on the dashboard.
    {
      id: 'mesg_tags',
      name: 'mesg[tags]',
      label: 'Tags',
      help: 'Comma-separated, e.g. nightly,customer:42 (letters, digits and . _ : @ + -); "track" shows the message on the dashboard',
      overridable: true,
    },
  ];
  return html`<div class="page-head"><h1>New Message for <a href="${urls.queue(q)}">${q}</a></h1></div>
<form class="card form" id="new-message-form" method="post" enctype="multipart/form-data" action="${urls.queue(q, '/new_message')}">
  <input type="hidden" name="x_format" value="html">
  ${fields.map((f) => field(form, f))}
  ${dueAndFiles(form)}
  <details class="field" id="mesg_advanced"${advanced.every((id) => isFieldHidden(form, id)) ? html` style="display: none;"` : ''}><summary>Advanced</summary>
    ${JOB_FIELDS.map((f) => field(form, { id: `mesg_${f}`, name: `mesg[${f}]`, label: JOB_FIELD_TEXT[f][0], help: JOB_FIELD_TEXT[f][1], overridable: true }))}
    ${DEPENDS_LIMIT_FIELDS.map((f) => field(form, f))}
  </details>
  <fieldset class="field" id="mesg_method_field"><legend>Mode</legend>
    <label><input type="radio" name="mesg[_method]" id="mesg_method_commit" value="commit" checked> commit</label>
    <label><input type="radio" name="mesg[_method]" id="mesg_method_prep" value="prep"> prep</label>
    <label><input type="radio" name="mesg[_method]" id="mesg_method_single_que" value="single_que"> single_que</label>
    <p class="help note">'commit' gets queued now.</p>
    <p class="help note">'prep' stays in prep state until commited (allows attachments/modification/etc.)</p>
    <p class="help note">'single_que' only creates a message in 'que' state if that state is empty, otherwise it returns a msg_id of what is there. used for event coalescing.</p>
  </fieldset>
  <button type="submit" class="button primary" id="btn-send-message">Send Message</button>
</form>`;
}

export function newQueueView(urls: Urls): SafeHtml {
  const checks = (name: string) =>
    [1, 2, 3, 4].map((n) => html`<label><input type="checkbox" name="queue[${name}][]" id="queue_${name}_${n}" value="${n}"> param${n}</label>`);
  return html`<div class="page-head"><h1>New Queue</h1></div>
<form class="card form" id="new-queue-form" method="post" action="${urls.link('new_queue')}">
  <div class="field" id="queue_name_field"><label for="queue_name">Queue name</label><input type="text" id="queue_name" name="queue[name]" required>
    <p class="help">Letters, digits, '-' and '_'.</p></div>
  <div class="field" id="queue_script_field"><label for="queue_script">Script path</label><input type="text" id="queue_script" name="queue[script]" required>
    <p class="help">Absolute, or relative to the rq root.</p></div>
  <div class="field" id="queue_num_workers_field"><label for="queue_num_workers">Max workers</label><input type="number" min="1" max="128" id="queue_num_workers" name="queue[num_workers]" value="1">
    <p class="help">Anything &gt; 1 means parallelism</p></div>
  <fieldset class="field" id="queue_coalesce_field"><legend>Coalescing</legend>${checks('coalesce_params')}
    <p class="help">If two queued messages share all checked params, only one runs.</p></fieldset>
  <fieldset class="field" id="queue_blocking_field"><legend>Blocking</legend>${checks('blocking_params')}
    <p class="help">A message does not start while another with the same checked params runs.</p></fieldset>
  <div class="field" id="queue_exec_prefix_field"><label for="queue_exec_prefix">'exec' prefix</label><input type="text" id="queue_exec_prefix" name="queue[exec_prefix]" value="bash -lc "></div>
  <button type="submit" class="button primary" id="btn-create-queue">Create Queue</button>
</form>`;
}

/** HTML new_message without `back`: "New Message Result". */
export function resultView(q: string, a: Answer<string>, urls: Urls): SafeHtml {
  // Link through this server (the full id names the configured host, which the browser may not reach).
  const where = a.ok ? parseFullId(a.value) : null;
  const reply = a.raw;
  const body = a.ok
    ? html`<p id="result-ok">OK - <a href="${where ? urls.msg(where.queue, where.id) : '#'}" id="result-link">${a.value}</a></p>`
    : html`<p id="result-error" class="bad">${a.code === 'RQ_ERR_PROTOCOL' ? a.text : `${String((reply as unknown[])[0])} - ${a.text}`}</p>`;
  return html`<div class="page-head"><h1>New Message Result</h1></div><section class="card"><p>Queue: <a href="${urls.queue(q)}" id="result-queue">${q}</a></p>${body}</section>`;
}
