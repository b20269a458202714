// Every route of the web process, in one table (spec §9.3 order), wired to its handler.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { adminApi } from './api/admin-api.js';
import { attachApi } from './api/attach-api.js';
import { dependsLimitsApi } from './api/depends-limits-api.js';
import { messageApi } from './api/message-api.js';
import { lifecycleApi } from './api/lifecycle-api.js';
import { statusApi } from './api/status-api.js';
import { tagApi } from './api/tag-api.js';
import { tailEvents } from './api/tail-events.js';
import { dashboardPage } from './pages/dashboard-page.js';
import { formPages } from './pages/form-pages.js';
import { messagePage } from './pages/message-page.js';
import { queuePage } from './pages/queue-page.js';
import { tailPages } from './pages/tail-page.js';
import { metricsRoute } from './metrics/metrics-route.js';
import { pathParam } from './request-params.js';
import type { WebContext } from './web-context.js';

export function registerRoutes(app: FastifyInstance, ctx: WebContext, maxUploadBytes: number): void {
  const status = statusApi(ctx);
  const message = messageApi(ctx);
  const lifecycle = lifecycleApi(ctx);
  const tags = tagApi(ctx);
  const dependsLimits = dependsLimitsApi(ctx);
  const admin = adminApi(ctx);
  const attach = attachApi(ctx, maxUploadBytes);
  const forms = formPages(ctx);
  const tail = tailPages(ctx);
  const showQueue = queuePage(ctx);
  const showMessage = messagePage(ctx);

  app.get('/', dashboardPage(ctx));
  app.get('/dashboard.json', status.dashboardJson);
  app.get('/healthz', status.healthz);
  // rq-beyond §B16: Prometheus; with metrics_public it and /healthz skip basic_auth (basic-auth.ts).
  app.get('/metrics', metricsRoute(ctx));
  app.get('/new_queue', forms.newQueue);
  app.post('/new_queue', admin.newQueue);
  app.post('/new_queue_link', admin.newQueueLink);
  app.post('/delete_queue', admin.deleteQueue);
  app.get('/q.txt', status.listTxt);
  app.get('/q.json', status.listJson);
  // rq-beyond §B9: lookups across every queue; /tags/<tag>.json is JSON, /tags/<tag> the HTML view.
  app.get('/tracked.json', tags.trackedJson);
  app.get('/tags/:tag', tags.tagged);
  // rq-beyond §B12: rq-mgr's concurrency-limit table.
  app.get('/limits.json', dependsLimits.limitsJson);

  // /q/<q>, /q/<q>.txt and /q/<q>.json share one path segment (queue names never contain a dot).
  app.get('/q/:q', (req: FastifyRequest, reply: FastifyReply) => {
    const seg = pathParam(req, 'q');
    if (seg.endsWith('.json')) return status.queueStatus(req, reply, seg.slice(0, -5), 'json');
    if (seg.endsWith('.txt')) return status.queueStatus(req, reply, seg.slice(0, -4), 'txt');
    return showQueue(req, reply, seg);
  });
  app.get('/q/:q/done.json', status.doneJson);
  app.get('/q/:q/new_message', forms.newMessage);
  app.post('/q/:q/new_message', message.newMessage);
  app.post('/q/:q/adminoper', admin.adminoper);
  app.post('/q/:q/restart', admin.restart);
  app.post('/q/:q/ack_errs', admin.ackErrs);
  app.post('/q/:q/requeue_errs', lifecycle.requeueErrs);
  app.get('/q/:q/running.json', lifecycle.runningJson);
  app.get('/q/:q/waiting.json', lifecycle.waitingJson);
  app.post('/q/:q/cancel_tagged', tags.cancelTagged);
  app.get('/q/:q/tags.json', tags.queueTagsJson);
  app.get('/q/:q/tags/:tag', tags.queueTagged);
  app.get('/q/:q/config.json', status.configFile);
  app.get('/q/:q/config', status.liveConfig);

  // /q/<q>/<id> and /q/<q>/<id>.json likewise (ids contain dots, so only the suffix tells them apart).
  app.get('/q/:q/:id', (req: FastifyRequest, reply: FastifyReply) => {
    const seg = pathParam(req, 'id');
    return seg.endsWith('.json') ? message.messageJson(req, reply, seg.slice(0, -5)) : showMessage(req, reply, seg);
  });
  app.get('/q/:q/:id/state.json', message.stateJson);
  app.post('/q/:q/:id/clone', message.clone);
  app.post('/q/:q/:id/run_now', message.runNow);
  app.post('/q/:q/:id/cancel', (req: FastifyRequest, reply: FastifyReply) => lifecycle.cancel(req, reply));
  app.post('/q/:q/:id/requeue', lifecycle.requeue);
  app.post('/q/:q/:id/priority', lifecycle.priority);
  app.post('/q/:q/:id/reschedule', lifecycle.reschedule);
  app.get('/q/:q/:id/history.json', lifecycle.historyJson);
  app.post('/q/:q/:id/tags', tags.tagMessage);
  app.post('/q/:q/:id/undepend', dependsLimits.undepend);
  app.post('/q/:q/:id/attach/new', attach.attachNew);
  app.post('/q/:q/:id/attach/:name', attach.attachDelete);
  app.get('/q/:q/:id/log/:file', attach.logGet);
  app.get('/q/:q/:id/log/:file/events', { exposeHeadRoute: false }, tailEvents(ctx));
  app.get('/q/:q/:id/attach/:name', attach.attachGet);
  app.get('/q/:q/:id/tailview/:name', tail.attach);
  app.get('/q/:q/:id/tailviewlog/:file', tail.log);
  app.post('/q/:q/:id', message.messageAction);
}
