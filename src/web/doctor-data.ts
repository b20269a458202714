// The doctor's list (mgr/doctor.ts) as the web gathers it: rq-mgr's client, each queue's pooled client, the timers' client.
import { type DoctorReport, doctorReport } from '../mgr/doctor.js';
import type { WebContext } from './web-context.js';

export function webDoctorReport(ctx: WebContext): Promise<DoctorReport> {
  return doctorReport({
    root: ctx.deps.root,
    mgr: ctx.deps.mgr,
    statusDetail: (q) => ctx.queue(q).statusDetail(),
    timers: ctx.deps.timers,
  });
}
