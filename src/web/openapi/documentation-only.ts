// Makes the route schemas documentation only: fastify neither validates requests against them nor serializes replies with them.
//
// Why: every parameter check of rq already answers with the error catalogue's exact texts
// (`limit: expected a whole number >= 0, received "x"`, `mesg: expected a JSON object text …`),
// which clients and tests rely on; fastify's validation would answer first, in its own words
// (`querystring/limit must be integer`), and Ajv would coerce or strip values the handlers read.
// A response schema would make fast-json-stringify drop every property it does not name, and the
// classic bodies (`/q/<q>.json` with its line breaks) are exact texts. So the schemas only feed
// @fastify/swagger; the handlers keep doing all the checking, as they did before there was a document.
//
// The other way (`additionalProperties: true` everywhere and no `params`/`querystring`/`body`) would
// leave the document without its parameters, and one schema written too strictly later would change
// behaviour silently. These compilers make that impossible for every route of the scope.
import type { FastifyInstance } from 'fastify';

/** Accepts any value unchanged (fastify keeps the parsed request as it was when a validator returns true). */
const acceptAnything = () => (): true => true;

/** The same text fastify writes for a reply without a schema. */
const plainJson =
  () =>
  (data: unknown): string =>
    JSON.stringify(data);

/** Must run on `scope` before any route with a schema is added to it. */
export function documentationOnlySchemas(scope: FastifyInstance): void {
  scope.setValidatorCompiler(acceptAnything);
  scope.setSerializerCompiler(plainJson);
}
