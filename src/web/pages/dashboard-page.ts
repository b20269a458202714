// GET /: the dashboard, with a "Needs attention" panel when the doctor's list is not empty (its counts refresh from /dashboard.json, its tracked list from /tracked.json, its limits from /limits.json, in the browser, when GET /events says something moved).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { TRACK_TAG } from '../../message/tags.js';
import { dashboardData } from '../dashboard-data.js';
import { webDoctorReport } from '../doctor-data.js';
import { limitsState } from '../limit-status.js';
import { DEFAULT_TAG_PAGE, taggedEverywhere } from '../tag-lookup.js';
import { dashboardView } from '../views/dashboard-view.js';
import { limitsView } from '../views/limits-view.js';
import { attentionView } from '../views/attention-view.js';
import { trackedView } from '../views/tags-view.js';
import { html } from '../views/html.js';
import type { WebContext } from '../web-context.js';

export function dashboardPage(ctx: WebContext) {
  return async function dashboard(req: FastifyRequest, reply: FastifyReply) {
    const [data, tracked, limits, doctor] = await Promise.all([
      dashboardData(ctx),
      taggedEverywhere(ctx, TRACK_TAG, { offset: 0, limit: DEFAULT_TAG_PAGE }),
      limitsState(ctx),
      webDoctorReport(ctx),
    ]);
    const sections = html`${trackedView(tracked, ctx.urls)}${limitsView(limits, ctx.urls)}`;
    return ctx.page(req, reply, dashboardView(data, ctx.urls, ctx.deps.config.allow_new_queue === true, sections, attentionView(doctor, ctx.urls)), {
      scripts: ['main.js', 'limits.js'],
    });
  };
}
