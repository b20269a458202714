// application/json request bodies: fastify's parser (prototype poisoning refused), with refusals that say where the body goes wrong.
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { RqError } from '../errors.js';
import { MAX_FIELDS } from '../message/create-fields.js';
import { describeJsonError } from './json-position.js';
import { infiniteNumber } from './json-numbers.js';

/**
 * An object body of more keys than any route reads (a message's MAX_FIELDS), refused before a route
 * copies it: each copy of half a million keys held the web's event loop for half a second.
 */
function tooManyKeys(value: unknown): RqError | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const n = Object.keys(value).length;
  return n > MAX_FIELDS ? RqError.of('RQ_ERR_BAD_BODY', `a JSON object of at most ${MAX_FIELDS} keys`, `${n} keys`) : null;
}

/** JSON is UTF-8 (RFC 8259 §8.1): bytes that are not would be read as U+FFFD, text its sender never wrote. */
export const notUtf8 = (): RqError => RqError.of('RQ_ERR_BAD_BODY', 'UTF-8 text', 'bytes that are not UTF-8');

/** The body's text, or null when its bytes are not UTF-8. */
export function utf8Body(body: Buffer): string | null {
  return isUtf8(body) ? body.toString('utf8') : null;
}

/**
 * Replaces fastify's JSON body parser by the same parser whose refusals name the fault: an empty
 * body, the line, column and byte of a syntax error, or a `__proto__` / `constructor.prototype`
 * key (fastify answers all three "Body is not valid JSON").
 */
export function installJsonBody(app: FastifyInstance, bodyLimit: number): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (req, body, done) => {
    const text = utf8Body(body as Buffer);
    if (text === null) return done(notUtf8(), undefined);
    if (text.length === 0) return done(RqError.of('RQ_ERR_BAD_BODY', 'a JSON value (Content-Type is application/json)', 'an empty body'), undefined);
    parse(req, text, (err, value) => {
      if (!err) return done(tooManyKeys(value) ?? infiniteNumber(value, 'request body'), value);
      let syntax: string | null = null;
      try {
        JSON.parse(text);
      } catch {
        syntax = describeJsonError(text);
      }
      if (syntax !== null) return done(RqError.of('RQ_ERR_BAD_BODY', 'valid JSON', syntax), undefined);
      done(RqError.of('RQ_ERR_BAD_BODY', 'JSON without a "__proto__" or "constructor": {"prototype": ...} key (prototype poisoning)', 'such a key'), undefined);
    });
  });
}
