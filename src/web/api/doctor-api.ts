// GET /doctor.json: every scandir entry and queue that is not running as it should, with the reason and the fix (what `rq doctor` prints).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { webDoctorReport } from '../doctor-data.js';
import type { WebContext } from '../web-context.js';

export function doctorApi(ctx: WebContext) {
  return async function doctorJson(req: FastifyRequest, reply: FastifyReply) {
    ctx.markJson(req);
    const report = await webDoctorReport(ctx);
    return reply.header('Cache-Control', 'no-store').type('application/json; charset=utf-8').send(JSON.stringify(report));
  };
}
