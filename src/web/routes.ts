// Every route of the web process, in one table (spec §9.3 order), wired to its handler and its OpenAPI schema (openapi/).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { adminApi } from './api/admin-api.js';
import { attachApi } from './api/attach-api.js';
import { dependsLimitsApi } from './api/depends-limits-api.js';
import { fleetDepsApi } from './api/fleet-deps-api.js';
import { eventStream } from './api/events.js';
import { messageApi } from './api/message-api.js';
import { lifecycleApi } from './api/lifecycle-api.js';
import { statsApi } from './api/stats-api.js';
import { statusApi } from './api/status-api.js';
import { doctorApi } from './api/doctor-api.js';
import { fleetApi } from './api/fleet-api.js';
import { tagApi } from './api/tag-api.js';
import { searchApi } from './api/search-api.js';
import { listApi } from './api/list-api.js';
import { bulkApi } from './api/bulk-api.js';
import { batchApi } from './api/batch-api.js';
import { tailEvents } from './api/tail-events.js';
import { dashboardPage } from './pages/dashboard-page.js';
import { fleetPage } from './pages/fleet-page.js';
import { formPages } from './pages/form-pages.js';
import { messagePage } from './pages/message-page.js';
import { queuePage } from './pages/queue-page.js';
import { statsPages } from './pages/stats-page.js';
import { tailPages } from './pages/tail-page.js';
import { adminSchemas as adminDocs } from './openapi/admin-schemas.js';
import { attachSchemas as attachDocs } from './openapi/attach-schemas.js';
import { dependsLimitsSchemas as dependsLimitsDocs } from './openapi/depends-limits-schemas.js';
import { lifecycleSchemas as lifecycleDocs } from './openapi/lifecycle-schemas.js';
import { messageSchemas as messageDocs } from './openapi/message-schemas.js';
import { pageSchemas as pageDocs } from './openapi/page-schemas.js';
import { statusSchemas as statusDocs } from './openapi/status-schemas.js';
import { fleetSchemas as fleetDocs } from './openapi/fleet-schemas.js';
import { tagSchemas as tagDocs } from './openapi/tag-schemas.js';
import { observabilitySchemas as observabilityDocs } from './openapi/observability-schemas.js';
import { listSchemas as listDocs } from './openapi/list-schemas.js';
import { metricsRoute } from './metrics/metrics-route.js';
import { pathParam } from './request-params.js';
import type { WebContext } from './web-context.js';

export function registerRoutes(app: FastifyInstance, ctx: WebContext, maxUploadBytes: number): void {
  const status = statusApi(ctx);
  const message = messageApi(ctx, maxUploadBytes);
  const lifecycle = lifecycleApi(ctx);
  const tags = tagApi(ctx);
  const dependsLimits = dependsLimitsApi(ctx);
  const fleetDeps = fleetDepsApi(ctx);
  const admin = adminApi(ctx);
  const attach = attachApi(ctx, maxUploadBytes);
  const forms = formPages(ctx);
  const tail = tailPages(ctx);
  const showQueue = queuePage(ctx);
  const showMessage = messagePage(ctx);

  // /docs (Swagger UI) and /docs/json (the OpenAPI document of this table): openapi/api-docs.ts, registered before it.
  app.get('/', { schema: pageDocs.dashboard }, dashboardPage(ctx));
  app.get('/dashboard.json', { schema: statusDocs.dashboardJson }, status.dashboardJson);
  app.get('/healthz', { schema: statusDocs.healthz }, status.healthz);
  app.get('/doctor.json', { schema: statusDocs.doctorJson }, doctorApi(ctx));
  // A fleet of hosts through etcd (docs/fleet.md): every host and its queues, as rq-mgr sees them.
  app.get('/fleet.json', { schema: fleetDocs.fleetJson }, fleetApi(ctx));
  app.get('/fleet', { schema: fleetDocs.fleetPage }, fleetPage(ctx));
  // rq-beyond §B16: Prometheus; with metrics_public it and /healthz skip basic_auth (basic-auth.ts).
  app.get('/metrics', { schema: observabilityDocs.metrics }, metricsRoute(ctx));
  app.get('/new_queue', { schema: pageDocs.newQueueForm }, forms.newQueue);
  app.post('/new_queue', { schema: adminDocs.newQueue }, admin.newQueue);
  app.post('/new_queue_link', { schema: adminDocs.newQueueLink }, admin.newQueueLink);
  app.post('/delete_queue', { schema: adminDocs.deleteQueue }, admin.deleteQueue);
  app.get('/q.txt', { schema: statusDocs.listTxt }, status.listTxt);
  app.get('/q.json', { schema: statusDocs.listJson }, status.listJson);
  // rq-beyond §B9: lookups across every queue; /tags/<tag>.json is JSON, /tags/<tag> the HTML view.
  app.get('/tracked.json', { schema: tagDocs.trackedJson }, tags.trackedJson);
  app.get('/tags/:tag', { schema: tagDocs.tagged }, tags.tagged);
  // rq-beyond §B12: rq-mgr's concurrency-limit table.
  app.get('/limits.json', { schema: dependsLimitsDocs.limitsJson }, dependsLimits.limitsJson);
  // brightroll's search of one queue's messages in every state (JSON; x_format=html for the page).
  app.get('/search', { schema: observabilityDocs.search }, searchApi(ctx));
  // The live event stream (docs/http-api.md): every move, as Server-Sent Events.
  app.get('/events', { exposeHeadRoute: false, schema: observabilityDocs.events }, eventStream(ctx));

  // /q/<q>, /q/<q>.txt and /q/<q>.json share one path segment (queue names never contain a dot).
  app.get('/q/:q', { schema: statusDocs.queueSegment }, (req: FastifyRequest, reply: FastifyReply) => {
    const seg = pathParam(req, 'q');
    if (seg.endsWith('.json')) return status.queueStatus(req, reply, seg.slice(0, -5), 'json');
    if (seg.endsWith('.txt')) return status.queueStatus(req, reply, seg.slice(0, -4), 'txt');
    return showQueue(req, reply, seg);
  });
  app.get('/q/:q/done.json', { schema: statusDocs.doneJson }, status.doneJson);
  // The queue page's message list as JSON, paged and filtered by the queue.
  app.get('/q/:q/messages.json', { schema: listDocs.messagesJson }, listApi(ctx).messagesJson);
  const bulk = bulkApi(ctx);
  app.post('/q/:q/bulk', { schema: listDocs.bulk }, bulk.bulk);
  app.get('/q/:q/bulk', { schema: listDocs.bulkPage }, bulk.bulkPage);
  app.get('/q/:q/new_message', { schema: pageDocs.newMessageForm }, forms.newMessage);
  app.post('/q/:q/new_message', { schema: messageDocs.newMessage }, message.newMessage);
  const batch = batchApi(ctx);
  app.post('/q/:q/new_messages', { schema: messageDocs.newMessages, onRequest: batch.answersJson }, batch.newMessages);
  app.post('/q/:q/adminoper', { schema: adminDocs.adminoper }, admin.adminoper);
  app.post('/q/:q/restart', { schema: adminDocs.restart }, admin.restart);
  app.post('/q/:q/ack_errs', { schema: adminDocs.ackErrs }, admin.ackErrs);
  app.post('/q/:q/requeue_errs', { schema: lifecycleDocs.requeueErrs }, lifecycle.requeueErrs);
  app.get('/q/:q/running.json', { schema: lifecycleDocs.runningJson }, lifecycle.runningJson);
  app.get('/q/:q/waiting.json', { schema: lifecycleDocs.waitingJson }, lifecycle.waitingJson);
  // rq-beyond §B15: statistics and failure groups, as JSON and as pages.
  const stats = { ...statsApi(ctx), ...statsPages(ctx) };
  app.get('/q/:q/stats.json', { schema: observabilityDocs.statsJson }, stats.statsJson);
  app.get('/q/:q/failed.json', { schema: observabilityDocs.failedJson }, stats.failedJson);
  app.get('/q/:q/stats', { schema: observabilityDocs.statsPage }, stats.stats);
  app.get('/q/:q/failed', { schema: observabilityDocs.failedPage }, stats.failed);
  app.post('/q/:q/cancel_tagged', { schema: tagDocs.cancelTagged }, tags.cancelTagged);
  app.get('/q/:q/tags.json', { schema: tagDocs.queueTagsJson }, tags.queueTagsJson);
  app.get('/q/:q/tags/:tag', { schema: tagDocs.queueTagged }, tags.queueTagged);
  app.get('/q/:q/config.json', { schema: statusDocs.configFile }, status.configFile);
  app.get('/q/:q/config', { schema: statusDocs.liveConfig }, status.liveConfig);

  // /q/<q>/<id> and /q/<q>/<id>.json likewise (ids contain dots, so only the suffix tells them apart).
  app.get('/q/:q/:id', { schema: messageDocs.messageSegment }, (req: FastifyRequest, reply: FastifyReply) => {
    const seg = pathParam(req, 'id');
    return seg.endsWith('.json') ? message.messageJson(req, reply, seg.slice(0, -5)) : showMessage(req, reply, seg);
  });
  app.get('/q/:q/:id/state.json', { schema: messageDocs.stateJson }, message.stateJson);
  app.post('/q/:q/:id/clone', { schema: messageDocs.clone }, message.clone);
  app.post('/q/:q/:id/run_now', { schema: messageDocs.runNow }, message.runNow);
  app.post('/q/:q/:id/cancel', { schema: lifecycleDocs.cancel }, (req: FastifyRequest, reply: FastifyReply) => lifecycle.cancel(req, reply));
  app.post('/q/:q/:id/requeue', { schema: lifecycleDocs.requeue }, lifecycle.requeue);
  app.post('/q/:q/:id/priority', { schema: lifecycleDocs.priority }, lifecycle.priority);
  app.post('/q/:q/:id/reschedule', { schema: lifecycleDocs.reschedule }, lifecycle.reschedule);
  app.get('/q/:q/:id/history.json', { schema: lifecycleDocs.historyJson }, lifecycle.historyJson);
  app.post('/q/:q/:id/tags', { schema: tagDocs.tagMessage }, tags.tagMessage);
  app.post('/q/:q/:id/undepend', { schema: dependsLimitsDocs.undepend }, dependsLimits.undepend);
  // Between hosts of a fleet: a message of another host waits on this one, or learns that its dependency here ended.
  app.post('/q/:q/:id/dependents', { schema: dependsLimitsDocs.dependents }, fleetDeps.dependents);
  app.post('/q/:q/:id/resolved', { schema: dependsLimitsDocs.resolved }, fleetDeps.resolved);
  app.post('/q/:q/:id/attach/new', { schema: attachDocs.attachNew }, attach.attachNew);
  app.post('/q/:q/:id/attach/:name', { schema: attachDocs.attachDelete }, attach.attachDelete);
  app.get('/q/:q/:id/log/:file', { schema: attachDocs.logGet }, attach.logGet);
  app.get('/q/:q/:id/log/:file/events', { exposeHeadRoute: false, schema: attachDocs.logEvents }, tailEvents(ctx));
  app.get('/q/:q/:id/attach/:name', { schema: attachDocs.attachGet }, attach.attachGet);
  app.get('/q/:q/:id/tailview/:name', { schema: attachDocs.tailviewAttach }, tail.attach);
  app.get('/q/:q/:id/tailviewlog/:file', { schema: attachDocs.tailviewLog }, tail.log);
  app.post('/q/:q/:id', { schema: messageDocs.messageAction }, message.messageAction);
}
